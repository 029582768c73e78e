import postgres from "postgres";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { SessionKey, SessionRecord } from "../engine.js";
import type { PgContext } from "./context.js";
import { type Wake, wakeAfter } from "./notify.js";
import { type EntryRow, entryRows } from "./rows.js";
import type { StoredPayloads } from "./search-bloom.js";

/** One session's optimistic write: what was planned, and the row state it was planned against. */
export interface AppendWrite {
  key: SessionKey;
  incarnation: string;
  /** The head seq the plans were made on (the compare-and-set). */
  expectHead: number;
  /** The session row after the write. */
  rec: SessionRecord;
  entries: readonly Entry[];
  /** Their payloads and search filters, same order. */
  stored: StoredPayloads;
}

interface Queued {
  w: AppendWrite;
  resolve: (written: boolean) => void;
  reject: (err: unknown) => void;
}

/** Sessions per batch statement at most. */
const MAX_BATCH = 256;

/**
 * The optimistic writes of every session, group-committed ACROSS sessions:
 * at most one statement runs at once per lane (a connection of its own,
 * see `lanes`); a write that finds them all busy queues, and when one
 * returns, every queued write (of different sessions: a session has one
 * drain at a time) goes as ONE statement, one transaction, one commit. Sequential appends thus still cost one
 * statement each, while 64 appends in flight cost a few statements instead
 * of 64: fewer round trips and commits for PostgreSQL, fewer socket writes
 * and parses for both sides.
 *
 * Each session keeps its own compare-and-set (a session whose row moved
 * is simply not written, and told so). A batch is all or nothing: when
 * PostgreSQL refuses it with an ERROR (a deadlock between two replicas'
 * batches, a statement timeout, a value a column refuses), nothing was
 * committed, and each write is tried again alone, so that one session's
 * failure is its own. Any other failure (connection lost, FATAL) leaves
 * the outcome unknown to every write of the batch.
 *
 * The wake-up of other replicas goes on the same lane right behind the
 * write, without waiting for it (notify.ts, `wakeAfter`): the two
 * statements travel together and PostgreSQL runs the NOTIFY just after the
 * write's commit.
 */
export class AppendWriter {
  private readonly queue: Queued[] = [];
  /** Lanes with no statement of ours running. */
  private readonly free: postgres.Sql[];

  constructor(
    private readonly ctx: PgContext,
    /**
     * Connections of their own (postgres.js instances of max 1), one per
     * statement in flight: on a lane, a second query is pipelined behind
     * the first on the same connection, in order, which a pool does not
     * promise (it would hand the NOTIFY to another, idle, connection,
     * where it could run before the write commits).
     */
    lanes: readonly postgres.Sql[],
    /** The NOTIFY payload for a committed write, or undefined when nobody else listens (notify.ts). */
    private readonly payloadFor: (w: AppendWrite) => string | undefined,
  ) {
    this.free = [...lanes];
  }

  /** Writes `w` if its row is still where it was planned; resolves whether it was. */
  write(w: AppendWrite): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ w, resolve, reject });
      this.next();
    });
  }

  /** Sends every queued write (up to MAX_BATCH) as one statement, while a lane is free. */
  private next(): void {
    while (this.queue.length > 0 && this.free.length > 0) {
      void this.run(this.free.pop() as postgres.Sql, this.queue.splice(0, MAX_BATCH));
    }
  }

  private async run(lane: postgres.Sql, batch: readonly Queued[]): Promise<void> {
    try {
      const outcomes = await this.outcomes(
        lane,
        batch.map((q) => q.w),
      );
      let appends = 0;
      let entries = 0;
      let bytes = 0;
      for (const [i, q] of batch.entries()) {
        const o = outcomes[i] as PromiseSettledResult<boolean>;
        if (o.status === "fulfilled" && o.value) {
          appends++;
          entries += q.w.entries.length;
          for (const json of q.w.stored.json) bytes += json.length;
        }
      }
      if (appends > 0) this.ctx.observer.committed(appends, entries, bytes);
      for (const [i, q] of batch.entries()) {
        const o = outcomes[i] as PromiseSettledResult<boolean>;
        if (o.status === "fulfilled") q.resolve(o.value);
        else q.reject(o.reason);
      }
    } finally {
      this.free.push(lane);
      this.next();
    }
  }

  /**
   * Per write: written or not, or the failure that leaves its outcome
   * unknown. Every statement is followed on `lane` by the wake-up of its
   * writes, which nothing waits for.
   */
  private async outcomes(
    lane: postgres.Sql,
    ws: readonly AppendWrite[],
  ): Promise<PromiseSettledResult<boolean>[]> {
    const { ctx } = this;
    const send = <T>(writes: readonly AppendWrite[], write: () => Promise<T>): Promise<T> => {
      const written = ctx.db("appending", write);
      this.wake(lane, writes);
      return written;
    };
    const alone = (w: AppendWrite) => send([w], () => writeOne(lane, w));
    if (ws.length === 1) return Promise.allSettled([alone(ws[0] as AppendWrite)]);
    try {
      const written = await send(ws, () => writeMany(lane, ws));
      return written.map((value) => ({ status: "fulfilled", value }));
    } catch (err) {
      const cause = err instanceof Error ? err.cause : undefined;
      if (cause instanceof postgres.PostgresError && cause.severity === "ERROR") {
        // Rolled back as a whole: each on its own, so that a failure stays its own.
        return Promise.allSettled(ws.map(alone));
      }
      return ws.map(() => ({ status: "rejected", reason: err }));
    }
  }

  /** Queues on `lane`, behind the write just sent there, the NOTIFY of those of `ws` that anyone awaits. */
  private wake(lane: postgres.Sql, ws: readonly AppendWrite[]): void {
    const wakes: Wake[] = [];
    for (const w of ws) {
      const payload = this.payloadFor(w);
      if (payload === undefined) continue;
      wakes.push({ ...w.key, incarnation: w.incarnation, headSeq: w.rec.headSeq, payload });
    }
    if (wakes.length === 0) return;
    // Lost wake-ups are covered by the listeners' head poll (notify.ts).
    this.ctx.db("waking other replicas", () => wakeAfter(lane, wakes)).catch(() => {});
  }
}

