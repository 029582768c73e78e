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
 * The tables are made by migration 13 (schema.ts), the sums in numeric
 * columns: a report over whole hours (`usageGroups`) asks PostgreSQL for
 * SUM(...) GROUP BY (bucket, model, tag values) with COUNT(DISTINCT
 * session_id) per group, and prices each row's uncosted tokens in SQL with
 * the price table passed as JSON (exact numeric, rounded half-up to 10^-12
 * per (session, hour, model) row, as core/usage-sums.ts prices a group), so
 * it reads a few rows per group instead of one per (session, hour, model).
 * A window cutting an hour reads the per-session rows (`usageSums`) and
 * sums the edge hours from the entries (store/usage-report.ts).
 */
import type { Tags } from "../../core/tags.js";
import {
  emptyRaw,
  emptyTotals,
  mergeRaw,
  type PriceTable,
  type RawUsage,
  type Totals,
} from "../../core/usage-sums.js";
import type {
  SessionKey,
  StorageEngine,
  UsageGroup,
  UsageGroups,
  UsageGroupsQuery,
  UsageSessionSums,
  UsageSumsQuery,
} from "../engine.js";
import { groupKey, type HourUsage, UsageCounter } from "../usage-report.js";
import type { PgContext } from "./context.js";

/** Advisory lock key class of a session's catch-up. */
const SESSION_LOCK_CLASS = 0x5e55_42b;
/** Entries read per page while counting a session. */
const READ_PAGE = 2000;
/** Sessions counted at once. */
const CONCURRENCY = 8;

/** The sum columns of a sessiond_usage row, as read (numeric as text). */
interface SumColumns {
  messages: string;
  input: string;
  output: string;
  cache_read: string;
  cache_write: string;
  reasoning: string;
  u_messages: string;
  u_input: string;
  u_output: string;
  u_cache_read: string;
  u_cache_write: string;
  caller_cost: string;
}

const SUM_COLUMNS = [
  "messages",
  "input",
  "output",
  "cache_read",
  "cache_write",
  "reasoning",
  "u_messages",
  "u_input",
  "u_output",
  "u_cache_read",
  "u_cache_write",
  "caller_cost",
] as const;

function rawFromColumns(r: SumColumns): RawUsage {
  const raw = emptyRaw();
  raw.messages = Number(r.messages);
  raw.input = BigInt(r.input);
  raw.output = BigInt(r.output);
  raw.cacheRead = BigInt(r.cache_read);
  raw.cacheWrite = BigInt(r.cache_write);
  raw.reasoning = BigInt(r.reasoning);
  raw.uncosted = {
    messages: Number(r.u_messages),
    input: BigInt(r.u_input),
    output: BigInt(r.u_output),
    cacheRead: BigInt(r.u_cache_read),
    cacheWrite: BigInt(r.u_cache_write),
  };
  for (const [c, v] of Object.entries(JSON.parse(r.caller_cost) as Record<string, string>)) {
    raw.callerCost.set(c, BigInt(v));
  }
  return raw;
}

function columnsFromRaw(raw: RawUsage): SumColumns {
  const u = raw.uncosted;
  return {
    messages: String(raw.messages),
    input: raw.input.toString(),
    output: raw.output.toString(),
    cache_read: raw.cacheRead.toString(),
    cache_write: raw.cacheWrite.toString(),
    reasoning: raw.reasoning.toString(),
    u_messages: String(u.messages),
    u_input: u.input.toString(),
    u_output: u.output.toString(),
    u_cache_read: u.cacheRead.toString(),
    u_cache_write: u.cacheWrite.toString(),
    caller_cost: JSON.stringify(
      Object.fromEntries([...raw.callerCost].map(([c, v]) => [c, v.toString()])),
    ),
  };
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
      raw: rawFromColumns(r),
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

interface SumRow extends SumColumns {
  session_id: string;
  hour_ms: string;
  model: string;
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
      SELECT u.session_id, u.hour_ms, u.model, ${ctx.sql(SUM_COLUMNS.map((c) => `u.${c}`))},
        u.first_seq, u.last_seq,
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
  const counter = new UsageCounter(delta);
  let after = from;
  let head = from;
  try {
    while (after < row.head_seq) {
      const page = await engine.read(key, after, Math.min(READ_PAGE, row.head_seq - after));
      if (page.entries.length === 0) break;
      for (const e of page.entries) {
        after = Number(e.seq);
        if (after > row.head_seq) break;
        counter.add(e, after);
        head = after;
      }
    }
    counter.finish();
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
          : await tx<(SumColumns & { hour_ms: string; model: string; first_seq: number })[]>`
              SELECT hour_ms, model, ${tx(SUM_COLUMNS)}, first_seq FROM sessiond_usage
              WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
                AND hour_ms IN ${tx([...new Set([...delta.values()].map((g) => g.hour))])}`;
        for (const o of old) {
          const g = delta.get(groupKey(Number(o.hour_ms), o.model));
          if (g === undefined) continue;
          mergeRaw(g.raw, rawFromColumns(o));
          g.firstSeq = Math.min(g.firstSeq, o.first_seq);
        }
        const values = [...delta.values()].map((g) => ({
          workspace: key.workspace,
          session_id: key.sessionId,
          hour_ms: g.hour,
          model: g.model,
          ...columnsFromRaw(g.raw),
          first_seq: g.firstSeq,
          last_seq: g.lastSeq,
        }));
        await tx`
          INSERT INTO sessiond_usage ${tx(values)}
          ON CONFLICT (workspace, session_id, hour_ms, model) DO UPDATE
            SET messages = excluded.messages, input = excluded.input, output = excluded.output,
              cache_read = excluded.cache_read, cache_write = excluded.cache_write,
              reasoning = excluded.reasoning, u_messages = excluded.u_messages,
              u_input = excluded.u_input, u_output = excluded.u_output,
              u_cache_read = excluded.u_cache_read, u_cache_write = excluded.u_cache_write,
              caller_cost = excluded.caller_cost, first_seq = excluded.first_seq, last_seq = excluded.last_seq`;
      }
      await tx`
        INSERT INTO sessiond_usage_heads (workspace, session_id, incarnation, head)
        VALUES (${key.workspace}, ${key.sessionId}, ${row.incarnation}, ${head})
        ON CONFLICT (workspace, session_id) DO UPDATE
          SET incarnation = excluded.incarnation, head = excluded.head`;
    }),
  );
}

