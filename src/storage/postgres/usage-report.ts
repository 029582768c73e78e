/**
 * UsageReport's sums on PostgreSQL (issue 42), in SQL.
 *
 * Three tables (schema.ts, migrations 13 and 15):
 * - `sessiond_usage`: raw usage sums per (session, UTC hour, model), with
 *   what the row adds to the roll-up: its uncosted tokens priced
 *   (`p_currency`, `p_units`: rounded half-up to 10^-12 per row, as
 *   core/usage-sums.ts prices a group) and where it stands among its
 *   session's rows (`prev_model_ms`, `prev_any_ms`, `first_model`: what
 *   makes distinct sessions countable from sums);
 * - `sessiond_usage_heads`: how far each session's entries are counted
 *   (head seq and incarnation) and its folded tags when counted;
 * - `sessiond_usage_rollup`: the rows summed per (workspace, hour, model,
 *   tags, the three position columns, currency), kept equal to the GROUP
 *   BY of `sessiond_usage` by every writer, in the transaction that
 *   changes the rows. `sessiond_usage_prices` names the price table the
 *   workspace's rows are priced with (a digest).
 *
 * The sums are kept incrementally, by the reports rather than by the
 * append path (which stays one statement: append-writer.ts): a report
 * first finds, in one query, the sessions whose head moved past their
 * counted head (or whose incarnation changed: deleted and made again, or
 * rewritten by an erasure; or gone: deleted by a sessiond that did not
 * remove its rows), reads only their entries after that head through the
 * engine (`read`: decoding, sealed payloads included, as every reader), and
 * rewrites their rows and the roll-up's difference, under a per-session
 * advisory lock in one transaction with the new counted head, so that two
 * replicas reporting at once never count an entry twice. Deleting a
 * session removes its rows and subtracts them in the delete's transaction
 * (`dropUsage`). A report made with another price table than the
 * workspace's rows were priced with prices them again and rebuilds the
 * roll-up first (`reprice`, under the workspace's lock held exclusively;
 * counting and deleting hold it shared).
 *
 * A warm report over whole hours (`usageGroups`) is two statements sent at
 * once: the stale sessions, and the roll-up's rows of the window grouped
 * by (bucket, model, tag values). A window cutting an hour reads the
 * per-session rows (`usageSums`) and sums the edge hours from the entries
 * (store/usage-report.ts).
 */
