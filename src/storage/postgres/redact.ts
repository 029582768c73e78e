import type { SessionKey, WithholdPlanner, WithholdResult } from "../engine.js";
import { lockAndCatchUp } from "./catch-up.js";
import { dropCheckpoint } from "./checkpoint.js";
import type { PgContext } from "./context.js";
import { notifyIn } from "./notify.js";
import { jsonOf } from "./rows.js";
import { sealed } from "./sealing.js";
import { searchBloom } from "./search-bloom.js";
import { cacheKey } from "./session-cache.js";

/**
 * Redaction on PostgreSQL (StorageEngine.withhold): ONE transaction that
 * locks the session row (`SELECT ... FOR UPDATE`, serialising it with the
 * locked appends of every replica), catches the cached log up, plans,
 * replaces the payloads of the planned rows in one UPDATE, gives the
 * session a new incarnation, deletes its checkpoint (checkpoint.ts) and
 * queues the wake-up (delivered on COMMIT).
 *
 * The new incarnation is how other replicas' cached logs follow: every
 * catch-up reads the session row and starts the log over from seq 1 when
 * its incarnation changed (as after a delete and re-create), and an
 * optimistic append planned on the old log misses its compare-and-set
 * (`incarnation = cached`) and plans again on the reloaded one. So no
 * replica serves the old content once the redaction is committed, even
 * one that missed the NOTIFY. The trigram index of message payloads
 * (search) follows the UPDATE as PostgreSQL maintains it.
 *
 * This replica's cached log takes the new entries in place
 * (SessionLog.replaceAll), so holders of it read the new form at once.
 */
export async function withholdRows(
  ctx: PgContext,
  key: SessionKey,
  planner: WithholdPlanner,
): Promise<WithholdResult> {
  const k = cacheKey(key);
  return ctx.cache.withKey(k, async () => {
    let result: WithholdResult | undefined;
    let incarnation: string | undefined;
    try {
      await ctx.db("redacting", () =>
        ctx.sql.begin(async (tx) => {
          // The driver may run this again after a retryable failure: start clean.
          result = undefined;
          incarnation = undefined;
          const c = await lockAndCatchUp(ctx, tx, key);
          const plan = planner(c.log);
          result = { ...plan, headSeq: c.log.headSeq };
          if (plan.changed.length === 0) return;
          // A sealed session's new payloads are sealed too (its data key).
          const rows = plan.changed.map((e) => {
            const json = jsonOf(e);
            const p = sealed(json, c.keying);
            return { q: Number(e.seq), p, b: searchBloom(e.kind.case, json, p, c.keying?.sealer) };
          });
          const [updated, row] = await Promise.all([
            tx<{ seq: number }[]>`
              UPDATE sessiond_entries e SET payload = v.p, search_bloom = v.b
              FROM json_to_recordset(${JSON.stringify(rows)}::text::json)
                AS v(q int, p text, b bytea)
              WHERE e.workspace = ${key.workspace} AND e.session_id = ${key.sessionId}
                AND e.seq = v.q
              RETURNING e.seq`,
            tx<{ incarnation: string }[]>`
              UPDATE sessiond_sessions SET incarnation = DEFAULT
              WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
              RETURNING incarnation`,
            // No copy of the old content stays, even one the data key would open.
            dropCheckpoint(tx, key),
            ...notifyPages(rows.map((r) => r.q)).map((seqs) =>
              notifyIn(tx, ctx.replica, { type: "withheld", ...key, headSeq: c.log.headSeq, seqs }),
            ),
          ]);
          if ((updated as { seq: number }[]).length !== rows.length) {
            throw new Error(`${rows.length} rows to redact, ${updated.length} updated`);
          }
          incarnation = (row as { incarnation: string }[])[0]?.incarnation;
        }),
      );
    } catch (err) {
      // Outcome unknown or refused: the tables are the truth, read again next time.
      ctx.cache.drop(k);
      throw err;
    }
    const r = result as WithholdResult;
    if (r.changed.length > 0) {
      const c = ctx.cache.get(k);
      if (c !== undefined && incarnation !== undefined) {
        c.log.replaceAll(r.changed);
        c.incarnation = incarnation;
      } else ctx.cache.drop(k);
    }
    return r;
  });
}

/**
 * NOTIFY carries at most 8000 bytes: the seqs of a rewrite (an erasure
 * changes every entry of a session) go in wake-ups of at most this many
 * (a seq is at most 10 digits and a comma: 4,400 bytes and the ids).
 */
export const NOTIFY_SEQS = 400;

/** `seqs` cut into the pages of NOTIFY wake-ups (NOTIFY_SEQS each). */
export function notifyPages(seqs: readonly number[]): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < seqs.length; i += NOTIFY_SEQS) out.push(seqs.slice(i, i + NOTIFY_SEQS));
  return out;
}