/** Most group_by_tags keys the query's columns hold (store: MAX_GROUP_BY_TAGS). */
const TAG_COLUMNS = 8;

/** A row of the grouped query: a group's sums ("g") or its cost in a currency ("c"). */
interface GroupRow {
  kind: "g" | "c";
  /** GROUPING(b, m, t): 0 for a group, else the total. */
  g: number;
  b: string | null;
  m: string | null;
  /** JSON text of the tag values. */
  t: string | null;
  currency: string | null;
  messages: string;
  input: string;
  output: string;
  cache_read: string;
  cache_write: string;
  reasoning: string;
  unpriced: string;
  sessions: string;
  units: string | null;
  unfolded: boolean | null;
}

/**
 * The engine's usageGroups: the report of whole hours grouped and priced in
 * SQL, after counting the sessions that moved. Undefined when a session in
 * the window has tags not folded in its row (written by an older sessiond):
 * the caller then groups the per-session sums (`usageSums`).
 */
export async function usageGroups(
  ctx: PgContext,
  engine: StorageEngine,
  workspace: string,
  q: UsageGroupsQuery,
  prices: PriceTable,
): Promise<UsageGroups | undefined> {
  if (q.groupByTags.length > TAG_COLUMNS) return undefined;
  const ask = () => groupQuery(ctx, workspace, q, prices);
  // As usageSums: the stale sessions asked with the sums, in one round trip.
  const [stale, first] = await Promise.all([staleSessions(ctx, workspace), ask()]);
  let rows = first;
  if (stale.length > 0) {
    await catchUpUsage(ctx, engine, workspace, stale);
    rows = await ask();
  }
  // The total row says whether a session's tags were not folded in its row.
  if (rows.some((r) => r.kind === "g" && r.g !== 0 && r.unfolded === true)) return undefined;
  const groupRows = rows.filter((r) => r.kind === "g");
  const costRows = rows.filter((r) => r.kind === "c");
  const byKey = new Map<string, UsageGroup>();
  const keyOf = (r: { b: string | null; m: string | null; t: string | null }) =>
    JSON.stringify([r.b, r.m, r.t]);
  let total = emptyTotals();
  let sessions = 0;
  for (const r of groupRows) {
    const totals: Totals = {
      messages: Number(r.messages),
      input: BigInt(r.input),
      output: BigInt(r.output),
      cacheRead: BigInt(r.cache_read),
      cacheWrite: BigInt(r.cache_write),
      reasoning: BigInt(r.reasoning),
      cost: new Map(),
      unpricedMessages: Number(r.unpriced),
    };
    if (r.g !== 0) {
      total = totals;
      sessions = Number(r.sessions);
      continue;
    }
    byKey.set(keyOf(r), {
      bucketMs: Number(r.b),
      model: r.m ?? "",
      values: r.t === null ? [] : (JSON.parse(r.t) as string[]),
      totals,
      sessions: Number(r.sessions),
    });
  }
  for (const r of costRows) {
    const into = r.g !== 0 ? total : byKey.get(keyOf(r))?.totals;
    if (into === undefined) continue;
    const currency = r.currency as string;
    into.cost.set(currency, (into.cost.get(currency) ?? 0n) + BigInt(r.units as string));
  }
  return { groups: [...byKey.values()], total, sessions };
}

/**
 * The grouped query, one statement over one materialised scan of the rows:
 * token sums, unpriced messages and distinct sessions per group ("g"
 * rows); cost units per group and currency ("c" rows) (each
 * row's uncosted tokens priced with its model's price row at its hour,
 * half-up to 10^-12 units, plus the caller-set costs). GROUPING SETS add
 * the total (g = 1) to the groups (g = 0).
 */