import { createHash } from "node:crypto";
import type postgres from "postgres";
import type { Tags } from "../../core/tags.js";
import {
  emptyRaw,
  emptyTotals,
  mergeRaw,
  NO_PRICES,
  type PriceTable,
  priceRaw,
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

/** A connection or transaction to run statements on. */
type Tx = postgres.Sql | postgres.TransactionSql;
type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** Advisory lock key class of a session's catch-up. */
const SESSION_LOCK_CLASS = 0x5e55_42b;
/** Advisory lock key class of a workspace's usage (shared: count, delete; exclusive: reprice). */
const WORKSPACE_LOCK_CLASS = 0x5e55_42c;
/** Entries read per page while counting a session. */
const READ_PAGE = 2000;
/** Sessions counted at once. */
const CONCURRENCY = 8;
/** "No earlier hour" in prev_model_ms / prev_any_ms: before any timestamp. */
const NO_HOUR = -1e15;
/** Rounds of (reprice, count, read) before a report gives up on the roll-up. */
const ATTEMPTS = 3;

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

/** The digest naming a price table in sessiond_usage_prices. */
export function priceKey(prices: PriceTable): string {
  const rows = prices.rows.map((r) => [
    r.model,
    r.fromMs,
    r.currency,
    r.inputPerMTok.toString(),
    r.outputPerMTok.toString(),
    r.cacheReadPerMTok.toString(),
    r.cacheWritePerMTok.toString(),
  ]);
  return `v1:${createHash("sha256").update(JSON.stringify(rows)).digest("hex")}`;
}

/** A row's uncosted tokens priced: the currency and units, or unpriced (nulls). */
function pricedPart(
  raw: RawUsage,
  model: string,
  hour: number,
  prices: PriceTable,
): { p_currency: string | null; p_units: string | null } {
  if (raw.uncosted.messages === 0) return { p_currency: null, p_units: null };
  const t = priceRaw({ ...raw, callerCost: new Map() }, model, hour, prices);
  for (const [currency, units] of t.cost)
    return { p_currency: currency, p_units: units.toString() };
  return { p_currency: null, p_units: null };
}

/** The roll-up's key columns, in its primary key's order. */
const ROLLUP_KEY =
  "workspace, hour_ms, model, tags, prev_model_ms, prev_any_ms, first_model, currency";

/**
 * What the usage rows matching `where` (over `u`, joined with their heads
 * `h` for the tags) add to the roll-up, grouped by its key: per row one
 * token cell (currency '') and one cell per currency it has a cost in.
 */
function contributions(sql: Tx, where: Fragment): Fragment {
  return sql`
    SELECT u.workspace, u.hour_ms, u.model, h.tags, u.prev_model_ms, u.prev_any_ms,
      u.first_model, x.currency, count(*)::bigint AS n, sum(x.messages)::bigint AS messages,
      sum(x.input) AS input, sum(x.output) AS output, sum(x.cache_read) AS cache_read,
      sum(x.cache_write) AS cache_write, sum(x.reasoning) AS reasoning,
      sum(x.unpriced)::bigint AS unpriced, sum(x.units) AS units
    FROM sessiond_usage u
    JOIN sessiond_usage_heads h ON h.workspace = u.workspace AND h.session_id = u.session_id
    CROSS JOIN LATERAL (
      SELECT '' AS currency, u.messages, u.input, u.output, u.cache_read, u.cache_write,
        u.reasoning, CASE WHEN u.p_currency IS NULL THEN u.u_messages ELSE 0 END AS unpriced,
        0::numeric AS units
      UNION ALL
      SELECT c.currency, 0, 0, 0, 0, 0, 0, 0, sum(c.units)
      FROM (
        SELECT e.key AS currency, e.value::numeric AS units
        FROM jsonb_each_text(u.caller_cost::jsonb) e
        UNION ALL
        SELECT u.p_currency, u.p_units WHERE u.p_currency IS NOT NULL
      ) c
      GROUP BY c.currency
    ) x
    WHERE ${where}
    GROUP BY u.workspace, u.hour_ms, u.model, h.tags, u.prev_model_ms, u.prev_any_ms,
      u.first_model, x.currency`;
}

/** The columns of a contribution row, for jsonb_to_recordset. */
const CONTRIBUTION_RECORD =
  "workspace text, hour_ms bigint, model text, tags jsonb, prev_model_ms bigint, prev_any_ms bigint, first_model boolean, currency text, n bigint, messages bigint, input numeric, output numeric, cache_read numeric, cache_write numeric, reasoning numeric, unpriced bigint, units numeric";

/**
 * Adds `plus` minus `minus` (two sets of contribution rows) to the roll-up
 * in ONE statement, its cells in key order (so that two transactions never
 * lock cells in opposite orders), leaving out the cells that do not change.
 */
async function applyToRollup(tx: Tx, plus: Fragment | undefined, minusJson: string): Promise<void> {
  const minus = tx`
    SELECT ${tx.unsafe(ROLLUP_KEY)}, -n AS n, -messages AS messages, -input AS input,
      -output AS output, -cache_read AS cache_read, -cache_write AS cache_write,
      -reasoning AS reasoning, -unpriced AS unpriced, -units AS units
    FROM jsonb_to_recordset(${minusJson}::text::jsonb) AS o(${tx.unsafe(CONTRIBUTION_RECORD)})`;
  const both = plus === undefined ? minus : tx`${plus} UNION ALL ${minus}`;
  await tx`
    INSERT INTO sessiond_usage_rollup AS r (${tx.unsafe(ROLLUP_KEY)}, n, messages, input, output,
      cache_read, cache_write, reasoning, unpriced, units)
    SELECT ${tx.unsafe(ROLLUP_KEY)}, sum(n), sum(messages), sum(input), sum(output),
      sum(cache_read), sum(cache_write), sum(reasoning), sum(unpriced), sum(units)
    FROM (${both}) d
    GROUP BY ${tx.unsafe(ROLLUP_KEY)}
    HAVING sum(n) <> 0 OR sum(messages) <> 0 OR sum(input) <> 0 OR sum(output) <> 0
      OR sum(cache_read) <> 0 OR sum(cache_write) <> 0 OR sum(reasoning) <> 0
      OR sum(unpriced) <> 0 OR sum(units) <> 0
    ORDER BY ${tx.unsafe(ROLLUP_KEY)}
    ON CONFLICT (${tx.unsafe(ROLLUP_KEY)}) DO UPDATE
      SET n = r.n + excluded.n, messages = r.messages + excluded.messages,
        input = r.input + excluded.input, output = r.output + excluded.output,
        cache_read = r.cache_read + excluded.cache_read,
        cache_write = r.cache_write + excluded.cache_write,
        reasoning = r.reasoning + excluded.reasoning, unpriced = r.unpriced + excluded.unpriced,
        units = r.units + excluded.units`;
}

/** The contributions of the rows matching `where`, as JSON text (for applyToRollup's minus). */
async function contributionsJson(tx: Tx, where: Fragment): Promise<string> {
  const [row] = await tx<{ j: string }[]>`
    SELECT coalesce(json_agg(c), '[]')::text AS j FROM (${contributions(tx, where)}) c`;
  return row?.j ?? "[]";
}

/** Removes the emptied cells of `hours` that no other transaction holds. */
async function pruneRollup(tx: Tx, workspace: string, hours: readonly number[]): Promise<void> {
  if (hours.length === 0) return;
  await tx`
    DELETE FROM sessiond_usage_rollup WHERE ctid IN (
      SELECT ctid FROM sessiond_usage_rollup
      WHERE workspace = ${workspace} AND hour_ms IN ${tx(hours)} AND n = 0
      FOR UPDATE SKIP LOCKED)`;
}

/**
 * Takes the workspace's usage lock shared until the transaction ends: a
 * delete takes it before locking its session rows, as counting does (so
 * that a re-pricing waiting for it never sits between the two).
 */
export async function lockUsageShared(tx: Tx, workspace: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock_shared(${WORKSPACE_LOCK_CLASS}, hashtext(${workspace}))`;
}

/**
 * Removes the usage rows of sessions `ids` of `workspace` (deleted) and
 * subtracts them from the roll-up, inside the caller's transaction (the
 * delete's, after the session rows went: delete.ts). Holds the
 * workspace's usage lock shared until the transaction ends.
 */
export async function dropUsage(tx: Tx, workspace: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await lockUsageShared(tx, workspace);
  const rows = tx`u.workspace = ${workspace} AND u.session_id IN ${tx(ids)}`;
  await applyToRollup(tx, undefined, await contributionsJson(tx, rows));
  const gone = await tx<{ hour_ms: string }[]>`
    DELETE FROM sessiond_usage WHERE workspace = ${workspace} AND session_id IN ${tx(ids)}
    RETURNING hour_ms`;
  await tx`
    DELETE FROM sessiond_usage_heads WHERE workspace = ${workspace} AND session_id IN ${tx(ids)}`;
  await pruneRollup(tx, workspace, [...new Set(gone.map((g) => Number(g.hour_ms)))]);
}

interface StaleRow {
  session_id: string;
  /** Null: the session is gone (its heads row is left: deleted by an older sessiond). */
  head_seq: number | null;
  incarnation: string | null;
  counted_head: number | null;
  counted_incarnation: string | null;
  /** The session's folded tags (JSON), null when not folded at its head. */
  tags: string | null;
}

/**
 * The sessions whose entries are not all counted (head moved on, or
 * another incarnation, or gone), in ONE scan of the workspace's session
 * rows (their counted head and incarnation are on them: migration 15) that
 * also counts the rows counted, against the workspace's heads rows: more
 * heads than counted sessions means a session went without its usage
 * (deleted by an older sessiond), and only then are they looked for.
 */
async function staleSessions(ctx: PgContext, workspace: string): Promise<StaleRow[]> {
  const [scan] = await ctx.db(
    "finding sessions with new usage",
    () => ctx.sql<{ stale: string; counted: string; heads: string }[]>`
      SELECT coalesce(json_agg(json_build_object('session_id', session_id,
          'head_seq', head_seq, 'incarnation', incarnation::text,
          'tags', CASE WHEN tags_head = head_seq THEN tags::text END))
          FILTER (WHERE usage_head IS DISTINCT FROM head_seq
            OR usage_incarnation IS DISTINCT FROM incarnation), '[]')::text AS stale,
        count(*) FILTER (WHERE usage_incarnation IS NOT NULL)::text AS counted,
        (SELECT count(*) FROM sessiond_usage_heads WHERE workspace = ${workspace})::text AS heads
      FROM sessiond_sessions WHERE workspace = ${workspace}`,
  );
  const stale = JSON.parse(scan?.stale ?? "[]") as Array<
    Pick<StaleRow, "session_id" | "head_seq" | "incarnation" | "tags">
  >;
  const gone =
    Number(scan?.heads ?? 0) > Number(scan?.counted ?? 0)
      ? await ctx.db(
          "finding deleted sessions with usage",
          () => ctx.sql<{ session_id: string }[]>`
            SELECT h.session_id FROM sessiond_usage_heads h
            WHERE h.workspace = ${workspace} AND NOT EXISTS (
              SELECT 1 FROM sessiond_sessions s
              WHERE s.workspace = h.workspace AND s.session_id = h.session_id)`,
        )
      : [];
  if (stale.length === 0 && gone.length === 0) return [];
  const counted = new Map<string, { head: number; incarnation: string }>();
  if (stale.length > 0) {
    for (const h of await ctx.db(
      "reading counted heads",
      () => ctx.sql<{ session_id: string; head: number; incarnation: string }[]>`
        SELECT session_id, head, incarnation::text AS incarnation FROM sessiond_usage_heads
        WHERE workspace = ${workspace} AND session_id IN ${ctx.sql(stale.map((r) => r.session_id))}`,
    )) {
      counted.set(h.session_id, h);
    }
  }
  return [
    ...stale.map((r) => ({
      ...r,
      counted_head: counted.get(r.session_id)?.head ?? null,
      counted_incarnation: counted.get(r.session_id)?.incarnation ?? null,
    })),
    ...gone.map((g) => ({
      session_id: g.session_id,
      head_seq: null,
      incarnation: null,
      counted_head: null,
      counted_incarnation: null,
      tags: null,
    })),
  ];
}

/** The price table digest the workspace's rows are priced with. */
async function storedPriceKey(ctx: PgContext, workspace: string): Promise<string | undefined> {
  const [row] = await ctx.db(
    "reading the usage price table",
    () => ctx.sql<{ price_key: string }[]>`
      SELECT price_key FROM sessiond_usage_prices WHERE workspace = ${workspace}`,
  );
  return row?.price_key;
}

/**
 * Prices every usage row of `workspace` with `prices` again and rebuilds
 * its roll-up, in one transaction holding the workspace's usage lock
 * exclusively (no count or delete meanwhile).
 */
async function reprice(
  ctx: PgContext,
  workspace: string,
  prices: PriceTable,
  key: string,
): Promise<void> {
  await ctx.db("pricing usage sums", () =>
    ctx.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${WORKSPACE_LOCK_CLASS}, hashtext(${workspace}))`;
      const [now] = await tx<{ price_key: string }[]>`
        SELECT price_key FROM sessiond_usage_prices WHERE workspace = ${workspace}`;
      if (now?.price_key === key) return;
      const rows = await tx<
        (SumColumns & { session_id: string; hour_ms: string; model: string })[]
      >`
        SELECT session_id, hour_ms, model, ${tx(SUM_COLUMNS)} FROM sessiond_usage
        WHERE workspace = ${workspace} AND u_messages > 0`;
      const priced = rows.map((r) => ({
        session_id: r.session_id,
        hour_ms: r.hour_ms,
        model: r.model,
        ...pricedPart(rawFromColumns(r), r.model, Number(r.hour_ms), prices),
      }));
      if (priced.length > 0) {
        await tx`
          UPDATE sessiond_usage u SET p_currency = v.p_currency, p_units = v.p_units
          FROM jsonb_to_recordset(${JSON.stringify(priced)}::text::jsonb)
            AS v(session_id text, hour_ms bigint, model text, p_currency text, p_units numeric)
          WHERE u.workspace = ${workspace} AND u.session_id = v.session_id
            AND u.hour_ms = v.hour_ms AND u.model = v.model`;
      }
      await tx`DELETE FROM sessiond_usage_rollup WHERE workspace = ${workspace}`;
      await tx`
        INSERT INTO sessiond_usage_rollup (${tx.unsafe(ROLLUP_KEY)}, n, messages, input, output,
          cache_read, cache_write, reasoning, unpriced, units)
        ${contributions(tx, tx`u.workspace = ${workspace}`)}`;
      await tx`
        INSERT INTO sessiond_usage_prices (workspace, price_key) VALUES (${workspace}, ${key})
        ON CONFLICT (workspace) DO UPDATE SET price_key = excluded.price_key`;
    }),
  );
}

