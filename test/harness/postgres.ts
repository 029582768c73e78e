/**
 * A throwaway PostgreSQL server for tests.
 *
 * `startPostgres()` uses the server named by `SESSIOND_TEST_PG_URL` when set;
 * otherwise it runs `initdb` + `pg_ctl start` in a fresh temp dir on a free
 * port bound to 127.0.0.1 (as the `postgres` user when running as root:
 * initdb refuses root), and `stop()` runs `pg_ctl stop -m fast` and removes
 * the dir. A process exit with the cluster still running stops it too.
 *
 * When the binaries are missing it throws in CI (`CI=true`: PostgreSQL tests
 * must run there) and returns undefined elsewhere, so that a test file can
 * skip loudly (see `pgSkipReason`).
 *
 * `createDatabase(url)` makes a database with a random name on that server
 * (one per test file, for isolation) and returns its URL and a drop function.
 *
 * `sharedPostgres()` is one server per process (a vitest test file, a
 * reliability script), started on first use and stopped when the process
 * exits (or, when ended by a signal, soon after: a detached watchdog).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import postgres from "postgres";

const run = promisify(execFile);

export interface PgServer {
  /** postgres://user@127.0.0.1:port/postgres (or SESSIOND_TEST_PG_URL). */
  url: string;
  stop(): Promise<void>;
}

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export function pgSkipReason(): string | undefined {
  if (process.env.SESSIOND_TEST_PG_URL) return undefined;
  return findBinary("initdb") === undefined || findBinary("pg_ctl") === undefined
    ? "PostgreSQL binaries (initdb, pg_ctl) not found on PATH nor in /usr/lib/postgresql/*/bin, and SESSIOND_TEST_PG_URL not set"
    : undefined;
}

/**
 * Debian's postgresql-15 puts initdb and pg_ctl in /usr/lib/postgresql/15/bin,
 * off PATH: when they are not on PATH, the newest such directory joins it (for
 * this process and the processes it starts).
 */
function addDebianPgBinToPath(): void {
  if (findBinary("initdb") !== undefined) return;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin/initdb")))
    .sort((a, b) => Number(b) - Number(a));
  if (versions[0] !== undefined) {
    process.env.PATH = `${join(root, versions[0], "bin")}:${process.env.PATH ?? ""}`;
  }
}
addDebianPgBinToPath();

