import type { DeleteOptions, SessionKey } from "../engine.js";
import type { PgContext } from "./context.js";
import { CHANNEL, notifyPayload } from "./notify.js";
import { cacheKey } from "./session-cache.js";
import { dropUsage, lockUsageShared } from "./usage-report.js";

/**
 * Deletes one session in ONE transaction: the row goes, its entries with it
 * by the foreign key's ON DELETE CASCADE, the NOTIFY is sent only when a
 * row went, and then its usage rows go (usage-report.ts, dropUsage). It waits for a running append's row lock, so an append is
 * never half-deleted. Returns whether the session existed. With
 * `ifHeadSeq` the row goes only while its head is still that (the DELETE
 * waits for a running append's row lock, then sees its head).
 */
export async function deleteSession(
  ctx: PgContext,
  key: SessionKey,
  opts: DeleteOptions = {},
): Promise<boolean> {
  const k = cacheKey(key);
  // -1 matches no head: head_seq is at least 1.
  const ifHead = opts.ifHeadSeq ?? -1;
  const conditional = opts.ifHeadSeq !== undefined;
  return ctx.cache.withKey(k, async () => {
    const rows = await ctx.db("deleting a session", () =>
      ctx.sql.begin(async (tx) => {
        await lockUsageShared(tx, key.workspace);
        const d = await tx`
          WITH d AS (
            DELETE FROM sessiond_sessions
            WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
              AND (NOT ${conditional} OR head_seq = ${ifHead})
            RETURNING 1)
          SELECT pg_notify(${CHANNEL}, ${notifyPayload(ctx.replica, { type: "deleted", ...key, headSeq: 0 })})
          FROM d`;
        // Its usage rows go too, out of the roll-up (usage-report.ts).
        if (d.length > 0) await dropUsage(tx, key.workspace, [key.sessionId]);
        return d;
      }),
    );
    ctx.cache.drop(k);
    return rows.length > 0;
  });
}

/**
 * Deletes several sessions of a workspace in ONE transaction (a parent and
 * its subagents, see SessionStore.delete): the DELETE of every row, then a
 * NOTIFY per removed session, then COMMIT; a failure anywhere removes
 * nothing and wakes nobody. The rows are locked first, in id order, so it
 * waits for running appends to any of the sessions. The sessions'
 * turns are held (in sorted order, see SessionCache.withKeys) so that no
 * catch-up of this replica re-caches a log being deleted. Returns the ids
 * that existed, in the order given.
 */
export async function deleteSessions(
  ctx: PgContext,
  workspace: string,
  sessionIds: readonly string[],
): Promise<string[]> {
  const ids = [...new Set(sessionIds)];
  if (ids.length === 0) return [];
  const ks = ids.map((sessionId) => cacheKey({ workspace, sessionId }));
  return ctx.cache.withKeys(ks, async () => {
    const removed = await ctx.db("deleting sessions", () =>
      ctx.sql.begin(async (tx) => {
        await lockUsageShared(tx, workspace);
        // Row locks in one fixed order, so that two replicas deleting
        // overlapping families wait for each other instead of deadlocking.
        await tx`
          SELECT 1 FROM sessiond_sessions
          WHERE workspace = ${workspace} AND session_id IN ${tx(ids)}
          ORDER BY session_id COLLATE "C"
          FOR UPDATE`;
        const rows = await tx<{ session_id: string }[]>`
          DELETE FROM sessiond_sessions
          WHERE workspace = ${workspace} AND session_id IN ${tx(ids)}
          RETURNING session_id`;
        const gone = new Set(rows.map((r) => r.session_id));
        await dropUsage(tx, workspace, [...gone]);
        const payloads = ids
          .filter((id) => gone.has(id))
          .map((sessionId) =>
            notifyPayload(ctx.replica, { type: "deleted", workspace, sessionId, headSeq: 0 }),
          );
        if (payloads.length > 0) {
          await tx`
            SELECT pg_notify(${CHANNEL}, p)
            FROM json_array_elements_text(${JSON.stringify(payloads)}::text::json) AS p`;
        }
        return gone;
      }),
    );
    for (const k of ks) ctx.cache.drop(k);
    return ids.filter((id) => removed.has(id));
  });
}
