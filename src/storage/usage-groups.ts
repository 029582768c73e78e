/**
 * UsageReport's groups summed from listing records as numbers (the JSONL
 * engine's usageGroups): see groupUsage.
 */
import { type Tags, tagTest } from "../core/tags.js";
import {
  addTotals,
  emptyTotals,
  type PriceRow,
  type PriceTable,
  priceRaw,
  priceRowFor,
  type Totals,
} from "../core/usage-sums.js";
import type { SessionRecord, UsageGroup, UsageGroups, UsageGroupsQuery } from "./engine.js";
import {
  COUNT,
  COUNTS,
  countsOfRaw,
  ROW,
  rawOfCounts,
  type UsageRowSource,
} from "./usage-report.js";

function hasUsageRows(r: SessionRecord): r is SessionRecord & UsageRowSource {
  return typeof (r as Partial<UsageRowSource>).usageRows === "function";
}

const DAY_MS = 86_400_000;
const MTOK = 1_000_000n;

/** One row of the report being summed, its figures as numbers while they are exact. */
interface Acc {
  readonly bucketMs: number;
  readonly model: string;
  readonly values: readonly string[];
  /** COUNT.messages .. COUNT.reasoning. */
  readonly counts: Float64Array;
  /** Costs already exact in 10^-12 units: caller-set, and groups priced one by one. */
  readonly cost: Map<string, bigint>;
  /** Uncosted token sums (input, output, cache read, cache write) per price row whose prices are whole micro-units. */
  readonly byPrice: Map<PriceRow, Float64Array>;
  unpriced: number;
  sessions: number;
  /** The index of the last session counted in `sessions`. */
  last: number;
}

/** Prices per million tokens that are whole 10^-6 units: the cost of any token count is exact, no rounding. */
function isWhole(row: PriceRow): boolean {
  return (
    row.inputPerMTok % MTOK === 0n &&
    row.outputPerMTok % MTOK === 0n &&
    row.cacheReadPerMTok % MTOK === 0n &&
    row.cacheWritePerMTok % MTOK === 0n
  );
}

/**
 * A whole report (StorageEngine.usageGroups) from listing records: every
 * record that is ok, holds `q.tags` and knows its usage, its groups of the
 * hours asked, grouped as asked and priced as the store prices them (each
 * (session, hour, model) group rounded once). Undefined when a sum would
 * not be exact as a number (the store then sums the records with bigints).
 *
 * Why: the store's own summing makes a RawUsage of bigints per session
 * group and prices each; over 10,000 sessions that, and the garbage it
 * leaves, was most of a report. Here the counts are added as numbers
 * (exact below 2^53, checked at the end), straight from the rows of the
 * records that keep them (the listing index's), and a group whose price
 * row is in whole 10^-6 units per million tokens (every price with at
 * most six decimals per million) is priced with its row's other groups in
 * one sum: its cost then needs no rounding, so the sum of the groups'
 * costs is the cost of their sum. Other groups are priced one by one.
 */
