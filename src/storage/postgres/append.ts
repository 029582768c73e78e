import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { SessiondError, unavailable } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { AppendResult, Planner, SessionKey, StorageEvent } from "../engine.js";
import { recordOf } from "../session-record.js";
import type { AppendWriter } from "./append-writer.js";
import { catchUp, lockAndCatchUp } from "./catch-up.js";
import type { PgContext } from "./context.js";
import { notifyIn } from "./notify.js";
import { insertEntries, jsonOf } from "./rows.js";
import { erasedRefusal } from "./sealing.js";
import { type StoredPayloads, storeAll } from "./search-bloom.js";
import { type Cached, cacheKey } from "./session-cache.js";

interface PendingAppend {
  planner: Planner;
  resolve: (r: AppendResult) => void;
  reject: (err: unknown) => void;
}

/**
 * The append path, with group commit: appends to one session queue in
 * process, and each drain of the queue is ONE write, each planner seeing
 * the previous ones applied: usually one autocommit statement, shared
 * with the drains of other sessions under load (append-writer.ts), under
 * contention on the session a transaction holding the row lock. A commit (and its fsync of the WAL) per batch rather than per
 * append is what keeps many concurrent appends to one session cheap.
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
    /** Told of a session whose append had an unknown outcome (head-poll.ts). */
    private readonly unknownOutcome: (k: string) => void,
    /** The optimistic writes (group-committed across sessions) and the wake-ups behind them. */
    private readonly writer: AppendWriter,
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
   * Runs every queued planner and writes what they planned, resolving them
   * only once it is committed. A planner that throws, or whose plan the log
   * refuses, rejects only its own request. Any failure of the write itself
   * (connection lost, statement timeout) drops the cached log and rejects
   * the batch with UNAVAILABLE "outcome unknown": the next operation
   * reloads from the tables, and an idempotent retry finds the entries if
   * the commit did happen.
   *
   * The write is first tried optimistically (`writeIfCurrent`): ONE
   * autocommit statement that updates the session row only if it is still
   * at the head and incarnation the plans were made against, and inserts
   * the entries only if it did. A miss (another replica appended, or the
   * session is gone) rolls the cached log back, catches it up and plans
   * again; after two misses the batch goes through the locked transaction
   * (`writeLocked`), which always makes progress.
   */
  private async drain(key: SessionKey): Promise<void> {
    const { ctx } = this;
    const k = cacheKey(key);
    const batch = this.pending.get(k) ?? [];
    this.pending.delete(k);
    if (batch.length === 0) return;
    let outcome: Outcome | undefined;
    try {
      await this.ready();
      for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS && outcome === undefined; attempt++) {
        outcome = await this.writeIfCurrent(key, batch);
      }
      outcome ??= await this.writeLocked(key, batch);
    } catch (err) {
      // Outcome unknown (or nothing written): the tables are the truth, reload next time.
      ctx.cache.drop(k);
      this.unknownOutcome(k);
      const failure =
        err instanceof SessiondError && err.code !== "UNAVAILABLE"
          ? err
          : unavailable(
              `append to session ${quote(key.sessionId)} failed, outcome unknown (retry is safe): ${err instanceof Error ? err.message : String(err)}`,
              err,
            );
      for (const p of batch) p.reject(failure);
      return;
    }
    const { results, errors, wroteHead } = outcome;
    for (const p of batch) {
      const r = results.get(p);
      if (r !== undefined) p.resolve(r);
      else p.reject(errors.get(p));
    }
    if (wroteHead !== undefined) this.emit({ type: "appended", ...key, headSeq: wroteHead });
  }

  /**
   * One optimistic attempt: plans against the cached log (read first when
   * this replica has none) and writes in ONE statement, conditional on the
   * session row being still where the log is. Undefined when the row moved
   * on (the cached log is then rolled back to what was stored and caught
   * up, for the next attempt), else the outcome.
   */
  private async writeIfCurrent(
    key: SessionKey,
    batch: readonly PendingAppend[],
  ): Promise<Outcome | undefined> {
    const { ctx } = this;
    const k = cacheKey(key);
    let c = ctx.cache.get(k);
    const read = c === undefined;
    if (c === undefined) {
      await catchUp(ctx, key);
      c = ctx.cache.get(k);
      if (c === undefined) return undefined;
    }
    const before = c.log.headSeq;
    const incarnation = c.incarnation;
    const plans = planAll(key, c, batch);
    if (plans.toWrite.length === 0) {
      // Nothing to write (every planner refused, or a retry found its
      // entries): answers that are only true of the current log (an
      // expected seq that looks stale, the head of a deduplicated retry).
      // The write's compare-and-set would have proven the log current;
      // without a write, one read does (the one just made, if any).
      if (read) return { ...plans, wroteHead: undefined };
      const now = await catchUp(ctx, key);
      const same = ctx.cache.get(k)?.incarnation === incarnation && now.headSeq === before;
      return same ? { ...plans, wroteHead: undefined } : undefined;
    }
    const rec = recordOf(key.workspace, c.log);
    let written: boolean;
    try {
      written = await this.writer.write({
        key,
        incarnation: c.incarnation,
        expectHead: before,
        rec,
        entries: plans.toWrite,
        stored: plans.stored,
      });
    } catch (err) {
      ctx.cache.drop(k);
      throw err;
    }
    if (!written) {
      // Someone else moved the row (or deleted it): back to what was
      // stored, and caught up for the next attempt (NOT_FOUND when gone).
      c.log.truncate(before);
      await catchUp(ctx, key);
      return undefined;
    }
    ctx.cache.remember(k, c);
    return { ...plans, wroteHead: c.log.headSeq };
  }

  /**
   * The locked path, when optimism kept losing to other writers of the
   * session: ONE transaction that takes the session row lock first
   * (`SELECT ... FOR UPDATE`, which serialises writers across replicas),
   * catches the log up, plans and writes. Its wake-up for other replicas
   * is sent in the transaction (delivered on COMMIT).
   */
  private async writeLocked(key: SessionKey, batch: readonly PendingAppend[]): Promise<Outcome> {
    const { ctx } = this;
    let outcome: Outcome | undefined;
    await ctx.db("appending", () =>
      ctx.sql.begin(async (tx) => {
        // The driver may run this again after a retryable failure: start clean.
        outcome = undefined;
        const c = await lockAndCatchUp(ctx, tx, key);
        const plans = planAll(key, c, batch);
        outcome = { ...plans, wroteHead: undefined };
        if (plans.toWrite.length === 0) return;
        // The session row carries what listing shows, so listing reads no entries.
        const rec = recordOf(key.workspace, c.log);
        // The three writes are sent together (postgres.js pipelines the
        // queries of a transaction that are in flight at once): one round
        // trip instead of three. They still run in this order, and if one
        // fails the transaction is aborted and rolled back as a whole.
        await Promise.all([
          insertEntries(tx, key, plans.toWrite, plans.stored, ctx.insertChunk),
          tx`
            UPDATE sessiond_sessions SET head_seq = ${rec.headSeq}, leaf_id = ${rec.leafId},
              message_count = ${rec.messageCount}, title = ${rec.title ?? null},
              updated_at_ms = ${rec.updatedAtMs}, tags = ${JSON.stringify(rec.tags)}::text::jsonb,
              tags_head = ${rec.headSeq}
            WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`,
          notifyIn(tx, ctx.replica, { type: "appended", ...key, headSeq: rec.headSeq }),
        ]);
        outcome = { ...plans, wroteHead: rec.headSeq };
      }),
    );
    if (outcome === undefined) throw new Error("append transaction ended without an outcome");
    if (outcome.wroteHead !== undefined) {
      let bytes = 0;
      for (const json of outcome.stored.json) bytes += json.length;
      ctx.observer.committed(outcome.results.size, outcome.toWrite.length, bytes);
    }
    return outcome;
  }
}

