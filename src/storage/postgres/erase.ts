import type { Withheld } from "../../../gen/sessiond/v1/entry_pb.js";
import { planErase } from "../../core/erase-plan.js";
import type { EraseResult, SessionKey, WithholdResult } from "../engine.js";
import type { PgContext } from "./context.js";
import { withholdRows } from "./redact.js";

/**
 * Erasure on PostgreSQL (StorageEngine.erase, issue 41 part 2).
 *
 * A session in clear: ONE transaction, redaction's (redact.ts), with every
 * entry that has content (core/erase-plan.ts) replaced by its ERASED form:
 * the rows' payloads updated in one statement, a new incarnation (every
 * replica's cached log starts over from the tables), the wake-ups queued
 * for COMMIT. The trigram index of message payloads follows the UPDATE.
 *
 * The old payloads are then dead tuples: invisible to every query (and to
 * pg_dump), but still bytes in the table's pages (and its TOAST table)
 * until VACUUM prunes them. `vacuumErased` runs that VACUUM, once per
 * erasure call (the store's `recordErasure`, after every session of the
 * call is erased), so that a call that answered has left no copy of the
 * content in the table's files, except where another transaction still
 * had a snapshot older than the erasure (VACUUM keeps what an open
 * snapshot may still read; autovacuum removes it later). WAL segments not
 * yet recycled, WAL archives and backups taken before the erasure keep the
 * content: README.md, "Erasure".
 */
export async function eraseClear(
  ctx: PgContext,
  key: SessionKey,
  marker: Withheld,
): Promise<WithholdResult> {
  return withholdRows(ctx, key, (log) => planErase(log, marker));
}

/** The counts of an erasure, from the plan it ran. */
export function eraseResult(r: WithholdResult, keyDestroyed: boolean): EraseResult {
  return {
    entries: r.entries.length,
    changed: r.changed.length,
    headSeq: r.headSeq,
    keyDestroyed,
  };
}

/**
 * VACUUM of the tables an erasure rewrote (outside any transaction: VACUUM
 * cannot run in one). It waits for another VACUUM of the same table (a
 * replica's or autovacuum's, which PostgreSQL cancels for it). A role that
 * does not own a table gets a WARNING and nothing vacuumed, not an error.
 */
export async function vacuumErased(ctx: PgContext, tables: readonly string[]): Promise<void> {
  for (const table of tables) {
    await ctx.db(`vacuuming ${table} after an erasure`, () => ctx.sql.unsafe(`VACUUM ${table}`));
  }
}

/** Appends an erasure audit record (the store's JSON text) to the workspace's audit table. */
export async function recordErasure(
  ctx: PgContext,
  workspace: string,
  record: string,
): Promise<void> {
  await ctx.db(
    "recording an erasure",
    () =>
      ctx.sql`INSERT INTO sessiond_erasures (workspace, record) VALUES (${workspace}, ${record})`,
  );
}

/** The workspace's audit records, oldest first. */
export async function readErasures(ctx: PgContext, workspace: string): Promise<string[]> {
  const rows = await ctx.db(
    "reading erasures",
    () => ctx.sql<{ record: string }[]>`
      SELECT record FROM sessiond_erasures WHERE workspace = ${workspace} ORDER BY n`,
  );
  return rows.map((r) => r.record);
}
