import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { SessiondError, unavailable } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { AppendResult, Planner, SessionKey, StorageEvent } from "../engine.js";
import { recordOf } from "../session-record.js";
import { lockAndCatchUp } from "./catch-up.js";
import type { PgContext } from "./context.js";
import { notifyIn } from "./notify.js";
import { insertEntries, jsonOf } from "./rows.js";
import { cacheKey } from "./session-cache.js";

interface PendingAppend {
  planner: Planner;
  resolve: (r: AppendResult) => void;
  reject: (err: unknown) => void;
}

/**
 * The append path, with group commit: appends to one session queue in
 * process, and each drain of the queue is ONE transaction under the
 * session's row lock, each planner seeing the previous ones applied. A
 * transaction (and its fsync of the WAL) per batch rather than per append
 * is what keeps many concurrent appends to one session cheap.
 */
export class GroupCommit {
  /** Per session: appends waiting for the next drain. */
  private readonly pending = new Map<string, PendingAppend[]>();

  constructor(
    private readonly ctx: PgContext,
    /** Resolves once the schema is in place (retried after a failure). */
    private readonly ready: () => Promise<void>,
    /** Tells this replica's subscribers, after COMMIT. */
    private readonly emit: (e: StorageEvent) => void,
  ) {}

  /** Queues an append; the first of a batch schedules the drain in the session's turn. */
  enqueue(key: SessionKey, planner: Planner): Promise<AppendResult> {
    const k = cacheKey(key);
    return new Promise<AppendResult>((resolve, reject) => {
      let queue = this.pending.get(k);
      if (queue === undefined) {
        queue = [];
        this.pending.set(k, queue);
        this.ctx.cache.withKey(k, () => this.drain(key)).catch(() => {});
      }
      queue.push({ planner, resolve, reject });
    });
  }

  /**
   * Runs every queued planner in one transaction and resolves them only
   * after COMMIT. A planner that throws, or whose plan the log refuses,
   * rejects only its own request. Any failure of the transaction itself
   * (connection lost, COMMIT failed, statement timeout) drops the cached
   * log and rejects the batch with UNAVAILABLE "outcome unknown": the next
   * operation reloads from the tables, and an idempotent retry finds the
   * entries if the COMMIT did happen.
   */
  private async drain(key: SessionKey): Promise<void> {
    const { ctx } = this;
    const k = cacheKey(key);
    const batch = this.pending.get(k) ?? [];
    this.pending.delete(k);
    if (batch.length === 0) return;
    const results = new Map<PendingAppend, AppendResult>();
    const errors = new Map<PendingAppend, unknown>();
    let wrote = false;
    try {
      await this.ready();
      await ctx.db("appending", () =>
        ctx.sql.begin(async (tx) => {
          // The driver may run this again after a retryable failure: start clean.
          results.clear();
          errors.clear();
          wrote = false;
          const c = await lockAndCatchUp(ctx, tx, key);
          const toWrite: Entry[] = [];
          const json: string[] = [];
          for (const p of batch) {
            try {
              const plan = p.planner(c.log);
              const planJson = plan.json ?? plan.write.map(jsonOf);
              c.log.applyAll(plan.write);
              toWrite.push(...plan.write);
              json.push(...planJson);
              results.set(p, { ...plan, headSeq: c.log.headSeq, leafId: c.log.leafId });
            } catch (err) {
              errors.set(p, err);
            }
          }
          if (toWrite.length === 0) return;
          // The session row carries what listing shows, so listing reads no entries.
          const rec = recordOf(key.workspace, c.log);
          // The three writes are sent together (postgres.js pipelines the
          // queries of a transaction that are in flight at once): one round
          // trip instead of three. They still run in this order, and if one
          // fails the transaction is aborted and rolled back as a whole.
          await Promise.all([
            insertEntries(tx, key, toWrite, json, ctx.insertChunk),
            tx`
            UPDATE sessiond_sessions SET head_seq = ${rec.headSeq}, leaf_id = ${rec.leafId},
              message_count = ${rec.messageCount}, title = ${rec.title ?? null},
              updated_at_ms = ${rec.updatedAtMs}
            WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`,
            notifyIn(tx, ctx.replica, { type: "appended", ...key, headSeq: rec.headSeq }),
          ]);
          wrote = true;
        }),
      );
    } catch (err) {
      // Outcome unknown (or nothing written): the tables are the truth, reload next time.
      ctx.cache.drop(k);
      const failure =
        err instanceof SessiondError && err.code !== "UNAVAILABLE"
          ? err
          : unavailable(
              `append to session ${quote(key.sessionId)} failed, outcome unknown (retry is safe): ${err instanceof Error ? err.message : String(err)}`,
              err,
            );
      for (const p of batch) p.reject(errors.get(p) ?? failure);
      return;
    }
    const head = ctx.cache.get(k)?.log.headSeq ?? 0;
    for (const p of batch) {
      const r = results.get(p);
      if (r !== undefined) p.resolve(r);
      else p.reject(errors.get(p));
    }
    if (wrote) this.emit({ type: "appended", ...key, headSeq: head });
  }
}
