/**
 * Replicas of `sessiond serve --storage postgres://...` on one database, for
 * T9: a throwaway PostgreSQL cluster (or SESSIOND_TEST_PG_URL) and a fresh
 * database, replicas that keep their port across restarts (clients and
 * watchers reconnect to the same URL), SIGKILL / SIGTERM restarts, and the
 * replica's LISTEN connection found in pg_stat_activity (application_name
 * `sessiond-listen`, src/storage/postgres/notify.ts) by matching its client
 * port against the replica process's own sockets (/proc), so that
 * pg_terminate_backend hits exactly that replica's LISTEN.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import postgres from "postgres";
import {
  createDatabase,
  type PgServer,
  sharedPostgres,
  withDatabase,
} from "../../harness/postgres.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../../harness/server.js";

export interface PgDatabase {
  server: PgServer;
  url: string;
  drop(): Promise<void>;
}

/** The cluster of this process and a fresh database on it. */
export async function pgDatabase(): Promise<PgDatabase> {
  const server = await sharedPostgres();
  const db = await createDatabase(server.url, "sessiond_t9");
  return { server, url: db.url, drop: db.drop };
}

export class Replica {
  private proc: SessiondProcess | undefined;
  private port = 0;
  starts = 0;

  constructor(
    readonly name: string,
    private readonly dbUrl: string,
    private readonly extraArgs: readonly string[] = [],
    /** Extra environment (SESSIOND_DEBUG for a negative control). */
    private readonly env?: Record<string, string>,
  ) {}

  get url(): string {
    if (this.proc === undefined) throw new Error(`replica ${this.name} never started`);
    return this.proc.url;
  }

  get pid(): number | undefined {
    return this.proc?.proc.pid;
  }

  get running(): boolean {
    const p = this.proc?.proc;
    return p !== undefined && p.exitCode === null && p.signalCode === null;
  }

  stderrTail(chars = 2000): string {
    return this.proc?.stderr().slice(-chars) ?? "";
  }

  /** Starts it (again, on the same port and data dir after the first start). */
  async start(): Promise<void> {
    const prev = this.proc;
    this.proc = await startSessiond({
      port: this.port,
      dataDir: prev?.dataDir,
      args: ["--storage", this.dbUrl, ...this.extraArgs],
      timeoutMs: 60_000,
      ...(this.env === undefined ? {} : { env: this.env }),
    });
    this.port = this.proc.port;
    this.starts++;
  }

  /** SIGKILL, wait for the exit. */
  async kill9(): Promise<void> {
    await this.proc?.kill9();
  }

  /** SIGTERM, wait for the exit; the exit code (0 is the only right one). */
  async sigterm(): Promise<number | null> {
    return (await this.proc?.stop()) ?? null;
  }

  /** Stops it for good (SIGTERM, SIGKILL after `graceMs`) and removes its (unused) data dir. */
  async close(graceMs = 15_000): Promise<void> {
    const p = this.proc;
    if (p === undefined) return;
    if (this.running) {
      const timer = setTimeout(() => void p.kill9(), graceMs);
      await p.stop();
      clearTimeout(timer);
    }
    removeDataDir(p.dataDir);
  }

  /** Local TCP ports of this replica's connections to 127.0.0.1:`pgPort`. */
  pgClientPorts(pgPort: number): Set<number> {
    const pid = this.pid;
    const ports = new Set<number>();
    if (pid === undefined || !this.running) return ports;
    const inodes = new Set<string>();
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
          if (m) inodes.add(m[1] as string);
        } catch {
          // fd closed meanwhile
        }
      }
      for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
        let text: string;
        try {
          text = readFileSync(table, "utf8");
        } catch {
          continue;
        }
        for (const line of text.split("\n").slice(1)) {
          const f = line.trim().split(/\s+/);
          if (f.length < 10) continue;
          const local = f[1] as string;
          const remote = f[2] as string;
          const inode = f[9] as string;
          if (!inodes.has(inode)) continue;
          const rport = Number.parseInt(remote.slice(remote.lastIndexOf(":") + 1), 16);
          if (rport !== pgPort) continue;
          ports.add(Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16));
        }
      }
    } catch {
      // no /proc (not Linux): nothing found
    }
    return ports;
  }
}

export interface ListenBackend {
  pid: number;
  clientPort: number;
  query: string;
}

/**
 * An admin connection to the cluster of `dbUrl`, through its `postgres`
 * database: it works while `dbUrl`'s database refuses connections.
 */
function admin(dbUrl: string): postgres.Sql {
  return postgres(withDatabase(dbUrl, "postgres"), {
    max: 1,
    onnotice: () => {},
    connection: { application_name: "sessiond-t9-admin" },
  });
}

function dbName(dbUrl: string): string {
  return decodeURIComponent(new URL(dbUrl).pathname.slice(1));
}

/** The LISTEN connections (application_name sessiond-listen) to the database of `dbUrl`. */
export async function listenBackends(dbUrl: string): Promise<ListenBackend[]> {
  const sql = admin(dbUrl);
  try {
    const rows = await sql<{ pid: number; client_port: number | null; query: string }[]>`
      SELECT pid, client_port, query FROM pg_stat_activity
      WHERE datname = ${dbName(dbUrl)} AND application_name = 'sessiond-listen'`;
    return rows.map((r) => ({ pid: r.pid, clientPort: r.client_port ?? -1, query: r.query }));
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** The LISTEN backend of one replica (by its client port), if it has one now. */
export async function listenBackendOf(
  replica: Replica,
  dbUrl: string,
): Promise<ListenBackend | undefined> {
  const ports = replica.pgClientPorts(Number(new URL(dbUrl).port || 5432));
  return (await listenBackends(dbUrl)).find((b) => ports.has(b.clientPort));
}

/** pg_terminate_backend(pid); true when a backend was signalled. */
export async function terminate(dbUrl: string, pid: number): Promise<boolean> {
  const sql = admin(dbUrl);
  try {
    const [row] = await sql<{ ok: boolean }[]>`SELECT pg_terminate_backend(${pid}) AS ok`;
    return row?.ok === true;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * ALLOW_CONNECTIONS of the database of `dbUrl` (superusers included): with
 * false, a terminated LISTEN connection cannot come back until it is true
 * again (its first re-LISTEN attempts fail). Open connections stay.
 */
export async function allowConnections(dbUrl: string, allow: boolean): Promise<void> {
  const sql = admin(dbUrl);
  try {
    await sql.unsafe(
      `ALTER DATABASE "${dbName(dbUrl).replaceAll('"', '""')}" ALLOW_CONNECTIONS ${allow ? "true" : "false"}`,
    );
  } finally {
    await sql.end({ timeout: 1 });
  }
}
