import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { JsonlEngine } from "../../src/storage/jsonl/index.js";
import { runCli as sessiond } from "../harness/cli.js";
import { BIN, REPO } from "../harness/server.js";
import { rootEntry } from "../support/fixtures.js";
import { IS_ROOT } from "../support/jsonl/unwritable-dir.js";

/**
 * A data dir the JSONL engine cannot use stops the command at once with one
 * line on stderr: `serve` never says "listening" (clients would otherwise
 * retry UNAVAILABLE creates forever), `fsck` says what is wrong with it,
 * `copy` fails once instead of once per session.
 */

const base = mkdtempSync(join(tmpdir(), "sessiond-datadir-cli-"));
// Another user (below) must reach the directories made here.
chmodSync(base, 0o755);
afterAll(() => {
  chmodSync(base, 0o755);
  rmSync(base, { recursive: true, force: true });
});

let n = 0;
function aFile(): string {
  const file = join(base, `file-${++n}`);
  writeFileSync(file, "not a directory\n");
  return file;
}

interface ServeResult {
  code: number | null;
  stderr: string;
  /** True when the server printed "listening" (it was then stopped). */
  listened: boolean;
}

/**
 * Runs `sessiond serve --listen 127.0.0.1:0 ARGS` until it exits; a server
 * that starts listening is stopped and reported. `uid` runs it as that user.
 */
function serve(args: string[], uid?: number): Promise<ServeResult> {
  return new Promise((done) => {
    const proc = spawn(process.execPath, [BIN, "serve", "--listen", "127.0.0.1:0", ...args], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1", SESSIOND_DEBUG: "" },
      ...(uid === undefined ? {} : { uid, gid: uid }),
    });
    let stdout = "";
    let stderr = "";
    let listened = false;
    proc.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (!listened && stdout.includes("listening")) {
        listened = true;
        proc.kill("SIGTERM");
      }
    });
    proc.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    proc.once("exit", (code) => done({ code, stderr, listened }));
  });
}

/** The lines of a stream's output. */
const lines = (s: string) => s.split("\n").filter((l) => l !== "");

describe("a data dir the engine cannot use", () => {
  it("serve refuses a data dir that is a file: exit 1, one stderr line, never listening", async () => {
    const file = aFile();
    const r = await serve(["--data-dir", file]);
    expect(r.listened).toBe(false);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([`sessiond: data directory ${file} is not a directory`]);
  });

  it("serve refuses a data dir below a file (ENOTDIR): exit 1, one stderr line naming the file", async () => {
    const file = aFile();
    const r = await serve(["--data-dir", join(file, "data")]);
    expect(r.listened).toBe(false);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `sessiond: data directory ${join(file, "data")} cannot be created: ${file} is not a directory`,
    ]);
  });

  it("serve refuses a data dir it cannot write to (EACCES): exit 1, one stderr line, never listening", async () => {
    const dir = join(base, `readonly-${++n}`);
    mkdirSync(dir);
    chmodSync(dir, 0o555);
    // Root ignores permission bits: the server runs as "nobody", as a service user would.
    const r = await serve(["--data-dir", dir], IS_ROOT ? 65534 : undefined);
    expect(r.listened).toBe(false);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `sessiond: data directory ${dir} cannot be written to: permission denied (EACCES)`,
    ]);
  });

  it("fsck --data-dir <a file> says it is not a directory, not that it does not exist", async () => {
    const file = aFile();
    const r = await sessiond(["fsck", "--data-dir", file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual([`sessiond: data directory ${file} is not a directory`]);
  });

  it("copy --to <a file> fails once with one line instead of FAILED (ENOTDIR) per session", async () => {
    const source = join(base, `source-${++n}`);
    const engine = new JsonlEngine({ dataDir: source });
    for (let i = 0; i < 20; i++) {
      const key = { workspace: "default", sessionId: `s${i}` };
      await engine.create(key, [rootEntry(key.sessionId)]);
    }
    await engine.close();
    const target = aFile();
    const r = await sessiond(["copy", "--from", source, "--to", target]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual([
      `sessiond: --to: data directory ${target} is not a directory`,
    ]);
  });

  it("copy --from <a file> says it is not a directory, not that it does not exist", async () => {
    const file = aFile();
    const r = await sessiond(["copy", "--from", file, "--to", join(base, `target-${++n}`)]);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `sessiond: --from: data directory ${file} is not a directory`,
    ]);
  });
});
