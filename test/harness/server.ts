/**
 * Spawning `sessiond serve` for process-level tests.
 *
 * Storage: by default the server uses its default engine (jsonl in a fresh
 * temp data dir). With `SESSIOND_TEST_STORAGE=postgres` (or `storage:
 * "postgres"`) every server started here WITHOUT an explicit `--storage`
 * flag runs on PostgreSQL instead: one throwaway cluster per process
 * (`sharedPostgres`: SESSIOND_TEST_PG_URL or initdb + pg_ctl), a fresh
 * database per data dir, passed as `--storage postgres://...`. The data dir
 * names the server: a restart with the same `dataDir` reuses the same
 * database, and `removeDataDir` drops it. `storageOf(server)` tells a test
 * which engine it got (JSONL-specific tests assert the PG equivalent or
 * skip loudly).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createDatabase, sharedPostgres } from "./postgres.js";

/** Root of the repository (tests spawn the same command a user runs). */
export const REPO = resolve(import.meta.dirname, "../..");
export const BIN = join(REPO, "bin/sessiond.js");

export type StorageMode = "jsonl" | "postgres";

function modeFromEnv(v: string | undefined): StorageMode {
  if (v === undefined || v === "" || v === "jsonl") return "jsonl";
  if (v === "postgres" || v === "pg") return "postgres";
  throw new Error(`SESSIOND_TEST_STORAGE must be jsonl or postgres, got "${v}"`);
}

/** The engine servers started here use unless told otherwise (SESSIOND_TEST_STORAGE). */
export const TEST_STORAGE: StorageMode = modeFromEnv(process.env.SESSIOND_TEST_STORAGE);

/** True when the suite runs its servers on PostgreSQL. */
export const ON_POSTGRES = TEST_STORAGE === "postgres";

/** Says loudly that a JSONL-only check does not apply on PostgreSQL. */
export function skipOnPostgres(what: string, why: string): void {
  console.warn(
    `\n*** SKIPPED on PostgreSQL (SESSIOND_TEST_STORAGE=postgres): ${what}: ${why}. Run without SESSIOND_TEST_STORAGE to cover it. ***\n`,
  );
}

/** Database per data dir (resolved path), so that a restart finds its data again. */
const databases = new Map<string, Promise<{ url: string; drop(): Promise<void> }>>();

/** The PostgreSQL URL of the database that belongs to `dataDir` (created on first use). */
export function databaseFor(dataDir: string): Promise<string> {
  const key = resolve(dataDir);
  let db = databases.get(key);
  if (db === undefined) {
    db = sharedPostgres().then((pg) => createDatabase(pg.url, "sessiond_it"));
    databases.set(key, db);
    db.catch(() => databases.delete(key));
  }
  return db.then((d) => d.url);
}

/** Which storage a started server runs on: "jsonl", "memory" or its postgres:// URL. */
export function storageOf(s: { storage: string }): string {
  return s.storage;
}

export interface SessiondProcess {
  /** Base URL, e.g. http://127.0.0.1:41234. */
  url: string;
  port: number;
  dataDir: string;
  /** The --storage it runs on: "jsonl" (the default engine), "memory", or a postgres:// URL. */
  storage: string;
  proc: ChildProcess;
  /** Everything the server wrote to stderr (request logs). */
  stderr(): string;
  /** Everything it wrote to stdout (the "listening on ..., storing ..." line). */
  stdout(): string;
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
  /**
   * The engine when `args` has no `--storage` (default TEST_STORAGE, from
   * SESSIOND_TEST_STORAGE): "postgres" runs on the database of `dataDir`.
   */
  storage?: StorageMode;
  /**
   * Write the server's stdout and stderr to files instead of pipes: for a
   * caller that blocks its event loop for long (spawnSync), during which a
   * pipe nobody reads fills and the server, whose writes to a pipe are
   * synchronous, stops in the middle of a request.
   */
  outputToFiles?: boolean;
}

