/**
 * Shared pieces of the PostgreSQL rows (scenario 10) and their pg-* client
 * scripts: the bare baseline's table, the listing query, driver options
 * matching the engine's pool, and the cluster's durability settings.
 */
import postgres from "postgres";

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