/** Counts into the sums the entries the stale sessions gained since (and drops the gone ones). */
async function catchUpUsage(
  ctx: PgContext,
  engine: StorageEngine,
  workspace: string,
  stale: readonly StaleRow[],
  prices: PriceTable,
  key: string,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < stale.length) {
      const row = stale[next++] as StaleRow;
      const sk = { workspace, sessionId: row.session_id };
      if (row.head_seq === null) await dropGone(ctx, sk);
      else await countSession(ctx, engine, sk, row, prices, key);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, stale.length) }, worker));
}

/** The usage of a session deleted without removing it (an older sessiond), removed. */
async function dropGone(ctx: PgContext, key: SessionKey): Promise<void> {
  await ctx.db("removing usage of a deleted session", () =>
    ctx.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${SESSION_LOCK_CLASS}, hashtext(${`${key.workspace}/${key.sessionId}`}))`;
      const [still] = await tx`
        SELECT 1 FROM sessiond_sessions
        WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`;
      if (still === undefined) await dropUsage(tx, key.workspace, [key.sessionId]);
    }),
  );
}

interface UsageRowValues extends SumColumns {
  workspace: string;
  session_id: string;
  hour_ms: number;
  model: string;
  first_seq: number;
  last_seq: number;
  p_currency: string | null;
  p_units: string | null;
  prev_model_ms: number;
  prev_any_ms: number;
  first_model: boolean;
}

/** A session's rows as written: priced, with their places among the session's rows. */
function rowValues(
  key: SessionKey,
  groups: readonly HourUsage[],
  prices: PriceTable,
): UsageRowValues[] {
  const sorted = [...groups].sort((a, b) =>
    a.hour !== b.hour ? a.hour - b.hour : a.model < b.model ? -1 : a.model > b.model ? 1 : 0,
  );
  const lastOfModel = new Map<string, number>();
  let prevHour = NO_HOUR;
  let hour = NO_HOUR;
  return sorted.map((g) => {
    const first = g.hour !== hour;
    if (first) {
      prevHour = hour;
      hour = g.hour;
    }
    const prevModel = lastOfModel.get(g.model) ?? NO_HOUR;
    lastOfModel.set(g.model, g.hour);
    return {
      workspace: key.workspace,
      session_id: key.sessionId,
      hour_ms: g.hour,
      model: g.model,
      ...columnsFromRaw(g.raw),
      first_seq: g.firstSeq,
      last_seq: g.lastSeq,
      ...pricedPart(g.raw, g.model, g.hour, prices),
      prev_model_ms: prevModel,
      prev_any_ms: prevHour,
      first_model: first,
    };
  });
}

/**
 * Adds session `key`'s entries after its counted head to its sums, in one
 * transaction under the session's advisory lock, which checks again that
 * nobody counted them meanwhile, that the session is still the same
 * incarnation and that the workspace's rows are still priced with
 * `prices` (else it is left for the next report); the session row is
 * locked (against a delete, and appends wait) and gets the counted head
 * and incarnation (`usage_head`, `usage_incarnation`). The
 * session's rows are written again whole (their places among each other
 * may change) and the roll-up gets the difference.
 */
async function countSession(
  ctx: PgContext,
  engine: StorageEngine,
  key: SessionKey,
  row: StaleRow,
  prices: PriceTable,
  pkey: string,
): Promise<void> {
  const headSeq = row.head_seq as number;
  const fresh = row.counted_incarnation !== row.incarnation;
  const from = fresh ? 0 : (row.counted_head ?? 0);
  const delta = new Map<string, HourUsage>();
  // A fork's copies (read first, from seq 1) are left out: billed in its source.
  const counter = new UsageCounter(delta);
  let after = from;
  let head = from;
  let tags: Tags;
  try {
    while (after < headSeq) {
      const page = await engine.read(key, after, Math.min(READ_PAGE, headSeq - after));
      if (page.entries.length === 0) break;
      for (const e of page.entries) {
        after = Number(e.seq);
        if (after > headSeq) break;
        counter.add(e, after);
        head = after;
      }
    }
    counter.finish();
    if (row.tags !== null) tags = JSON.parse(row.tags) as Tags;
    else {
      // Not folded in its row (last written by an older sessiond): its record's.
      const [rec] = await engine.list(key.workspace, [key.sessionId]);
      if (rec === undefined) return;
      tags = rec.tags;
    }
  } catch {
    // Gone or unreadable now: the next report tries again.
    return;
  }
  const lockKey = `${key.workspace}/${key.sessionId}`;
  await ctx.db("counting usage", () =>
    ctx.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock_shared(${WORKSPACE_LOCK_CLASS}, hashtext(${key.workspace}))`;
      await tx`SELECT pg_advisory_xact_lock(${SESSION_LOCK_CLASS}, hashtext(${lockKey}))`;
      const [now] = await tx<
        { incarnation: string; head: number | null; hinc: string | null; pk: string | null }[]
      >`
        SELECT s.incarnation::text AS incarnation, h.head, h.incarnation::text AS hinc,
          (SELECT price_key FROM sessiond_usage_prices WHERE workspace = s.workspace) AS pk
        FROM sessiond_sessions s
        LEFT JOIN sessiond_usage_heads h ON h.workspace = s.workspace AND h.session_id = s.session_id
        WHERE s.workspace = ${key.workspace} AND s.session_id = ${key.sessionId}
        FOR NO KEY UPDATE OF s`;
      if (now === undefined || now.incarnation !== row.incarnation || now.pk !== pkey) return;
      // Counted meanwhile by another report: its head is where this one started, or nothing to do.
      if ((now.hinc === row.incarnation ? (now.head ?? 0) : 0) !== from) return;
      const mine = tx`u.workspace = ${key.workspace} AND u.session_id = ${key.sessionId}`;
      const minus = await contributionsJson(tx, mine);
      const groups = new Map<string, HourUsage>();
      const hours = new Set<number>();
      if (!fresh) {
        for (const o of await tx<
          (SumColumns & { hour_ms: string; model: string; first_seq: number; last_seq: number })[]
        >`
          SELECT hour_ms, model, ${tx(SUM_COLUMNS)}, first_seq, last_seq FROM sessiond_usage
          WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`) {
          const hour = Number(o.hour_ms);
          groups.set(groupKey(hour, o.model), {
            hour,
            model: o.model,
            raw: rawFromColumns(o),
            firstSeq: o.first_seq,
            lastSeq: o.last_seq,
          });
        }
      }
      for (const [k, d] of delta) {
        const g = groups.get(k);
        if (g === undefined) groups.set(k, d);
        else {
          mergeRaw(g.raw, d.raw);
          g.firstSeq = Math.min(g.firstSeq, d.firstSeq);
          g.lastSeq = Math.max(g.lastSeq, d.lastSeq);
        }
      }
      const old = await tx<{ hour_ms: string }[]>`
        DELETE FROM sessiond_usage
        WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
        RETURNING hour_ms`;
      for (const o of old) hours.add(Number(o.hour_ms));
      const values = rowValues(key, [...groups.values()], prices);
      if (values.length > 0) await tx`INSERT INTO sessiond_usage ${tx(values)}`;
      await tx`
        INSERT INTO sessiond_usage_heads (workspace, session_id, incarnation, head, tags)
        VALUES (${key.workspace}, ${key.sessionId}, ${row.incarnation}, ${head},
          ${JSON.stringify(tags)}::text::jsonb)
        ON CONFLICT (workspace, session_id) DO UPDATE
          SET incarnation = excluded.incarnation, head = excluded.head, tags = excluded.tags`;
      await tx`
        UPDATE sessiond_sessions SET usage_head = ${head}, usage_incarnation = ${row.incarnation}
        WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`;
      await applyToRollup(tx, contributions(tx, mine), minus);
      await pruneRollup(tx, key.workspace, [...hours]);
    }),
  );
}