/** Starts `sessiond serve` as a real process on 127.0.0.1 and waits until it listens. */
export async function startSessiond(opts: StartOptions = {}): Promise<SessiondProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "sessiond-test-"));
  const given = opts.args ?? [];
  const flag = given.findIndex((a) => a === "--storage" || a.startsWith("--storage="));
  let storage: string;
  const extra: string[] = [];
  if (flag >= 0) {
    const a = given[flag] as string;
    storage = a.includes("=") ? a.slice(a.indexOf("=") + 1) : (given[flag + 1] ?? "");
  } else if ((opts.storage ?? TEST_STORAGE) === "postgres") {
    storage = await databaseFor(dataDir);
    extra.push("--storage", storage);
  } else {
    storage = "jsonl";
  }
  const args = [
    BIN,
    "serve",
    "--listen",
    `127.0.0.1:${opts.port ?? 0}`,
    "--data-dir",
    dataDir,
    ...extra,
    ...given,
  ];
  const files = opts.outputToFiles
    ? { out: `${dataDir}.stdout.log`, err: `${dataDir}.stderr.log` }
    : undefined;
  const fds = files && [openSync(files.out, "w"), openSync(files.err, "w")];
  const proc = spawn(process.execPath, args, {
    cwd: REPO,
    stdio: fds === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", fds[0], fds[1]],
    env: opts.env === undefined ? process.env : { ...process.env, ...opts.env },
  });
  if (fds !== undefined) for (const fd of fds) closeSync(fd);
  let out = "";
  let err = "";
  proc.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
    if (err.length > 4_000_000) err = err.slice(-2_000_000);
  });
  /** What the server wrote to `file` so far ("" before it made it). */
  const readOut = (file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  const exited = new Promise<number | null>((done) => proc.once("exit", (code) => done(code)));
  const errText = () => (files === undefined ? err : readOut(files.err));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      fail(
        new Error(
          `sessiond did not start within ${opts.timeoutMs ?? 20000} ms:\n${out}\n${errText()}`,
        ),
      );
    }, opts.timeoutMs ?? 20000);
    const seen = () => {
      const m = /listening on (\S+?),/.exec(out);
      if (m) {
        clearTimeout(timer);
        clearInterval(poll);
        done(m[1] as string);
      }
    };
    proc.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      seen();
    });
    const poll =
      files === undefined
        ? undefined
        : setInterval(() => {
            out = readOut(files.out);
            seen();
          }, 25);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      fail(new Error(`sessiond exited with ${code} before listening:\n${out}\n${errText()}`));
    });
  });
  if (/^postgres(ql)?:\/\//.test(storage) && !/storing postgres/.test(out)) {
    proc.kill("SIGKILL");
    throw new Error(
      `sessiond was given --storage postgres://... but does not say it stores there:\n${out}`,
    );
  }
  const port = Number(new URL(url).port);
  const removeOutputFiles = () => {
    if (files !== undefined) for (const f of [files.out, files.err]) rmSync(f, { force: true });
  };
  return {
    url,
    port,
    dataDir,
    storage,
    proc,
    stderr: errText,
    stdout: () => (files === undefined ? out : readOut(files.out)),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      const code = await exited;
      removeOutputFiles();
      return code;
    },
    async kill9() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await exited;
      removeOutputFiles();
    },
  };
}

/**
 * Removes a temp data dir made by startSessiond, and drops its PostgreSQL
 * database if it had one (the returned promise settles when it is dropped;
 * callers that ignore it leave that to the end of the process).
 */
export function removeDataDir(dir: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  const key = resolve(dir);
  const db = databases.get(key);
  if (db === undefined) return Promise.resolve();
  databases.delete(key);
  const dropped = db.then((d) => d.drop());
  dropped.catch(() => {}); // a cluster already gone has nothing left to drop
  return dropped.catch(() => {});
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
      if (opts.dataDir === undefined) await removeDataDir(local.dataDir);
    },
  };
}
