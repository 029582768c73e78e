import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `sessiond seal` through the real command, while a server started with
 * the keyring serves the data dir: the plaintext sessions of a workspace
 * are sealed on disk, the server reads them back as before, and a second
 * run changes nothing.
 */

const MARKER = "MARKER-SEAL-CLI-4c2e";
let dataDir: string;
let keyring: string;
let server: SessiondProcess | undefined;

const cli = (args: string[]) =>
  runCli([...args, "--server", (server as SessiondProcess).url, "--workspace", "old"]);
const seal = (ids: string[] = []) =>
  runCli(["seal", "--keyring", keyring, "--data-dir", dataDir, "--workspace", "old", ...ids]);

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map((n) => join(dir, String(n)))
    .filter((f) => statSync(f).isFile());
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "sessiond-seal-"));
  keyring = join(mkdtempSync(join(tmpdir(), "sessiond-keyring-")), "keyring.json");
  // The keyring opens sealed sessions; "old" is not sealed for new sessions.
  server = await startSessiond({
    dataDir,
    args: ["--storage", "jsonl", "--keyring", keyring, "--encrypt-workspaces", "other"],
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await removeDataDir(dataDir);
});

describe("sessiond seal", () => {
  it("seals a workspace's plaintext sessions under a running server, which reads them back; twice is a no-op", async () => {
    for (const id of ["a1", "b2"]) {
      expect((await cli(["new", "--id", id, "--title", "clear title"])).code).toBe(0);
      expect((await cli(["append", id, `the code is ${MARKER}`])).code).toBe(0);
    }
    const before = (await cli(["show", "a1"])).stdout;
    expect(before).toContain(MARKER);
    const files = () => filesUnder(join(dataDir, "old"));
    expect(files().some((f) => readFileSync(f).includes(MARKER))).toBe(true);

    const first = await seal();
    expect(first.stderr).toBe("");
    expect(first.stdout).toBe("a1: sealed (1 record)\nb2: sealed (1 record)\nblobs: 0 sealed\n");
    expect(first.code).toBe(0);
    for (const f of files()) expect(readFileSync(f).includes(MARKER)).toBe(false);
    expect(files().filter((f) => f.endsWith(".key")).length).toBe(2);

    expect((await cli(["show", "a1"])).stdout).toBe(before);
    // The server appends to the sealed session (after one retried UNAVAILABLE) under its key.
    expect((await cli(["append", "a1", `later ${MARKER}-2`])).code).toBe(0);
    for (const f of files()) expect(readFileSync(f).includes(`${MARKER}-2`)).toBe(false);
    expect((await cli(["show", "a1"])).stdout).toContain(`${MARKER}-2`);

    const again = await seal();
    expect(again.stdout).toBe("a1: sealed already\nb2: sealed already\nblobs: 0 sealed\n");
    const unknown = await seal(["nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain('nope: session "nope" not found in workspace "old"');
  }, 60_000);
});