/**
 * Brings the workspace's sums up to date for a report priced with
 * `prices`: prices them again when they were priced with another table,
 * then counts the stale sessions. `read` is the report's query, sent with
 * the stale sessions (postgres.js pipelines them): when nothing moved (a
 * warm report) its first answer is current and the report costs one round
 * trip. Undefined when another replica keeps pricing with another table.
 */
async function current<T extends { pk: string | null }>(
  ctx: PgContext,
  engine: StorageEngine,
  workspace: string,
  prices: PriceTable,
  read: () => Promise<T>,
): Promise<T | undefined> {
  const key = priceKey(prices);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const [stale, first] = await Promise.all([staleSessions(ctx, workspace), read()]);
    if (first.pk !== key) {
      if ((await storedPriceKey(ctx, workspace)) !== key) {
        await reprice(ctx, workspace, prices, key);
      }
      continue;
    }
    if (stale.length === 0) return first;
    await catchUpUsage(ctx, engine, workspace, stale, prices, key);
    const again = await read();
    if (again.pk === key) return again;
  }
  return undefined;
}

/** The engine's usageSums: bring the sums up to date, then one range query. */
export async function usageSums(
  ctx: PgContext,
  engine: StorageEngine,
  workspace: string,
  q: UsageSumsQuery,
  prices: PriceTable = NO_PRICES,
): Promise<UsageSessionSums[]> {
  const found = await current(ctx, engine, workspace, prices, async () => {
    const [rows, [k]] = await Promise.all([
      sumRows(ctx, workspace, q),
      ctx.db(
        "reading the usage price table",
        () => ctx.sql<{ pk: string | null }[]>`
          SELECT (SELECT price_key FROM sessiond_usage_prices WHERE workspace = ${workspace}) AS pk`,
      ),
    ]);
    return { rows, pk: k?.pk ?? null };
  });
  // Priced with another table by another replica meanwhile: the rows' raw sums are still exact.
  const rows = found?.rows ?? (await sumRows(ctx, workspace, q));
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

/** Most group_by_tags keys the query's columns hold (store: MAX_GROUP_BY_TAGS). */
const TAG_COLUMNS = 8;

/** A grouped row of the roll-up: a group's ("g" = 0) or the total's (g = 1) cell of a currency. */
interface GroupRow {
  g: number;
  b: string | null;
  m: string | null;
  /** JSON text of the tag values. */
  t: string | null;
  /** '' for the token sums. */
  currency: string;
  n: string;
  messages: string;
  input: string;
  output: string;
  cache_read: string;
  cache_write: string;
  reasoning: string;
  unpriced: string;
  units: string;
  /** Distinct sessions of the group (of the window, in the total's row). */
  sessions: string;
}

/**
 * The engine's usageGroups: the report of whole hours from the roll-up,
 * after bringing it up to date. Undefined (the caller then groups the
 * per-session sums, `usageSums`) when it cannot be had priced with `prices`.
 */
export async function usageGroups(
  ctx: PgContext,
  engine: StorageEngine,
  workspace: string,
  q: UsageGroupsQuery,
  prices: PriceTable,
): Promise<UsageGroups | undefined> {
  if (q.groupByTags.length > TAG_COLUMNS) return undefined;
  const found = await current(ctx, engine, workspace, prices, () => groupQuery(ctx, workspace, q));
  if (found === undefined) return undefined;
  const byKey = new Map<string, UsageGroup>();
  const keyOf = (r: GroupRow) => JSON.stringify([r.b, r.m, r.t]);
  let total = emptyTotals();
  let sessions = 0;
  const totalsOf = (r: GroupRow): Totals => ({
    messages: Number(r.messages),
    input: BigInt(r.input),
    output: BigInt(r.output),
    cacheRead: BigInt(r.cache_read),
    cacheWrite: BigInt(r.cache_write),
    reasoning: BigInt(r.reasoning),
    cost: new Map(),
    unpricedMessages: Number(r.unpriced),
  });
  const rows = found.rows.filter((r) => Number(r.n) > 0);
  for (const r of rows) {
    if (r.currency !== "") continue;
    if (r.g !== 0) {
      total = totalsOf(r);
      sessions = Number(r.sessions);
      continue;
    }
    byKey.set(keyOf(r), {
      bucketMs: Number(r.b),
      model: r.m ?? "",
      values: r.t === null ? [] : (JSON.parse(r.t) as string[]),
      totals: totalsOf(r),
      sessions: Number(r.sessions),
    });
  }
  for (const r of rows) {
    if (r.currency === "") continue;
    const into = r.g !== 0 ? total : byKey.get(keyOf(r))?.totals;
    if (into === undefined) continue;
    into.cost.set(r.currency, (into.cost.get(r.currency) ?? 0n) + BigInt(r.units));
  }
  return { groups: [...byKey.values()], total, sessions };
}

/**
 * The grouped query over the roll-up's cells of the window, with the price
 * table digest in the same snapshot: sums per (bucket, model, tag values,
 * currency) and per currency for the total (GROUPING SETS). A session
 * counts once in a group: the cells of its rows whose previous hour (with
 * the same model when grouped by model; else also the first model of their
 * hour) is before the group's start or the window's.
 */
async function groupQuery(
  ctx: PgContext,
  workspace: string,
  q: UsageGroupsQuery,
): Promise<{ rows: GroupRow[]; pk: string | null }> {
  const sql = ctx.sql;
  const bucket =
    q.bucket === "hour"
      ? sql`hour_ms`
      : q.bucket === "day"
        ? sql`(floor(hour_ms / 86400000.0) * 86400000)::bigint`
        : sql`0::bigint`;
  const start =
    q.bucket === "hour"
      ? sql`hour_ms`
      : q.bucket === "day"
        ? sql`greatest((floor(hour_ms / 86400000.0) * 86400000)::bigint, ${q.fromHour}::bigint)`
        : sql`${q.fromHour}::bigint`;
  const model = q.byModel ? sql`model` : sql`''`;
  const firstInGroup = q.byModel
    ? sql`prev_model_ms < ${start}`
    : sql`first_model AND prev_any_ms < ${start}`;
  const tags =
    q.groupByTags.length === 0
      ? sql`ARRAY[]::text[]`
      : sql`ARRAY[${q.groupByTags
          .map((k) => sql`coalesce(tags ->> ${k}::text, '')`)
          .reduce((list, one) => sql`${list}, ${one}`)}]`;
  const filter =
    Object.keys(q.tags).length > 0
      ? sql`AND tags @> ${JSON.stringify(q.tags)}::text::jsonb`
      : sql``;
  const [row] = await ctx.db(
    "grouping usage sums",
    () => sql<{ pk: string | null; rows: string }[]>`
      SELECT (SELECT price_key FROM sessiond_usage_prices WHERE workspace = ${workspace}) AS pk,
        (SELECT coalesce(json_agg(x), '[]') FROM (
          SELECT GROUPING(b, m, t) AS g, b::text AS b, m, array_to_json(t)::text AS t, currency,
            sum(n)::text AS n, sum(messages)::text AS messages, sum(input)::text AS input,
            sum(output)::text AS output, sum(cache_read)::text AS cache_read,
            sum(cache_write)::text AS cache_write, sum(reasoning)::text AS reasoning,
            sum(unpriced)::text AS unpriced, sum(units)::text AS units,
            (CASE WHEN GROUPING(b, m, t) = 0 THEN coalesce(sum(n) FILTER (WHERE first_in_group), 0)
              ELSE coalesce(sum(n) FILTER (WHERE first_in_window), 0) END)::text AS sessions
          FROM (
            SELECT ${bucket} AS b, ${model} AS m, ${tags} AS t, currency, n, messages, input,
              output, cache_read, cache_write, reasoning, unpriced, units,
              ${firstInGroup} AS first_in_group,
              first_model AND prev_any_ms < ${q.fromHour}::bigint AS first_in_window
            FROM sessiond_usage_rollup
            WHERE workspace = ${workspace} AND hour_ms >= ${q.fromHour}
              AND hour_ms < ${q.toHour} AND n > 0 ${filter}
          ) r
          GROUP BY GROUPING SETS ((b, m, t, currency), (currency))
        ) x)::text AS rows`,
  );
  return { rows: JSON.parse(row?.rows ?? "[]") as GroupRow[], pk: row?.pk ?? null };
}
