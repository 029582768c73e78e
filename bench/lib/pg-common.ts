/**
 * Shared pieces of the PostgreSQL rows (scenario 10) and their pg-* client
 * scripts: the bare baseline's table, the listing query, driver options
 * matching the engine's pool, and the cluster's durability settings.
 */
import postgres from "postgres";
import { pgSkipReason, startPostgres } from "../../test/harness/postgres.js";
import type { BenchContext } from "./context.js";
import { runClient, type ServerProcess, startSessiond } from "./procs.js";
import type { Row } from "./row.js";

/** Connections in sessiond's pool (`--pg-pool-size`) and in the bare baseline's pool. */
export const POOL = 10;

/** The bare baseline's table: the columns and indexes of sessiond_entries (no FK). */
export const BARE_TABLE = "bench_bare_entries";

/** The bare baseline's NOTIFY channel. */
export const BARE_CHANNEL = "bench_bare_events";

export const BARE_COLUMNS = [
  "workspace",
  "session_id",
  "seq",
  "id",
  "parent_id",
  "kind",
  "payload",
] as const;

/** A postgres.js instance with the engine's pool options (see PostgresEngine's constructor). */
export function connect(url: string, max: number, name: string): postgres.Sql {
  return postgres(url, {
    max,
    connect_timeout: 5,
    idle_timeout: 60,
    fetch_types: false,
    onnotice: () => {},
    connection: { application_name: name },
  });
}

/** Settings that decide whether a COMMIT is durable, as the cluster has them. */
export interface Durability {
  fsync: string;
  synchronous_commit: string;
  wal_sync_method: string;
  full_page_writes: string;
  /** fsync on and synchronous_commit not off. */
  ok: boolean;
}

export async function durabilityOf(sql: postgres.Sql): Promise<Durability> {
  const rows = await sql<{ name: string; setting: string }[]>`
    SELECT name, setting FROM pg_settings
    WHERE name IN ('fsync', 'synchronous_commit', 'wal_sync_method', 'full_page_writes')`;
  const s = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  const d = {
    fsync: s.fsync ?? "?",
    synchronous_commit: s.synchronous_commit ?? "?",
    wal_sync_method: s.wal_sync_method ?? "?",
    full_page_writes: s.full_page_writes ?? "?",
  };
  return { ...d, ok: d.fsync === "on" && d.synchronous_commit !== "off" };
}

/**
 * Runs a scenario's PostgreSQL rows on a throwaway cluster (stopped after).
 * Without PostgreSQL binaries (and no SESSIOND_TEST_PG_URL) one SKIPPED row
 * and a loud log instead; with CI=true the start throws: the rows must run there.
 */
export async function withPostgres(
  ctx: BenchContext,
  id: string,
  run: (serverUrl: string) => Promise<Row[]>,
): Promise<Row[]> {
  let pg: Awaited<ReturnType<typeof startPostgres>>;
  try {
    pg = await startPostgres();
  } catch (err) {
    throw new Error(`PostgreSQL could not start: ${String(err)}`);
  }
  if (pg === undefined) {
    const reason = pgSkipReason() ?? "PostgreSQL unavailable";
    ctx.log("!".repeat(78));
    ctx.log(`!!! SCENARIO ${id} POSTGRESQL ROWS SKIPPED: ${reason}`);
    ctx.log("!!! install PostgreSQL 15 (initdb, pg_ctl) or set SESSIOND_TEST_PG_URL");
    ctx.log("!".repeat(78));
    return [
      {
        id,
        scenario: `PostgreSQL rows SKIPPED (${reason})`,
        unit: "-",
        sessiond: Number.NaN,
        baseline: Number.NaN,
        baselineName: "-",
        ratio: Number.NaN,
        target: "SKIPPED: not measured",
        pass: false,
        details: { skipped: reason },
      },
    ];
  }
  try {
    return await run(pg.url);
  } finally {
    await pg.stop();
  }
}

/** `sessiond serve --storage <url>` with the bench's pool size. */
export function startPgSessiond(url: string): Promise<ServerProcess> {
  return startSessiond(["--storage", url, "--pg-pool-size", String(POOL)]);
}

/** What clients/pg-load.ts answers. */
export interface PgLoad {
  sessions: number;
  entries: number;
  ms: number;
  newest: string;
}

/**
 * Loads generated sessions into the database at `url` through the engine
 * (clients/pg-load.ts, `args` as it takes them), then gathers the planner
 * statistics, as autovacuum would within a minute of a bulk load: without
 * them the fresh tables get plans that cost sessiond and the bare queries
 * alike hundreds of ms.
 */
export async function loadSessions(
  ctx: BenchContext,
  url: string,
  args: Record<string, unknown>,
): Promise<PgLoad> {
  const load = await runClient<PgLoad>("clients/pg-load.ts", { ...args, url });
  ctx.log(`${load.sessions} sessions, ${load.entries} entries loaded in ${load.ms.toFixed(0)} ms`);
  const admin = connect(url, 1, "bench-admin");
  try {
    await admin`ANALYZE`;
  } finally {
    await admin.end({ timeout: 1 });
  }
  return load;
}