function groupQuery(
  ctx: PgContext,
  workspace: string,
  q: UsageGroupsQuery,
  prices: PriceTable,
): Promise<GroupRow[]> {
  const sql = ctx.sql;
  const bucket =
    q.bucket === "hour"
      ? sql`u.hour_ms`
      : q.bucket === "day"
        ? sql`(floor(u.hour_ms / 86400000.0) * 86400000)::bigint`
        : sql`0::bigint`;
  const model = q.byModel ? sql`u.model` : sql`''`;
  // One expression per key asked (each key a parameter), not a subquery per row.
  const tags =
    q.groupByTags.length === 0
      ? sql`ARRAY[]::text[]`
      : sql`ARRAY[${q.groupByTags
          .map((k) => sql`coalesce(s.tags ->> ${k}::text, '')`)
          .reduce((list, one) => sql`${list}, ${one}`)}]`;
  const filter =
    Object.keys(q.tags).length > 0
      ? sql`AND (s.tags @> ${JSON.stringify(q.tags)}::text::jsonb
          OR s.tags_head IS DISTINCT FROM s.head_seq)`
      : sql``;
  // Each row with the start of the model's next row (to_ms): a row applies in [from_ms, to_ms).
  const table = JSON.stringify(
    prices.rows.map((r) => ({
      model: r.model,
      from_ms: r.fromMs,
      to_ms: prices.rows
        .filter((n) => n.model === r.model && n.fromMs > r.fromMs)
        .reduce<number | null>((min, n) => (min === null || n.fromMs < min ? n.fromMs : min), null),
      currency: r.currency,
      pin: r.inputPerMTok.toString(),
      pout: r.outputPerMTok.toString(),
      pcr: r.cacheReadPerMTok.toString(),
      pcw: r.cacheWritePerMTok.toString(),
    })),
  );
  const base = sql`
    WITH p AS MATERIALIZED (
      SELECT * FROM jsonb_to_recordset(${table}::text::jsonb)
        AS p(model text, from_ms bigint, currency text, pin numeric, pout numeric, pcr numeric, pcw numeric, to_ms bigint)
    ), base AS MATERIALIZED (
      SELECT u.session_id, u.messages, u.input, u.output, u.cache_read, u.cache_write,
        u.reasoning, u.u_messages, u.caller_cost, ${bucket} AS b, ${model} AS m, ${tags} AS t, pr.currency AS p_currency,
        s.tags_head IS DISTINCT FROM s.head_seq AS unfolded,
        CASE WHEN pr.currency IS NOT NULL
          THEN div(u.u_input * pr.pin + u.u_output * pr.pout + u.u_cache_read * pr.pcr
            + u.u_cache_write * pr.pcw + 500000, 1000000) END AS p_units
      FROM sessiond_usage u
      JOIN sessiond_sessions s ON s.workspace = u.workspace AND s.session_id = u.session_id
      JOIN sessiond_usage_heads h ON h.workspace = u.workspace AND h.session_id = u.session_id
        AND h.incarnation = s.incarnation
      LEFT JOIN p pr ON u.u_messages > 0 AND pr.model = u.model AND pr.from_ms <= u.hour_ms
        AND (pr.to_ms IS NULL OR u.hour_ms < pr.to_ms)
      WHERE u.workspace = ${workspace} AND u.hour_ms >= ${q.fromHour} AND u.hour_ms < ${q.toHour}
        AND u.messages > 0 ${filter}
    )`;
  return ctx.db(
    "grouping usage sums",
    () => sql<GroupRow[]>`${base}
      SELECT 'g' AS kind, GROUPING(b, m, t) AS g, b::text, m, array_to_json(t)::text AS t,
        NULL::text AS currency,
        coalesce(sum(messages), 0)::text AS messages, coalesce(sum(input), 0)::text AS input,
        coalesce(sum(output), 0)::text AS output, coalesce(sum(cache_read), 0)::text AS cache_read,
        coalesce(sum(cache_write), 0)::text AS cache_write,
        coalesce(sum(reasoning), 0)::text AS reasoning,
        coalesce(sum(CASE WHEN p_currency IS NULL THEN u_messages ELSE 0 END), 0)::text AS unpriced,
        count(DISTINCT session_id)::text AS sessions, NULL::text AS units,
        bool_or(unfolded) AS unfolded
      FROM base GROUP BY GROUPING SETS ((b, m, t), ())
      UNION ALL
      SELECT 'c', GROUPING(b, m, t), b::text, m, array_to_json(t)::text, currency,
        '0', '0', '0', '0', '0', '0', '0', '0', sum(units)::text, NULL
      FROM (
        SELECT b, m, t, p_currency AS currency, p_units AS units FROM base WHERE p_units IS NOT NULL
        UNION ALL
        SELECT b, m, t, c.key, c.value::numeric FROM base, jsonb_each_text(caller_cost::jsonb) c
          WHERE caller_cost <> '{}'
      ) x
      GROUP BY GROUPING SETS ((b, m, t, currency), (currency))`,
  );
}