/** Optimistic attempts before the locked transaction. */
const OPTIMISTIC_ATTEMPTS = 2;

interface Planned {
  results: Map<PendingAppend, AppendResult>;
  errors: Map<PendingAppend, unknown>;
  /** Every entry planned, in order, and its payload. */
  toWrite: Entry[];
  stored: StoredPayloads;
}

interface Outcome extends Planned {
  /** The head after the write; undefined when nothing was written. */
  wroteHead: number | undefined;
}

/**
 * Runs each planner against the cached log in order, applying each
 * accepted plan; payloads sealed when the session is (sealing.ts). An
 * erased sealed session takes no more entries.
 */
function planAll(key: SessionKey, c: Cached, batch: readonly PendingAppend[]): Planned {
  const { log, keying } = c;
  const results = new Map<PendingAppend, AppendResult>();
  const errors = new Map<PendingAppend, unknown>();
  const toWrite: Entry[] = [];
  const stored: StoredPayloads = { json: [], blooms: [] };
  for (const p of batch) {
    try {
      if (keying?.erased !== undefined) throw erasedRefusal(key);
      const plan = p.planner(log);
      const planJson = plan.json ?? plan.write.map(jsonOf);
      log.applyAll(plan.write);
      toWrite.push(...plan.write);
      storeAll(
        plan.write.map((e) => e.kind.case),
        planJson,
        keying,
        stored,
      );
      results.set(p, { ...plan, headSeq: log.headSeq, leafId: log.leafId });
    } catch (err) {
      errors.set(p, err);
    }
  }
  return { results, errors, toWrite, stored };
}
