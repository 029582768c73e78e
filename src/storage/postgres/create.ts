import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { alreadyExists } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { SessionLog } from "../../core/session-log.js";
import type { SessionKey } from "../engine.js";
import { recordOf, rootRecordOfEntry } from "../session-record.js";
import type { PgContext } from "./context.js";
import { notifyIn } from "./notify.js";
import { insertEntries, jsonOf } from "./rows.js";
import { storeAll } from "./search-bloom.js";
import { cacheKey } from "./session-cache.js";

/**
 * Creates a session in ONE transaction: the session row, then every entry,
 * then the NOTIFY. This is also the whole of a fork and of an import (the
 * store hands the engine the complete first log in one `create`), so a
 * failure at any point, a lost connection included, leaves no row behind.
 *
 * The log is validated (`SessionLog.from`) and every payload serialised
 * before anything is sent. `INSERT ... ON CONFLICT DO NOTHING RETURNING`
 * gives no row for a taken id (ALREADY_EXISTS); a racing create of the
 * same id waits on the primary key until the winner commits, then
 * conflicts. The new log is cached (in the session's turn) once committed.
 */
export async function createSession(
  ctx: PgContext,
  key: SessionKey,
  entries: readonly Entry[],
): Promise<SessionLog> {
  const log = SessionLog.from(key.sessionId, entries);
  // Sealed workspace: a data key made and wrapped before the transaction.
  const made = await ctx.keys.make(key);
  const stored = storeAll(
    entries.map((e) => e.kind.case),
    entries.map(jsonOf),
    made?.keying,
  );
  const rec = recordOf(key.workspace, log);
  // Denormalised from the root for listing: order, parent filter, keyset.
  const info = rootRecordOfEntry(key.sessionId, log.root);
  const k = cacheKey(key);
  await ctx.cache.withKey(k, async () => {
    const incarnation = await ctx.db("creating a session", () =>
      ctx.sql.begin(async (tx) => {
        const inserted = await tx<{ incarnation: string }[]>`
          INSERT INTO sessiond_sessions (workspace, session_id, created_at_ms, parent_session_id,
            head_seq, leaf_id, message_count, title, updated_at_ms, tags, tags_head)
          VALUES (${key.workspace}, ${key.sessionId}, ${info.createdAtMs}, ${info.parentSessionId},
            ${rec.headSeq}, ${rec.leafId}, ${rec.messageCount}, ${rec.title ?? null}, ${rec.updatedAtMs},
            ${JSON.stringify(rec.tags)}::text::jsonb, ${rec.headSeq})
          ON CONFLICT DO NOTHING
          RETURNING incarnation`;
        const row = inserted[0];
        if (row === undefined) {
          throw alreadyExists(
            `session ${quote(key.sessionId)} already exists in workspace ${quote(key.workspace)}`,
          );
        }
        if (made !== undefined) {
          const w = made.wrapped;
          await tx`
            INSERT INTO sessiond_session_keys (workspace, session_id, key_id, key_version, wrapped)
            VALUES (${key.workspace}, ${key.sessionId}, ${w.keyId}, ${w.version}, ${w.wrapped})`;
        }
        await insertEntries(tx, key, entries, stored, ctx.insertChunk);
        await notifyIn(tx, ctx.replica, { type: "created", ...key, headSeq: log.headSeq });
        return row.incarnation;
      }),
    );
    const keying =
      made?.keying ?? (ctx.keys.encrypts ? await ctx.keys.keyingOf(key, undefined) : undefined);
    ctx.cache.remember(k, { incarnation, log, keying });
  });
  return log;
}
