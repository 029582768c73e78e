/**
 * UsageReport's sums on PostgreSQL (issue 42), in SQL: a table of raw usage
 * sums per (session, UTC hour, model) (`sessiond_usage`), read by ONE
 * range query on (workspace, hour_ms) joined with the sessions table for
 * the tags, and a table of how far each session's entries are counted in
 * it (`sessiond_usage_heads`: the head seq and the incarnation counted).
 *
 * The sums are kept incrementally, by the reports rather than by the
 * append path (which stays one statement: append-writer.ts): a report
 * first finds, in one query, the sessions whose head moved past their
 * counted head (or whose incarnation changed: deleted and made again, or
 * rewritten by an erasure), reads only their entries after that head
 * through the engine (`read`: decoding, sealed payloads included, as every
 * reader), and adds them to their rows, under a per-session advisory lock
 * in one transaction with the new counted head, so that two replicas
 * reporting at once never count an entry twice. A warm report (nothing
 * appended since the last) is the two queries; the first report of a
 * workspace counts every session once.
 *
 * The tables are created at the first report (CREATE ... IF NOT EXISTS
 * under an advisory lock), not by a migration: see the report of helper
 * U2 (the migration list was being changed by another helper).
 */
import type { Tags } from "../../core/tags.js";
import { mergeRaw, rawFromJson, rawToJson } from "../../core/usage-sums.js";
import type { SessionKey, StorageEngine, UsageSessionSums, UsageSumsQuery } from "../engine.js";
import { countEntry, groupKey, type HourUsage } from "../usage-report.js";
import type { PgContext } from "./context.js";
import { PostgresEngine } from "./postgres-engine.js";

export const USAGE_TABLES_SQL = `
CREATE TABLE IF NOT EXISTS sessiond_usage_heads (
  workspace   text    NOT NULL,
  session_id  text    NOT NULL,
  -- the incarnation of sessiond_sessions the sums are of
  incarnation bigint  NOT NULL,
  -- entries with seq <= head are in sessiond_usage
  head        integer NOT NULL,
  PRIMARY KEY (workspace, session_id)
);
CREATE TABLE IF NOT EXISTS sessiond_usage (
  workspace  text    NOT NULL,
  session_id text    NOT NULL,
  -- start of the UTC hour, ms
  hour_ms    bigint  NOT NULL,
  model      text    NOT NULL,
  -- raw sums (core/usage-sums.ts rawToJson): priced when read
  sums       text    NOT NULL,
  first_seq  integer NOT NULL,
  last_seq   integer NOT NULL,
  PRIMARY KEY (workspace, session_id, hour_ms, model)
);
CREATE INDEX IF NOT EXISTS sessiond_usage_by_hour ON sessiond_usage (workspace, hour_ms);
`;

/** Advisory lock keys: the table creation, and one per session's catch-up. */
const TABLES_LOCK = 0x5e55_42a;
const SESSION_LOCK_CLASS = 0x5e55_42b;
/** Entries read per page while counting a session. */
const READ_PAGE = 2000;
/** Sessions counted at once. */
const CONCURRENCY = 8;

const ready = new WeakMap<PgContext, Promise<void>>();

function ensureTables(ctx: PgContext): Promise<void> {
  let p = ready.get(ctx);
  if (p === undefined) {
    p = ctx
      .db("creating the usage tables", () =>
        ctx.sql.begin(async (tx) => {
          await tx`SELECT pg_advisory_xact_lock(${TABLES_LOCK})`;
          await tx.unsafe(USAGE_TABLES_SQL);
        }),
      )
      .then(() => undefined);
    p.catch(() => ready.delete(ctx));
    ready.set(ctx, p);
  }
  return p;
}

interface StaleRow {
  session_id: string;
  head_seq: number;
  incarnation: string;
  counted_head: number | null;
  counted_incarnation: string | null;
}