export function groupUsage(
  records: readonly SessionRecord[],
  q: UsageGroupsQuery,
  prices: PriceTable,
): UsageGroups | undefined {
  const holds = tagTest(q.tags);
  /** Accumulators by tag values' key, then model, then bucket. */
  const byValues = new Map<string, Map<string, Map<number, Acc>>>();
  const valuesOf = new Map<Tags, { key: string; values: readonly string[] }>();
  const priceOf = new Map<string, Map<number, PriceRow | null>>();
  const whole = new Map<PriceRow, boolean>();
  const accs: Acc[] = [];
  let sessions = 0;
  let session = -1;
  let counted = false;
  let byModel: Map<string, Map<number, Acc>> = new Map();
  let values: readonly string[] = [];
  let exact = true;

  const rowFor = (model: string, hour: number): PriceRow | undefined => {
    let hours = priceOf.get(model);
    if (hours === undefined) {
      hours = new Map();
      priceOf.set(model, hours);
    }
    let row = hours.get(hour);
    if (row === undefined) {
      row = priceRowFor(prices, model, hour) ?? null;
      hours.set(hour, row);
    }
    return row ?? undefined;
  };

  const add = (
    hour: number,
    model: string,
    n: ArrayLike<number>,
    at: number,
    callerCost?: ReadonlyMap<string, bigint>,
  ): void => {
    if (hour < q.fromHour || hour >= q.toHour || n[at + COUNT.messages] === 0) return;
    const bucketMs =
      q.bucket === "hour" ? hour : q.bucket === "day" ? Math.floor(hour / DAY_MS) * DAY_MS : 0;
    const m = q.byModel ? model : "";
    let buckets = byModel.get(m);
    if (buckets === undefined) {
      buckets = new Map();
      byModel.set(m, buckets);
    }
    let acc = buckets.get(bucketMs);
    if (acc === undefined) {
      acc = {
        bucketMs,
        model: m,
        values,
        counts: new Float64Array(COUNT.reasoning + 1),
        cost: new Map(),
        byPrice: new Map(),
        unpriced: 0,
        sessions: 0,
        last: -1,
      };
      buckets.set(bucketMs, acc);
      accs.push(acc);
    }
    if (acc.last !== session) {
      acc.last = session;
      acc.sessions++;
    }
    counted = true;
    const c = acc.counts;
    for (let k = 0; k <= COUNT.reasoning; k++) c[k] = (c[k] as number) + (n[at + k] as number);
    if (callerCost !== undefined) {
      for (const [currency, units] of callerCost) {
        acc.cost.set(currency, (acc.cost.get(currency) ?? 0n) + units);
      }
    }
    const uncosted = n[at + COUNT.uncostedMessages] as number;
    if (uncosted === 0) return;
    const row = rowFor(model, hour);
    if (row === undefined) {
      acc.unpriced += uncosted;
      return;
    }
    let w = whole.get(row);
    if (w === undefined) {
      w = isWhole(row);
      whole.set(row, w);
    }
    if (w) {
      let sums = acc.byPrice.get(row);
      if (sums === undefined) {
        sums = new Float64Array(4);
        acc.byPrice.set(row, sums);
      }
      for (let k = 0; k < 4; k++) {
        sums[k] = (sums[k] as number) + (n[at + COUNT.uncostedInput + k] as number);
      }
      return;
    }
    // Rounded once for this (session, hour, model) group, as the store does.
    const priced = priceRaw(rawOfCounts(n, at), model, hour, prices);
    for (const [currency, units] of priced.cost) {
      acc.cost.set(currency, (acc.cost.get(currency) ?? 0n) + units);
    }
  };
  const visit = (hour: number, model: string, nums: Float64Array, at: number): void =>
    add(hour, model, nums, at + ROW.counts);
  const scratch = new Float64Array(COUNTS);

  for (const r of records) {
    if (r.health !== "ok" || !holds(r.tags)) continue;
    session++;
    counted = false;
    let v = valuesOf.get(r.tags);
    if (v === undefined) {
      const list = q.groupByTags.map((k) => r.tags[k] ?? "");
      v = { key: JSON.stringify(list), values: list };
      valuesOf.set(r.tags, v);
    }
    values = v.values;
    let models = byValues.get(v.key);
    if (models === undefined) {
      models = new Map();
      byValues.set(v.key, models);
    }
    byModel = models;
    if (!hasUsageRows(r) || !r.usageRows(q.fromHour, q.toHour, visit)) {
      const usage = r.usage;
      if (usage === undefined) continue;
      for (const g of usage.values()) {
        if (g.hour < q.fromHour || g.hour >= q.toHour) continue;
        const costs = g.raw.callerCost;
        if (costs.size > 0) {
          // countsOfRaw refuses caller costs: count them apart.
          const bare = { ...g.raw, callerCost: new Map<string, bigint>() };
          if (!countsOfRaw(bare, scratch, 0)) return undefined;
          add(g.hour, g.model, scratch, 0, costs);
        } else {
          if (!countsOfRaw(g.raw, scratch, 0)) return undefined;
          add(g.hour, g.model, scratch, 0);
        }
      }
    }
    if (counted) sessions++;
  }

  const groups: UsageGroup[] = [];
  const total = emptyTotals();
  for (const acc of accs) {
    const c = acc.counts;
    for (let k = 0; k < c.length; k++) if (!Number.isSafeInteger(c[k])) exact = false;
    const cost = new Map(acc.cost);
    for (const [row, sums] of acc.byPrice) {
      for (let k = 0; k < 4; k++) if (!Number.isSafeInteger(sums[k])) exact = false;
      const units =
        BigInt(sums[0] as number) * row.inputPerMTok +
        BigInt(sums[1] as number) * row.outputPerMTok +
        BigInt(sums[2] as number) * row.cacheReadPerMTok +
        BigInt(sums[3] as number) * row.cacheWritePerMTok;
      cost.set(row.currency, (cost.get(row.currency) ?? 0n) + units / MTOK);
    }
    if (!exact || !Number.isSafeInteger(acc.unpriced)) return undefined;
    const totals: Totals = {
      messages: c[COUNT.messages] as number,
      input: BigInt(c[COUNT.input] as number),
      output: BigInt(c[COUNT.output] as number),
      cacheRead: BigInt(c[COUNT.cacheRead] as number),
      cacheWrite: BigInt(c[COUNT.cacheWrite] as number),
      reasoning: BigInt(c[COUNT.reasoning] as number),
      cost,
      unpricedMessages: acc.unpriced,
    };
    addTotals(total, totals);
    groups.push({
      bucketMs: acc.bucketMs,
      model: acc.model,
      values: acc.values,
      totals,
      sessions: acc.sessions,
    });
  }
  return { groups, total, sessions };
}