/** The rows of `w`'s entries as the statements' JSON carries them. */
function rowsOf(w: AppendWrite): EntryRow[] {
  return entryRows(w.entries, w.stored);
}

/**
 * ONE autocommit statement (one round trip, one commit) for one session:
 * the session row is updated only when it still has the incarnation and
 * head seq the batch was planned against (the compare-and-set; under READ
 * COMMITTED a concurrent writer's committed update is re-checked against
 * this condition, EvalPlanQual, so a stale plan never lands), and the
 * entries are inserted only when it was. The UPDATE takes the row lock, so
 * writers of a session still take turns across replicas. The entries
 * travel as one JSON array (json_to_recordset), so the statement text, and
 * the prepared statement postgres.js keeps per connection, is the same for
 * any number of entries.
 */
export async function writeOne(sql: postgres.Sql, w: AppendWrite): Promise<boolean> {
  const { key, rec } = w;
  const result = await sql`
    WITH u AS (
      UPDATE sessiond_sessions SET head_seq = ${rec.headSeq}, leaf_id = ${rec.leafId},
        message_count = ${rec.messageCount}, title = ${rec.title ?? null},
        updated_at_ms = ${rec.updatedAtMs}, tags = ${JSON.stringify(rec.tags)}::text::jsonb,
              tags_head = ${rec.headSeq}
      WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
        AND incarnation = ${w.incarnation}::bigint AND head_seq = ${w.expectHead}::int
      RETURNING workspace, session_id)
    INSERT INTO sessiond_entries
      (workspace, session_id, seq, id, parent_id, kind, payload, search_bloom)
    SELECT u.workspace, u.session_id, x.q, x.i, x.p, x.k, x.j, x.b
    FROM u, json_to_recordset(${JSON.stringify(rowsOf(w))}::text::json)
      AS x(q integer, i text, p text, k text, j text, b bytea)
    ORDER BY x.q`;
  return result.count > 0;
}

/**
 * The same for several sessions in ONE statement: each row updated under
 * its own compare-and-set, the entries of the rows that were inserted.
 * Returns, per write, whether it was written. Rows are locked in
 * (workspace, session id) order as far as the plan follows the input's
 * order; two replicas' batches that still deadlock are refused by
 * PostgreSQL with an ERROR, which `AppendWriter` answers by writing each
 * alone.
 */
export async function writeMany(sql: postgres.Sql, ws: readonly AppendWrite[]): Promise<boolean[]> {
  const sorted = [...ws].sort((a, b) =>
    a.key.workspace === b.key.workspace
      ? cmp(a.key.sessionId, b.key.sessionId)
      : cmp(a.key.workspace, b.key.workspace),
  );
  const input = sorted.map((w) => ({
    w: w.key.workspace,
    s: w.key.sessionId,
    n: w.incarnation,
    x: w.expectHead,
    h: w.rec.headSeq,
    l: w.rec.leafId,
    c: w.rec.messageCount,
    t: w.rec.title ?? null,
    u: w.rec.updatedAtMs,
    g: w.rec.tags,
    e: rowsOf(w),
  }));
  const rows = await sql<{ workspace: string; session_id: string }[]>`
    WITH v AS (
      SELECT * FROM json_to_recordset(${JSON.stringify(input)}::text::json)
        AS v(w text, s text, n bigint, x integer, h integer, l text, c integer, t text, u bigint, g jsonb, e json)),
    u AS (
      UPDATE sessiond_sessions s SET head_seq = v.h, leaf_id = v.l, message_count = v.c,
        title = v.t, updated_at_ms = v.u, tags = v.g, tags_head = v.h
      FROM v
      WHERE s.workspace = v.w AND s.session_id = v.s AND s.incarnation = v.n AND s.head_seq = v.x
      RETURNING s.workspace, s.session_id, v.e),
    i AS (
      INSERT INTO sessiond_entries
        (workspace, session_id, seq, id, parent_id, kind, payload, search_bloom)
      SELECT u.workspace, u.session_id, x.q, x.i, x.p, x.k, x.j, x.b
      FROM u, json_to_recordset(u.e) AS x(q integer, i text, p text, k text, j text, b bytea))
    SELECT workspace, session_id FROM u`;
  const written = new Set(rows.map((r) => `${r.workspace}\n${r.session_id}`));
  return ws.map((w) => written.has(`${w.key.workspace}\n${w.key.sessionId}`));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