/** The engine's usageSums: catch up, then one range query. */
export async function usageSums(
  ctx: PgContext,
  engine: StorageEngine,
  workspace: string,
  q: UsageSumsQuery,
): Promise<UsageSessionSums[]> {
  await ensureTables(ctx);
  // Both queries at once (postgres.js pipelines them): when no session
  // moved since its sums were counted (a warm report), the sums read are
  // current and the report costs one round trip; else count, and read again.
  const [stale, first] = await Promise.all([
    staleSessions(ctx, workspace),
    sumRows(ctx, workspace, q),
  ]);
  let rows = first;
  if (stale.length > 0) {
    await catchUpUsage(ctx, engine, workspace, stale);
    rows = await sumRows(ctx, workspace, q);
  }
  const bySession = new Map<string, { tags: Tags | undefined; groups: HourUsage[] }>();
  for (const r of rows) {
    let s = bySession.get(r.session_id);
    if (s === undefined) {
      s = { tags: r.tags === null ? undefined : (JSON.parse(r.tags) as Tags), groups: [] };
      bySession.set(r.session_id, s);
    }
    s.groups.push({
      hour: Number(r.hour_ms),
      model: r.model,
      raw: rawFromJson(JSON.parse(r.sums)),
      firstSeq: r.first_seq,
      lastSeq: r.last_seq,
    });
  }
  // Tags not folded in the row (a session written by an older sessiond): from its record.
  const unknown = [...bySession].filter(([, s]) => s.tags === undefined).map(([id]) => id);
  if (unknown.length > 0) {
    for (const rec of await engine.list(workspace, unknown)) {
      const s = bySession.get(rec.sessionId);
      if (s !== undefined) s.tags = rec.tags;
    }
  }
  const out: UsageSessionSums[] = [];
  for (const [sessionId, s] of bySession) {
    if (s.tags !== undefined) out.push({ sessionId, tags: s.tags, groups: s.groups });
  }
  return out;
}

interface SumRow {
  session_id: string;
  hour_ms: string;
  model: string;
  sums: string;
  first_seq: number;
  last_seq: number;
  tags: string | null;
}

/** The sums of the hours asked of the sessions that may hold the tags, with their folded tags. */
function sumRows(ctx: PgContext, workspace: string, q: UsageSumsQuery): Promise<SumRow[]> {
  const filter = Object.keys(q.tags).length > 0;
  return ctx.db(
    "reading usage sums",
    () => ctx.sql<SumRow[]>`
      SELECT u.session_id, u.hour_ms, u.model, u.sums, u.first_seq, u.last_seq,
        CASE WHEN s.tags_head = s.head_seq THEN s.tags::text END AS tags
      FROM sessiond_usage u
      JOIN sessiond_sessions s ON s.workspace = u.workspace AND s.session_id = u.session_id
      JOIN sessiond_usage_heads h ON h.workspace = u.workspace AND h.session_id = u.session_id
        AND h.incarnation = s.incarnation
      WHERE u.workspace = ${workspace} AND u.hour_ms >= ${q.fromHour} AND u.hour_ms < ${q.toHour}
        ${
          filter
            ? ctx.sql`AND (s.tags @> ${JSON.stringify(q.tags)}::text::jsonb
                OR s.tags_head IS DISTINCT FROM s.head_seq)`
            : ctx.sql``
        }`,
  );
}

/** The sessions whose entries are not all counted (head moved on, or another incarnation). */
function staleSessions(ctx: PgContext, workspace: string): Promise<StaleRow[]> {
  return ctx.db(
    "finding sessions with new usage",
    () => ctx.sql<StaleRow[]>`
      SELECT s.session_id, s.head_seq, s.incarnation::text AS incarnation,
        h.head AS counted_head, h.incarnation::text AS counted_incarnation
      FROM sessiond_sessions s
      LEFT JOIN sessiond_usage_heads h ON h.workspace = s.workspace AND h.session_id = s.session_id
      WHERE s.workspace = ${workspace}
        AND (h.head IS NULL OR h.incarnation <> s.incarnation OR h.head < s.head_seq)`,
  );
}

/** Counts into the sums the entries the stale sessions gained since. */
async function catchUpUsage(
  ctx: PgContext,
  engine: StorageEngine,
  workspace: string,
  stale: readonly StaleRow[],
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < stale.length) {
      const row = stale[next++] as StaleRow;
      await countSession(ctx, engine, { workspace, sessionId: row.session_id }, row);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, stale.length) }, worker));
}

/**
 * Adds session `key`'s entries after its counted head to its sums, in one
 * transaction under the session's advisory lock, which checks again that
 * nobody counted them meanwhile and that the session is still the same
 * incarnation (else it is left for the next report).
 */
