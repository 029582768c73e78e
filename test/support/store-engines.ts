/**
 * The PostgreSQL engine for store-level test files, and the list of every
 * engine such a file runs against (the memory and JSONL engines of
 * store-model.ts, plus PostgreSQL when it can run here). Importing this
 * module registers an afterAll hook that drops the file's database and
 * stops the cluster the file started, so it is for vitest files only.
 */
import postgres from "postgres";
import { afterAll } from "vitest";
import type { StorageEngine } from "../../src/storage/engine.js";
import { PostgresEngine, type PostgresEngineOptions } from "../../src/storage/postgres/index.js";
import { createDatabase, type PgServer, pgSkipReason, startPostgres } from "../harness/postgres.js";
import { ENGINE_FACTORIES, type EngineFactory } from "./store-model.js";

/** Why PostgreSQL tests cannot run here (in CI they must, unless a mutation run turns them off). */
export const pgSkip =
  process.env.SESSIOND_TEST_PG === "off"
    ? "SESSIOND_TEST_PG=off"
    : process.env.CI === "true"
      ? undefined
      : pgSkipReason();
if (pgSkip !== undefined) {
  console.warn(`\n*** SessionStore on PostgreSQL SKIPPED: ${pgSkip} ***\n`);
}

let pgServer: PgServer | undefined;
let pgDb: Awaited<ReturnType<typeof createDatabase>> | undefined;
let pgAdmin: postgres.Sql | undefined;

/** One cluster and database for the file, started on first use; emptied by each fixture. */
async function pgDatabase(): Promise<{ url: string; admin: postgres.Sql }> {
  if (pgDb === undefined || pgAdmin === undefined) {
    pgServer ??= await startPostgres();
    if (pgServer === undefined) throw new Error("PostgreSQL is not available");
    pgDb = await createDatabase(pgServer.url);
    pgAdmin = postgres(pgDb.url, { max: 1, onnotice: () => {} });
  }
  return { url: pgDb.url, admin: pgAdmin };
}

afterAll(async () => {
  await pgAdmin?.end({ timeout: 1 });
  await pgDb?.drop();
  await pgServer?.stop();
});

/**
 * A PostgreSQL engine on the file's database, emptied (every table but the
 * migrations and the job leases: sessions, keys, blobs, usage, share links,
 * erasure audit records), as a memory or JSONL fixture starts empty; more
 * options for some tests.
 */
export async function openPostgres(
  extra: Partial<PostgresEngineOptions> = {},
): Promise<{ engine: PostgresEngine; url: string; admin: postgres.Sql }> {
  const { url, admin } = await pgDatabase();
  const engine = await PostgresEngine.open({ url, ...extra });
  await admin.unsafe(
    "TRUNCATE sessiond_sessions, sessiond_entries, sessiond_session_keys, sessiond_checkpoints, sessiond_blob_chunks, sessiond_blobs, sessiond_blob_keys, sessiond_usage, sessiond_usage_heads, sessiond_usage_rollup, sessiond_usage_prices, sessiond_shares, sessiond_erasures",
  );
  return { engine, url, admin };
}

const postgresFactory: EngineFactory = {
  name: "postgres",
  reopens: true,
  async open() {
    const opened = await openPostgres();
    let engine: StorageEngine = opened.engine;
    return {
      get engine() {
        return engine;
      },
      reopen: async () => {
        await engine.close();
        engine = await PostgresEngine.open({ url: opened.url });
        return engine;
      },
      dispose: () => engine.close(),
    };
  },
};

/** Every engine a store-level suite runs against: memory, JSONL and PostgreSQL. */
export const STORE_ENGINE_FACTORIES: readonly EngineFactory[] =
  pgSkip === undefined ? [...ENGINE_FACTORIES, postgresFactory] : ENGINE_FACTORIES;
