/**
 * UsageReport (issue 42): a workspace's usage over a time window in one
 * call, grouped by time bucket, model and the values of chosen tag keys.
 *
 * The engines keep raw sums per session and (UTC hour, model)
 * (storage/usage-report.ts): in the listing records (memory, JSONL: with
 * the persisted listing index) or in a table (PostgreSQL). A report reads
 * those sums, never whole logs, except at the window's edges: an hour the
 * window cuts (a start or end that is not a whole hour) is summed again
 * from the entries of the sessions that have messages in it, only the seqs
 * of those messages, so that the figures are exact for any window.
 *
 * Pricing (core/usage-sums.ts): each (session, hour, model) sum is priced
 * once with the table's row for its model at that hour, then the priced
 * sums are added up.
 */
import { create } from "@bufbuild/protobuf";
import {
  type Timestamp,
  timestampDate,
  timestampFromMs,
  timestampMs,
} from "@bufbuild/protobuf/wkt";
import {
  UsageBucket,
  type UsageReportRequest,
  type UsageReportResponse,
  UsageReportResponseSchema,
  UsageRowSchema,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { timestampMillis } from "../core/entry.js";
import { invalidArgument, isSessiondError } from "../core/errors.js";
import { checkTags, hasTags, TAG_KEY_PATTERN, type Tags } from "../core/tags.js";
import {
  addTotals,
  emptyTotals,
  hourStartMs,
  NO_PRICES,
  type PriceTable,
  priceRaw,
  type RawUsage,
  type Totals,
  totalsToProto,
} from "../core/usage-sums.js";
import type { StorageEngine, UsageGroup, UsageSessionSums } from "../storage/engine.js";
import { countEntry, type HourUsage } from "../storage/usage-report.js";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Longest window. */
export const MAX_USAGE_WINDOW_DAYS = 400;
/** Most group_by_tags keys. */
export const MAX_GROUP_BY_TAGS = 8;
/** Entries read per page when an edge hour is summed again. */
const EDGE_PAGE = 1000;

/** A UsageReportRequest, checked. */
export interface UsageQuery {
  readonly workspace: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly bucket: UsageBucket;
  readonly byModel: boolean;
  readonly groupByTags: readonly string[];
  readonly tags: Tags;
}

function windowMs(ts: Timestamp | undefined, field: string): number {
  if (ts === undefined) throw invalidArgument(`${field} is required`);
  const ms = timestampMs(ts);
  if (!Number.isFinite(ms) || ts.nanos < 0 || ts.nanos > 999_999_999) {
    throw invalidArgument(`${field} is not a valid timestamp`);
  }
  // Whole milliseconds, as entries' timestamps are compared (timestampMillis).
  return Math.floor(ms);
}

/** Checks a request (INVALID_ARGUMENT naming the field); `workspace` already resolved. */
export function checkUsageQuery(req: UsageReportRequest, workspace: string): UsageQuery {
  const startMs = windowMs(req.start, "start");
  const endMs = windowMs(req.end, "end");
  if (endMs <= startMs) {
    throw invalidArgument(
      `end (${timestampDate(req.end as Timestamp).toISOString()}) must be after start (${timestampDate(req.start as Timestamp).toISOString()})`,
    );
  }
  if (endMs - startMs > MAX_USAGE_WINDOW_DAYS * DAY_MS) {
    throw invalidArgument(
      `the window from start to end is over ${MAX_USAGE_WINDOW_DAYS} days (${Math.ceil((endMs - startMs) / DAY_MS)})`,
    );
  }
  if (
    req.bucket !== UsageBucket.UNSPECIFIED &&
    req.bucket !== UsageBucket.HOUR &&
    req.bucket !== UsageBucket.DAY
  ) {
    throw invalidArgument(`bucket ${req.bucket} is not a UsageBucket`);
  }
  if (req.groupByTags.length > MAX_GROUP_BY_TAGS) {
    throw invalidArgument(
      `group_by_tags has ${req.groupByTags.length} keys, at most ${MAX_GROUP_BY_TAGS} are allowed`,
    );
  }
  const seen = new Set<string>();
  req.groupByTags.forEach((k, i) => {
    if (!TAG_KEY_PATTERN.test(k)) {
      throw invalidArgument(
        `group_by_tags[${i}] ${JSON.stringify(k.slice(0, 80))} is not a tag key (letters, digits and ._/-, at most 64)`,
      );
    }
    if (seen.has(k))
      throw invalidArgument(`group_by_tags[${i}] ${JSON.stringify(k)} is given twice`);
    seen.add(k);
  });
  checkTags(req.tags, "tags", false);
  return {
    workspace,
    startMs,
    endMs,
    bucket: req.bucket,
    byModel: req.byModel,
    groupByTags: req.groupByTags,
    tags: req.tags,
  };
}

interface Group {
  readonly bucketMs: number;
  readonly model: string;
  readonly values: readonly string[];
  readonly totals: Totals;
  readonly sessions: Set<string>;
}

/**
 * The report of a checked query over `engine`, priced with `prices` (none:
 * every message without a caller cost is unpriced).
 */
export async function usageReport(
  engine: StorageEngine,
  q: UsageQuery,
  prices: PriceTable = NO_PRICES,
): Promise<UsageReportResponse> {
  const fromHour = hourStartMs(q.startMs);
  const toHour = hourStartMs(q.endMs - 1) + HOUR_MS;
  const grouped = await groupedReport(engine, q, prices);
  if (grouped !== undefined) return grouped;
  const sessions = await sessionSums(engine, q, fromHour, toHour, prices);

  const groups = new Map<string, Group>();
  const all = new Set<string>();
  const total = emptyTotals();
  const add = (s: UsageSessionSums, hour: number, model: string, raw: RawUsage) => {
    if (raw.messages === 0) return;
    const bucketMs =
      q.bucket === UsageBucket.HOUR
        ? hour
        : q.bucket === UsageBucket.DAY
          ? Math.floor(hour / DAY_MS) * DAY_MS
          : q.startMs;
    const m = q.byModel ? model : "";
    const values = q.groupByTags.map((k) => s.tags[k] ?? "");
    const key = JSON.stringify([bucketMs, m, values]);
    let g = groups.get(key);
    if (g === undefined) {
      g = { bucketMs, model: m, values, totals: emptyTotals(), sessions: new Set() };
      groups.set(key, g);
    }
    const priced = priceRaw(raw, model, hour, prices);
    addTotals(g.totals, priced);
    addTotals(total, priced);
    g.sessions.add(s.sessionId);
    all.add(s.sessionId);
  };

  for (const s of sessions) {
    /** The hours of this session the window cuts, and the seqs of their messages. */
    let edge: { hours: Set<number>; first: number; last: number } | undefined;
    for (const g of s.groups) {
      if (g.hour + HOUR_MS <= q.startMs || g.hour >= q.endMs) continue;
      if (g.hour >= q.startMs && g.hour + HOUR_MS <= q.endMs) {
        add(s, g.hour, g.model, g.raw);
        continue;
      }
      edge ??= { hours: new Set(), first: g.firstSeq, last: g.lastSeq };
      edge.hours.add(g.hour);
      edge.first = Math.min(edge.first, g.firstSeq);
      edge.last = Math.max(edge.last, g.lastSeq);
    }
    if (edge === undefined) continue;
    for (const g of (await edgeSums(engine, q, s.sessionId, edge)).values()) {
      add(s, g.hour, g.model, g.raw);
    }
  }

  return response(
    q,
    [...groups.values()].map((g) => ({ ...g, sessions: g.sessions.size })),
    total,
    all.size,
  );
}

function response(
  q: UsageQuery,
  groups: readonly UsageGroup[],
  total: Totals,
  sessions: number,
): UsageReportResponse {
  const rows = [...groups].sort(compareGroups).map((g) =>
    create(UsageRowSchema, {
      bucketStart: timestampFromMs(g.bucketMs),
      model: g.model,
      tags: Object.fromEntries(q.groupByTags.map((k, i) => [k, g.values[i] as string])),
      usage: totalsToProto(g.totals),
      sessions: BigInt(g.sessions),
    }),
  );
  return create(UsageReportResponseSchema, {
    rows,
    total: totalsToProto(total),
    sessions: BigInt(sessions),
  });
}

/** The report from the engine's own grouping, when it has one and the window is whole hours. */
async function groupedReport(
  engine: StorageEngine,
  q: UsageQuery,
  prices: PriceTable,
): Promise<UsageReportResponse | undefined> {
  if (engine.usageGroups === undefined || q.startMs % HOUR_MS !== 0 || q.endMs % HOUR_MS !== 0) {
    return undefined;
  }
  const bucket =
    q.bucket === UsageBucket.HOUR ? "hour" : q.bucket === UsageBucket.DAY ? "day" : "none";
  const found = await engine.usageGroups(
    q.workspace,
    {
      fromHour: q.startMs,
      toHour: q.endMs,
      bucket,
      byModel: q.byModel,
      groupByTags: q.groupByTags,
      tags: q.tags,
    },
    prices,
  );
  if (found === undefined) return undefined;
  // One bucket without buckets: it starts at the window's start.
  const groups =
    bucket === "none" ? found.groups.map((g) => ({ ...g, bucketMs: q.startMs })) : found.groups;
  return response(q, groups, found.total, found.sessions);
}

/** Rows by bucket start, then model, then tag values (JavaScript string order). */
function compareGroups(a: UsageGroup, b: UsageGroup): number {
  if (a.bucketMs !== b.bucketMs) return a.bucketMs - b.bucketMs;
  if (a.model !== b.model) return a.model < b.model ? -1 : 1;
  for (let i = 0; i < a.values.length; i++) {
    const x = a.values[i] as string;
    const y = b.values[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * Every session of the workspace holding the query's tags, with its groups
 * of the hours [fromHour, toHour): from the engine's own query when it has
 * one, else from the listing records (their usage sums).
 */
async function sessionSums(
  engine: StorageEngine,
  q: UsageQuery,
  fromHour: number,
  toHour: number,
  prices: PriceTable,
): Promise<UsageSessionSums[]> {
  if (engine.usageSums !== undefined) {
    // The prices too: an engine that prices its sums when it counts them (PostgreSQL) counts with them.
    const found = await engine.usageSums(q.workspace, { fromHour, toHour, tags: q.tags }, prices);
    return found.filter((s) => hasTags(s.tags, q.tags));
  }
  // As a filtered listing: the roots (JSONL: seeding its memo of records
  // from the persisted listing index), then the records of those that may
  // hold the tags.
  const hint = Object.keys(q.tags).length > 0 ? { tags: q.tags } : undefined;
  const roots = await engine.listRoots(q.workspace, hint);
  const out: UsageSessionSums[] = [];
  if (roots.length === 0) return out;
  for (const r of await engine.list(
    q.workspace,
    roots.map((root) => root.sessionId),
  )) {
    if (r.health !== "ok" || !hasTags(r.tags, q.tags)) continue;
    const usage = r.usage;
    if (usage === undefined) continue;
    const groups: HourUsage[] = [];
    for (const g of usage.values()) if (g.hour >= fromHour && g.hour < toHour) groups.push(g);
    if (groups.length > 0) out.push({ sessionId: r.sessionId, tags: r.tags, groups });
  }
  return out;
}

/**
 * The groups of session `sessionId`'s messages in the hours the window
 * cuts and inside the window, read from its entries (only the seqs of the
 * messages in those hours). A session deleted meanwhile adds nothing.
 */
async function edgeSums(
  engine: StorageEngine,
  q: UsageQuery,
  sessionId: string,
  edge: { hours: Set<number>; first: number; last: number },
): Promise<Map<string, HourUsage>> {
  const out = new Map<string, HourUsage>();
  const key = { workspace: q.workspace, sessionId };
  let after = edge.first - 1;
  while (after < edge.last) {
    let page: Awaited<ReturnType<StorageEngine["read"]>>;
    try {
      page = await engine.read(key, after, Math.min(EDGE_PAGE, edge.last - after));
    } catch (err) {
      if (isSessiondError(err, "NOT_FOUND")) return out;
      throw err;
    }
    if (page.entries.length === 0) break;
    for (const e of page.entries) {
      const seq = Number(e.seq);
      after = seq;
      if (seq > edge.last) break;
      const ms = timestampMillis(e.timestamp);
      if (ms < q.startMs || ms >= q.endMs || !edge.hours.has(hourStartMs(ms))) continue;
      countEntry(out, e, seq);
    }
  }
  return out;
}