async function countSession(
  ctx: PgContext,
  engine: StorageEngine,
  key: SessionKey,
  row: StaleRow,
): Promise<void> {
  const fresh = row.counted_incarnation !== row.incarnation;
  const from = fresh ? 0 : (row.counted_head ?? 0);
  const delta = new Map<string, HourUsage>();
  let after = from;
  let head = from;
  try {
    while (after < row.head_seq) {
      const page = await engine.read(key, after, Math.min(READ_PAGE, row.head_seq - after));
      if (page.entries.length === 0) break;
      for (const e of page.entries) {
        after = Number(e.seq);
        if (after > row.head_seq) break;
        countEntry(delta, e, after);
        head = after;
      }
    }
  } catch {
    // Gone or unreadable now: the next report tries again (a deleted session has no row to join).
    return;
  }
  const lockKey = `${key.workspace}/${key.sessionId}`;
  await ctx.db("counting usage", () =>
    ctx.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${SESSION_LOCK_CLASS}, hashtext(${lockKey}))`;
      const [now] = await tx<{ incarnation: string; head: number | null; hinc: string | null }[]>`
        SELECT s.incarnation::text AS incarnation, h.head, h.incarnation::text AS hinc
        FROM sessiond_sessions s
        LEFT JOIN sessiond_usage_heads h ON h.workspace = s.workspace AND h.session_id = s.session_id
        WHERE s.workspace = ${key.workspace} AND s.session_id = ${key.sessionId}`;
      if (now === undefined || now.incarnation !== row.incarnation) return;
      // Counted meanwhile by another report: its head is where this one started, or nothing to do.
      if ((now.hinc === row.incarnation ? (now.head ?? 0) : 0) !== from) return;
      if (fresh) {
        await tx`DELETE FROM sessiond_usage
          WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`;
      }
      if (delta.size > 0) {
        const old = fresh
          ? []
          : await tx<{ hour_ms: string; model: string; sums: string; first_seq: number }[]>`
              SELECT hour_ms, model, sums, first_seq FROM sessiond_usage
              WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
                AND hour_ms IN ${tx([...new Set([...delta.values()].map((g) => g.hour))])}`;
        for (const o of old) {
          const g = delta.get(groupKey(Number(o.hour_ms), o.model));
          if (g === undefined) continue;
          mergeRaw(g.raw, rawFromJson(JSON.parse(o.sums)));
          g.firstSeq = Math.min(g.firstSeq, o.first_seq);
        }
        const values = [...delta.values()].map((g) => ({
          workspace: key.workspace,
          session_id: key.sessionId,
          hour_ms: g.hour,
          model: g.model,
          sums: JSON.stringify(rawToJson(g.raw)),
          first_seq: g.firstSeq,
          last_seq: g.lastSeq,
        }));
        await tx`
          INSERT INTO sessiond_usage ${tx(values)}
          ON CONFLICT (workspace, session_id, hour_ms, model) DO UPDATE
            SET sums = excluded.sums, first_seq = excluded.first_seq, last_seq = excluded.last_seq`;
      }
      await tx`
        INSERT INTO sessiond_usage_heads (workspace, session_id, incarnation, head)
        VALUES (${key.workspace}, ${key.sessionId}, ${row.incarnation}, ${head})
        ON CONFLICT (workspace, session_id) DO UPDATE
          SET incarnation = excluded.incarnation, head = excluded.head`;
    }),
  );
}

// The engine's method. Installed from here (postgres/index.ts imports this
// module) while postgres-engine.ts is being changed by another helper: it
// belongs in the class, as `usageSums(w, q) { await this.begin(); return
// usageSums(this.ctx, this, w, q); }`.
declare module "./postgres-engine.js" {
  interface PostgresEngine {
    usageSums(workspace: string, query: UsageSumsQuery): Promise<UsageSessionSums[]>;
  }
}
PostgresEngine.prototype.usageSums = async function (
  this: PostgresEngine,
  workspace: string,
  query: UsageSumsQuery,
): Promise<UsageSessionSums[]> {
  const inside = this as unknown as { ctx: PgContext; begin(): Promise<void> };
  await inside.begin();
  return usageSums(inside.ctx, this, workspace, query);
};
