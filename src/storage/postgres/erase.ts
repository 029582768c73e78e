import type { Withheld } from "../../../gen/sessiond/v1/entry_pb.js";
import { planErase } from "../../core/erase-plan.js";
import type { EraseResult, SessionKey } from "../engine.js";
import { SEALED_KINDS } from "../seal/sealed-payload.js";
import { lockAndCatchUp } from "./catch-up.js";
import { dropCheckpoint } from "./checkpoint.js";
import type { PgContext } from "./context.js";
import { notifyIn } from "./notify.js";
import { notifyPages, withholdRows } from "./redact.js";
import { erasedColumn } from "./sealing.js";
import { cacheKey } from "./session-cache.js";

/**
 * Erasure on PostgreSQL (StorageEngine.erase, issue 41 part 2).
 *
 * A sealed session (sealing.ts): ONE transaction locks the session row,
 * destroys its data key (its row of sessiond_session_keys keeps no key
 * material: wrapped, key_id, key_version NULL, `erased` says when, by whom
 * and why), deletes its checkpoint (checkpoint.ts), gives the session a
 * new incarnation and queues the wake-ups.
 * The payloads are not rewritten: they can no longer be opened by anyone,
 * and read as their kind emptied with the ERASED marker.
 *
 * A session in clear: ONE transaction, redaction's (redact.ts), with every
 * entry that has content (core/erase-plan.ts) replaced by its ERASED form:
 * the rows' payloads updated in one statement, a new incarnation (every
 * replica's cached log starts over from the tables), the wake-ups queued
 * for COMMIT. The trigram index of message payloads follows the UPDATE.
 *
 * Either way the old row versions (the content, or the wrapped key) are
 * then dead tuples: invisible to every query (and to pg_dump), but still
 * bytes in the table's pages (and its TOAST table) until VACUUM prunes
 * them. `vacuumErased` runs that VACUUM once per erasure call (the
 * store's `recordErasure`, after every session of the call is erased).
 * Its limits (open snapshots, WAL, backups): README.md, "Redaction and
 * erasure".
 */
export interface Erased extends EraseResult {
  /** The seqs whose entries read differently now (the watchers' events). */
  readonly seqs: readonly number[];
  /** The table whose dead tuples hold what was destroyed. */
  readonly table: string;
}

export async function eraseSession(
  ctx: PgContext,
  key: SessionKey,
  marker: Withheld,
): Promise<Erased> {
  const destroyed = await destroyKey(ctx, key, marker);
  if (destroyed !== undefined) return destroyed;
  const r = await withholdRows(ctx, key, (log) => planErase(log, marker));
  return {
    entries: r.entries.length,
    changed: r.changed.length,
    headSeq: r.headSeq,
    keyDestroyed: false,
    seqs: r.changed.map((e) => Number(e.seq)),
    table: "sessiond_entries",
  };
}

/**
 * The key of a sealed session destroyed in one transaction (or found
 * destroyed: nothing written); undefined for a session in clear.
 */
async function destroyKey(
  ctx: PgContext,
  key: SessionKey,
  marker: Withheld,
): Promise<Erased | undefined> {
  const k = cacheKey(key);
  return ctx.cache.withKey(k, async () => {
    let out: Erased | undefined;
    try {
      await ctx.db("erasing a sealed session", () =>
        ctx.sql.begin(async (tx) => {
          out = undefined;
          const c = await lockAndCatchUp(ctx, tx, key);
          const keying = c.keying;
          if (keying?.sealer === undefined && keying?.erased === undefined) return;
          const sealedEntries = c.log.slice(0).filter((e) => SEALED_KINDS.has(e.kind.case ?? ""));
          const base = {
            entries: sealedEntries.length,
            headSeq: c.log.headSeq,
            keyDestroyed: true,
            table: "sessiond_session_keys",
          };
          if (keying.erased !== undefined) {
            out = { ...base, changed: 0, seqs: [] };
            return;
          }
          const seqs = sealedEntries
            .filter((e) => e.withheld === undefined)
            .map((e) => Number(e.seq));
          await Promise.all([
            tx`
              UPDATE sessiond_session_keys
              SET key_id = NULL, key_version = NULL, wrapped = NULL, erased = ${erasedColumn(marker)}
              WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`,
            tx`
              UPDATE sessiond_sessions SET incarnation = DEFAULT
              WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`,
            dropCheckpoint(tx, key),
            ...notifyPages(seqs).map((page) =>
              notifyIn(tx, ctx.replica, {
                type: "withheld",
                ...key,
                headSeq: c.log.headSeq,
                seqs: page,
              }),
            ),
          ]);
          out = { ...base, changed: seqs.length, seqs };
        }),
      );
    } finally {
      // The log read again from the rows with the key destroyed (or after any failure).
      ctx.cache.drop(k);
    }
    if (out?.keyDestroyed === true) ctx.keys.forget(key);
    return out;
  });
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