function findBinary(name: string): string | undefined {
  try {
    return (
      execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim() || undefined
    );
  } catch {
    return undefined;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Runs a PostgreSQL binary as the postgres user when we are root (initdb refuses root). */
function asPostgres(argv: string[]): [string, string[]] {
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  return root ? ["runuser", ["-u", "postgres", "--", ...argv]] : [argv[0] as string, argv.slice(1)];
}

function idOf(flag: "-u" | "-g"): number {
  return Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
}

/** Starts a throwaway cluster (or uses SESSIOND_TEST_PG_URL); undefined when PostgreSQL is unavailable outside CI. */
export async function startPostgres(): Promise<PgServer | undefined> {
  const given = process.env.SESSIOND_TEST_PG_URL;
  if (given) return { url: given, stop: async () => {} };
  const reason = pgSkipReason();
  if (reason !== undefined) {
    if (process.env.CI === "true") {
      throw new Error(`${reason}: PostgreSQL tests must run in CI`);
    }
    return undefined;
  }

  const dir = mkdtempSync(join(tmpdir(), "sessiond-pg-"));
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  if (root) {
    chownSync(dir, idOf("-u"), idOf("-g"));
    chmodSync(dir, 0o700);
  }
  const pgdata = join(dir, "data");
  let port = 0;
  let started = false;
  const stopSync = () => {
    if (!started) return;
    started = false;
    try {
      const [cmd, args] = asPostgres(["pg_ctl", "-D", pgdata, "-m", "immediate", "-w", "stop"]);
      execFileSync(cmd, args, { stdio: "ignore" });
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
    stopWatchdog(watchdog);
  };
  process.once("exit", stopSync);
  // A test runner may end this process without an "exit" event (vitest ends
  // its workers with a signal): a detached watchdog stops the cluster and
  // removes its dir once this process is gone.
  const watchdog = startWatchdog(pgdata, dir);
  try {
    let [cmd, args] = asPostgres([
      "initdb",
      "-D",
      pgdata,
      "-U",
      "postgres",
      "--auth=trust",
      "--no-sync",
      "--encoding=UTF8",
      "--locale=C",
    ]);
    await run(cmd, args);
    // The port is free when picked and may be taken by another test's server
    // before the postmaster binds it (CI saw one "could not start server"
    // among 200 files running in parallel): a failed start is tried again on
    // another port, and the last failure carries the server's log.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const log = join(dir, `log-${attempt}`);
      [cmd, args] = asPostgres([
        "pg_ctl",
        "-D",
        pgdata,
        "-o",
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
        "-l",
        log,
        "-w",
        "-t",
        "30",
        "start",
      ]);
      try {
        await run(cmd, args);
        break;
      } catch (err) {
        const text = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "(no log)";
        if (attempt >= 3) {
          throw new Error(`${(err as Error).message}\nserver log:\n${text}`);
        }
        process.stderr.write(
          `PostgreSQL did not start on port ${port} (attempt ${attempt}); trying another port. Its log:\n${text}\n`,
        );
      }
    }
    started = true;
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    process.removeListener("exit", stopSync);
    stopWatchdog(watchdog);
    throw err;
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitForConnections(url);
  return {
    url,
    stop: async () => {
      process.removeListener("exit", stopSync);
      stopWatchdog(watchdog);
      if (!started) return;
      started = false;
      const [cmd, args] = asPostgres(["pg_ctl", "-D", pgdata, "-m", "fast", "-w", "stop"]);
      try {
        await run(cmd, args);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * A detached shell that polls this process and, once it is gone, stops the
 * cluster (`pg_ctl stop -m immediate`) and removes its dir. Killed (by pid)
 * by a normal stop.
 */
function startWatchdog(pgdata: string, dir: string): ChildProcess | undefined {
  const [cmd, args] = asPostgres(["pg_ctl", "-D", pgdata, "-m", "immediate", "-w", "stop"]);
  const q = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${[cmd, ...args].map(q).join(" ")} >/dev/null 2>&1; rm -rf ${q(dir)}`;
  try {
    const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
    return child;
  } catch {
    return undefined;
  }
}

function stopWatchdog(child: ChildProcess | undefined): void {
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

async function waitForConnections(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      await sql`SELECT 1`;
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
}

/** A database URL with `db` as its database name. */
export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/** Creates a database with a random name; `drop` removes it (terminating its connections). */
export async function createDatabase(
  serverUrl: string,
  prefix = "sessiond_test",
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end({ timeout: 1 });
  }
  return {
    url: withDatabase(serverUrl, name),
    name,
    drop: async () => {
      const a = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end({ timeout: 1 });
      }
    },
  };
}

let shared: Promise<PgServer> | undefined;

/**
 * One PostgreSQL server for this whole process (SESSIOND_TEST_PG_URL, or a
 * throwaway cluster started on first use; the exit hook of `startPostgres`
 * stops it). Unlike `startPostgres` it never returns undefined: a caller
 * that asked for PostgreSQL fails loudly when there is none.
 */
export function sharedPostgres(): Promise<PgServer> {
  shared ??= startPostgres().then((pg) => {
    if (pg === undefined) {
      throw new Error(
        `PostgreSQL was asked for (SESSIOND_TEST_STORAGE=postgres or a PostgreSQL test) but is unavailable: ${pgSkipReason()}`,
      );
    }
    const self = shared;
    return {
      url: pg.url,
      stop: async () => {
        if (shared === self) shared = undefined;
        await pg.stop();
      },
    };
  });
  shared.catch(() => {
    shared = undefined; // a later call may try again
  });
  return shared;
}
