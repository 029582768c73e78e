import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * Encryption at rest through the real command (issue 41): `sessiond serve
 * --keyring --encrypt-workspaces` seals a workspace's sessions on disk,
 * the CLI reads and searches them back, `sessiond keys rotate` / `rewrap`
 * move a session to a new key version without rewriting its log, and a
 * restart reads everything. Flags that do not go together are refused.
 */

const MARKER = "MARKER-DELTA-5b1e";
let dataDir: string;
let keyring: string;
let server: SessiondProcess | undefined;

const serve = (extra: string[] = []) =>
  startSessiond({
    dataDir,
    args: ["--storage", "jsonl", "--keyring", keyring, "--encrypt-workspaces", "secret", ...extra],
  });

const cli = (args: string[]) =>
  runCli([...args, "--server", (server as SessiondProcess).url, "--workspace", "secret"]);

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map((n) => join(dir, String(n)))
    .filter((f) => statSync(f).isFile());
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "sessiond-enc-"));
  keyring = join(mkdtempSync(join(tmpdir(), "sessiond-keyring-")), "keyring.json");
  server = await serve();
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await removeDataDir(dataDir);
});

describe("sessiond serve --keyring --encrypt-workspaces", () => {
  it("seals on disk, reads and searches back, rotates and rewraps, and reads after a restart", async () => {
    expect((await cli(["new", "--id", "s1", "--title", "clear title"])).code).toBe(0);
    const appended = await cli(["append", "s1", `the code is ${MARKER}`]);
    expect(appended.stderr).toBe("");
    expect((await cli(["show", "s1"])).stdout).toContain(MARKER);
    expect((await cli(["search", "code", MARKER])).stdout).toContain("s1");

    const files = filesUnder(join(dataDir, "secret"));
    expect(files.some((f) => f.endsWith("s1.key"))).toBe(true);
    for (const f of files) expect(readFileSync(f).includes(MARKER)).toBe(false);
    expect((statSync(keyring).mode & 0o777).toString(8)).toBe("600");

    const rotated = await runCli(["keys", "rotate", "--keyring", keyring, "--workspace", "secret"]);
    expect(rotated.stdout).toBe("secret: version 2 is current\n");
    const log = readFileSync(join(dataDir, "secret", "sessions", "s1.jsonl"));
    const rewrap = await runCli([
      "keys",
      "rewrap",
      "--keyring",
      keyring,
      "--data-dir",
      dataDir,
      "--workspace",
      "secret",
    ]);
    expect(rewrap.stdout).toBe("s1: version 1 -> 2\n");
    expect(readFileSync(join(dataDir, "secret", "sessions", "s1.jsonl"))).toEqual(log);
    const listed = await runCli(["keys", "list", "--keyring", keyring]);
    expect(listed.stdout).toBe("secret\tcurrent 2\tversions 1,2\n");

    await server?.stop();
    server = await serve();
    expect((await cli(["show", "s1"])).stdout).toContain(MARKER);
  }, 60_000);

  it("sessiond copy opens sealed sessions with --keyring and seals the copies with --encrypt-all", async () => {
    const sealedCopy = mkdtempSync(join(tmpdir(), "sessiond-enc-copy-"));
    const clearCopy = mkdtempSync(join(tmpdir(), "sessiond-clear-copy-"));
    try {
      const base = ["copy", "--from", dataDir, "--keyring", keyring, "--workspace", "secret"];
      const sealed = await runCli([...base, "--to", sealedCopy, "--encrypt-all"]);
      expect(sealed.code).toBe(0);
      const sealedFiles = filesUnder(sealedCopy);
      expect(sealedFiles.some((f) => f.endsWith("s1.key"))).toBe(true);
      for (const f of sealedFiles) expect(readFileSync(f).includes(MARKER)).toBe(false);
      // Without --encrypt-*, the copy of a sealed session is in clear (its content opened).
      const clear = await runCli([...base, "--to", clearCopy]);
      expect(clear.code).toBe(0);
      const log = readFileSync(join(clearCopy, "secret", "sessions", "s1.jsonl"));
      expect(log.includes(MARKER)).toBe(true);
      // Without the keyring a sealed source session is not copied, and says why.
      const noKeys = await runCli(["copy", "--from", sealedCopy, "--to", `${clearCopy}-2`]);
      expect(noKeys.code).toBe(1);
      expect(noKeys.stdout + noKeys.stderr).toContain("no keyring is configured");
    } finally {
      await removeDataDir(sealedCopy);
      await removeDataDir(clearCopy);
      await removeDataDir(`${clearCopy}-2`);
    }
  }, 60_000);

  it("refuses --encrypt-all without --keyring, and a keyring others can read", async () => {
    const noKeyring = await runCli(["serve", "--data-dir", dataDir, "--encrypt-all"]);
    expect(noKeyring.code).toBe(2);
    expect(noKeyring.stderr).toContain(
      "--encrypt-workspaces and --encrypt-all need --keyring FILE",
    );
    chmodSync(keyring, 0o644);
    try {
      const open = await runCli([
        "serve",
        "--data-dir",
        dataDir,
        "--listen",
        "127.0.0.1:0",
        "--keyring",
        keyring,
      ]);
      expect(open.code).toBe(1);
      expect(open.stderr).toContain(
        `--keyring: keyring ${keyring} is readable or writable by group or others (mode 0644)`,
      );
    } finally {
      chmodSync(keyring, 0o600);
    }
  }, 60_000);
});
