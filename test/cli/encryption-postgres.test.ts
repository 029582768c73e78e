import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../harness/cli.js";
import { pgSkipReason } from "../harness/postgres.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * Encryption at rest on PostgreSQL through the real command (issue 41):
 * `sessiond serve --storage postgres://... --keyring --encrypt-workspaces`
 * seals the workspace's sessions in the database (a `pg_dump --data-only`
 * holds no content of them), the CLI reads and searches them back, and
 * erasing one destroys its key; memory storage refuses --keyring.
 */

const MARKER = "MARKER-PGSEAL-7c2f";
const skip = pgSkipReason();
if (skip !== undefined) console.warn(`\n*** encryption-postgres.test.ts SKIPPED: ${skip} ***\n`);

let server: SessiondProcess | undefined;
const dataDir = mkdtempSync(join(tmpdir(), "sessiond-pgenc-"));
const keyring = join(mkdtempSync(join(tmpdir(), "sessiond-pgkeyring-")), "keyring.json");

afterAll(async () => {
  await server?.stop();
  await removeDataDir(dataDir);
});

describe.skipIf(skip !== undefined)("sessiond serve --storage postgres --keyring", () => {
  it("seals a workspace's sessions in the database, reads and searches them back, erases by destroying the key", async () => {
    server = await startSessiond({
      dataDir,
      storage: "postgres",
      args: ["--keyring", keyring, "--encrypt-workspaces", "secret"],
    });
    const url = server.url;
    const cli = (args: string[]) => runCli([...args, "--server", url, "--workspace", "secret"]);
    expect((await cli(["new", "--id", "p1", "--title", "clear title"])).code).toBe(0);
    const appended = await cli(["append", "p1", `the code is ${MARKER}`]);
    expect(appended.stderr).toBe("");
    expect((await cli(["show", "p1"])).stdout).toContain(MARKER);
    expect((await cli(["search", MARKER])).stdout).toContain("p1");
    const dump = async () =>
      (await promisify(execFile)("pg_dump", ["--data-only", server?.storage ?? ""])).stdout;
    const sealed = await dump();
    expect(sealed).not.toContain(MARKER);
    expect(sealed).toContain("clear title");

    const erased = await cli(["erase", "p1", "--by", "dpo", "--why", "test"]);
    expect(erased.stderr).toBe("");
    expect((await cli(["show", "p1"])).stdout).not.toContain(MARKER);
    expect((await cli(["search", MARKER])).stdout).not.toContain("p1");
  }, 60_000);

  it("memory storage refuses --keyring, naming where encryption works", async () => {
    const r = await runCli(["serve", "--storage", "memory", "--keyring", keyring]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("encryption at rest is supported on jsonl and postgres storage");
  });
});
