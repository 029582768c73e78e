import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** Root of the repository (tests spawn the same command a user runs). */
export const REPO = resolve(import.meta.dirname, "../..");
export const BIN = join(REPO, "bin/sessiond.js");

export interface SessiondProcess {
  /** Base URL, e.g. http://127.0.0.1:41234. */
  url: string;
  port: number;
  dataDir: string;
  proc: ChildProcess;
  /** Everything the server wrote to stderr (request logs). */
  stderr(): string;
  /** SIGTERM and wait for exit; resolves to the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill9(): Promise<void>;
}

export interface StartOptions {
  /** Extra flags for `sessiond serve`. */
  args?: string[];
  /** Data dir to reuse (a restart); a fresh temp dir otherwise. */
  dataDir?: string;
  /** Port to bind (0 = any free port). */
  port?: number;
  /** Give up after this long waiting for "listening on". */
  timeoutMs?: number;
  /** Extra environment, e.g. SESSIOND_DEBUG for the reliability battery's negative controls. */
  env?: Record<string, string>;
}

/** Starts `sessiond serve` as a real process on 127.0.0.1 and waits until it listens. */
export async function startSessiond(opts: StartOptions = {}): Promise<SessiondProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "sessiond-test-"));
  const args = [
    BIN,
    "serve",
    "--listen",
    `127.0.0.1:${opts.port ?? 0}`,
    "--data-dir",
    dataDir,
    ...(opts.args ?? []),
  ];
  const proc = spawn(process.execPath, args, {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
    env: opts.env === undefined ? process.env : { ...process.env, ...opts.env },
  });
  let out = "";
  let err = "";
  proc.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
    if (err.length > 4_000_000) err = err.slice(-2_000_000);
  });
  const exited = new Promise<number | null>((done) => proc.once("exit", (code) => done(code)));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      fail(
        new Error(`sessiond did not start within ${opts.timeoutMs ?? 20000} ms:\n${out}\n${err}`),
      );
    }, opts.timeoutMs ?? 20000);
    proc.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+?),/.exec(out);
      if (m) {
        clearTimeout(timer);
        done(m[1] as string);
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`sessiond exited with ${code} before listening:\n${out}\n${err}`));
    });
  });
  const port = Number(new URL(url).port);
  return {
    url,
    port,
    dataDir,
    proc,
    stderr: () => err,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      return exited;
    },
    async kill9() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await exited;
    },
  };
}

/** Removes a temp data dir made by startSessiond. */
export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The server under test: an external one when SESSIOND_URL is set (the
 * compose `integration` service), else a freshly spawned process.
 * `external` tells tests that need to restart the server to skip loudly.
 */
export async function serverUnderTest(opts: StartOptions = {}): Promise<{
  url: string;
  external: boolean;
  local?: SessiondProcess;
  close(): Promise<void>;
}> {
  const external = process.env.SESSIOND_URL;
  if (external) return { url: external, external: true, close: async () => {} };
  const local = await startSessiond(opts);
  return {
    url: local.url,
    external: false,
    local,
    async close() {
      await local.stop();
      if (opts.dataDir === undefined) removeDataDir(local.dataDir);
    },
  };
}
