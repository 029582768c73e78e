/**
 * The one pricing rule of usage roll-ups (GetUsage, UsageReport). Tokens and
 * caller-set costs are summed raw per (hour, model) group; the messages
 * without a caller cost are priced only when a group is read, from the
 * operator's price table: cost = (input*in + output*out + cacheRead*cr +
 * cacheWrite*cw) / 10^6, exact in BigInt, rounded half-up to 12 fraction
 * digits once per group sum. Pricing is linear, so a group priced as one sum
 * equals the sum of its messages up to that one rounding, and a stored raw
 * sum can be priced again by a newer table. Reasoning tokens are a part of
 * output and have no price of their own.
 */
import { create } from "@bufbuild/protobuf";
import type { Usage } from "../../gen/sessiond/v1/entry_pb.js";
import { CostSchema } from "../../gen/sessiond/v1/entry_pb.js";
import { type UsageTotals, UsageTotalsSchema } from "../../gen/sessiond/v1/session_pb.js";
import { amountUnits, costProblem, formatUnits } from "./cost.js";
import { dataLoss, invalidArgument } from "./errors.js";

const HOUR_MS = 3_600_000;
/** The largest uint64: a token sum beyond it (only absurd inputs reach it) is answered as it. */
export const UINT64_MAX = 2n ** 64n - 1n;

/** `n` as a uint64 field can carry it: sums saturate at UINT64_MAX instead of failing the call. */
export function saturatedU64(n: bigint): bigint {
  return n > UINT64_MAX ? UINT64_MAX : n;
}
const MTOK = 1_000_000n;

/** One row of the price table; prices per million tokens in 10^-12 units. */
export interface PriceRow {
  readonly model: string;
  /** Milliseconds since the epoch, a whole UTC hour; 0 = since ever. */
  readonly fromMs: number;
  readonly currency: string;
  readonly inputPerMTok: bigint;
  readonly outputPerMTok: bigint;
  readonly cacheReadPerMTok: bigint;
  readonly cacheWritePerMTok: bigint;
}

/** The operator's prices: per model, rows ordered by `fromMs`. */
export interface PriceTable {
  readonly rows: readonly PriceRow[];
}

/** A table without rows: every message without a caller cost is unpriced. */
export const NO_PRICES: PriceTable = { rows: [] };

/** Raw sums of one group: what can be added before any price is applied. */
export interface RawUsage {
  messages: number;
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
  reasoning: bigint;
  /** Caller-set costs per currency, in 10^-12 units. */
  callerCost: Map<string, bigint>;
  /** The messages without a caller cost: priced when read. */
  uncosted: {
    messages: number;
    input: bigint;
    output: bigint;
    cacheRead: bigint;
    cacheWrite: bigint;
  };
}

/** Priced sums, ready for UsageTotals. */
export interface Totals {
  messages: number;
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
  reasoning: bigint;
  /** Per currency, in 10^-12 units. */
  cost: Map<string, bigint>;
  unpricedMessages: number;
}

export function emptyRaw(): RawUsage {
  return {
    messages: 0,
    input: 0n,
    output: 0n,
    cacheRead: 0n,
    cacheWrite: 0n,
    reasoning: 0n,
    callerCost: new Map(),
    uncosted: { messages: 0, input: 0n, output: 0n, cacheRead: 0n, cacheWrite: 0n },
  };
}

export function emptyTotals(): Totals {
  return {
    messages: 0,
    input: 0n,
    output: 0n,
    cacheRead: 0n,
    cacheWrite: 0n,
    reasoning: 0n,
    cost: new Map(),
    unpricedMessages: 0,
  };
}

function addTo(map: Map<string, bigint>, currency: string, units: bigint): void {
  map.set(currency, (map.get(currency) ?? 0n) + units);
}

/**
 * Counts one assistant message's usage. Append checked its cost; one a
 * hand-made file holds that is no decimal amount counts as uncosted.
 */
export function addMessage(raw: RawUsage, usage: Usage): void {
  raw.messages += 1;
  raw.input += usage.inputTokens;
  raw.output += usage.outputTokens;
  raw.cacheRead += usage.cacheReadTokens;
  raw.cacheWrite += usage.cacheWriteTokens;
  raw.reasoning += usage.reasoningTokens;
  if (usage.cost !== undefined && costProblem(usage.cost) === undefined) {
    addTo(raw.callerCost, usage.cost.currency, amountUnits(usage.cost.amount));
    return;
  }
  const u = raw.uncosted;
  u.messages += 1;
  u.input += usage.inputTokens;
  u.output += usage.outputTokens;
  u.cacheRead += usage.cacheReadTokens;
  u.cacheWrite += usage.cacheWriteTokens;
}

/** The counts both RawUsage, its uncosted part and Totals keep. */
interface Counts {
  messages: number;
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
}

/** Adds `from`'s message and token counts to `into`'s. */
function addCounts(into: Counts, from: Counts): void {
  into.messages += from.messages;
  into.input += from.input;
  into.output += from.output;
  into.cacheRead += from.cacheRead;
  into.cacheWrite += from.cacheWrite;
}

export function mergeRaw(into: RawUsage, from: RawUsage): void {
  addCounts(into, from);
  into.reasoning += from.reasoning;
  for (const [c, v] of from.callerCost) addTo(into.callerCost, c, v);
  addCounts(into.uncosted, from.uncosted);
}

/** The start of the UTC hour holding `ms`: the time a group is priced at. */
export function hourStartMs(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/** The row for `model` at `atMs`: the one with the latest `fromMs` <= atMs. */
export function priceRowFor(table: PriceTable, model: string, atMs: number): PriceRow | undefined {
  let best: PriceRow | undefined;
  for (const r of table.rows) {
    if (r.model === model && r.fromMs <= atMs && (best === undefined || r.fromMs > best.fromMs)) {
      best = r;
    }
  }
  return best;
}

/** Half-up division of a non-negative amount (rounding the 10^-18 sum to 10^-12). */
function divHalfUp(n: bigint, d: bigint): bigint {
  return (n + d / 2n) / d;
}

/**
 * Prices `raw.uncosted` with the row for (model, hourStartMs) and returns
 * the group's totals; without a row its uncosted messages are unpriced.
 */
export function priceRaw(
  raw: RawUsage,
  model: string,
  hourStart: number,
  table: PriceTable,
): Totals {
  const t: Totals = {
    messages: raw.messages,
    input: raw.input,
    output: raw.output,
    cacheRead: raw.cacheRead,
    cacheWrite: raw.cacheWrite,
    reasoning: raw.reasoning,
    cost: new Map(raw.callerCost),
    unpricedMessages: 0,
  };
  const u = raw.uncosted;
  if (u.messages === 0) return t;
  const row = priceRowFor(table, model, hourStart);
  if (row === undefined) {
    t.unpricedMessages = u.messages;
    return t;
  }
  const sum =
    u.input * row.inputPerMTok +
    u.output * row.outputPerMTok +
    u.cacheRead * row.cacheReadPerMTok +
    u.cacheWrite * row.cacheWritePerMTok;
  addTo(t.cost, row.currency, divHalfUp(sum, MTOK));
  return t;
}

export function addTotals(into: Totals, from: Totals): void {
  addCounts(into, from);
  into.reasoning += from.reasoning;
  for (const [c, v] of from.cost) addTo(into.cost, c, v);
  into.unpricedMessages += from.unpricedMessages;
}

/** The contract's form: one exact amount per currency, ordered by currency. */
export function totalsToProto(t: Totals): UsageTotals {
  const currencies = [...t.cost.keys()].sort();
  return create(UsageTotalsSchema, {
    messages: BigInt(t.messages),
    inputTokens: saturatedU64(t.input),
    outputTokens: saturatedU64(t.output),
    cacheReadTokens: saturatedU64(t.cacheRead),
    cacheWriteTokens: saturatedU64(t.cacheWrite),
    reasoningTokens: saturatedU64(t.reasoning),
    cost: currencies.map((currency) =>
      create(CostSchema, { amount: formatUnits(t.cost.get(currency) as bigint), currency }),
    ),
    unpricedMessages: BigInt(t.unpricedMessages),
  });
}

/**
 * Raw sums per (hour, model): the unit both roll-ups keep, priced when read
 * so that each group is rounded once.
 */
export class UsageGroups {
  private readonly groups = new Map<string, { hour: number; model: string; raw: RawUsage }>();

  /** Counts a message of `model` appended at `timestampMs`. */
  add(timestampMs: number, model: string, usage: Usage): void {
    addMessage(this.group(hourStartMs(timestampMs), model), usage);
  }

  /** Adds a stored group's raw sums (hour must be an hour start). */
  addRaw(hour: number, model: string, raw: RawUsage): void {
    mergeRaw(this.group(hour, model), raw);
  }

  /** Every group, for persisting. */
  *entries(): IterableIterator<{ hour: number; model: string; raw: RawUsage }> {
    yield* this.groups.values();
  }

  get size(): number {
    return this.groups.size;
  }

  /** Prices every group and sums them. */
  price(table: PriceTable): Totals {
    const t = emptyTotals();
    for (const g of this.groups.values()) addTotals(t, priceRaw(g.raw, g.model, g.hour, table));
    return t;
  }

  private group(hour: number, model: string): RawUsage {
    const key = `${hour}\u0000${model}`;
    let g = this.groups.get(key);
    if (g === undefined) {
      g = { hour, model, raw: emptyRaw() };
      this.groups.set(key, g);
    }
    return g.raw;
  }
}

// ---- Price table file ------------------------------------------------------

const ROW_KEYS = new Set([
  "model",
  "from",
  "currency",
  "input_per_mtok",
  "output_per_mtok",
  "cache_read_per_mtok",
  "cache_write_per_mtok",
]);
const PRICE_KEYS = [
  ["input_per_mtok", "inputPerMTok"],
  ["output_per_mtok", "outputPerMTok"],
  ["cache_read_per_mtok", "cacheReadPerMTok"],
  ["cache_write_per_mtok", "cacheWritePerMTok"],
] as const;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Reads a price table (the parsed JSON of `serve --prices FILE`):
 * `{"prices":[{"model","from"?,"currency","input_per_mtok","output_per_mtok",
 * "cache_read_per_mtok","cache_write_per_mtok"}]}`, prices as decimal
 * strings. Anything wrong is INVALID_ARGUMENT naming the row.
 */
export function parsePriceTable(json: unknown): PriceTable {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw invalidArgument('price table: expected an object {"prices": [...]}');
  }
  const extra = Object.keys(json).filter((k) => k !== "prices");
  if (extra.length > 0)
    throw invalidArgument(`price table: unknown key ${JSON.stringify(extra[0])}`);
  const list = (json as { prices?: unknown }).prices;
  if (!Array.isArray(list)) throw invalidArgument('price table: "prices" must be an array');
  const rows = list.map((r, i) => parseRow(r, i));
  const seen = new Map<string, number>();
  rows.forEach((r, i) => {
    const key = `${r.model}\u0000${r.fromMs}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw invalidArgument(
        `price table row ${i} (model ${JSON.stringify(r.model)}): same model and from as row ${first}`,
      );
    }
    seen.set(key, i);
  });
  rows.sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : a.fromMs - b.fromMs));
  return { rows };
}

function parseRow(r: unknown, i: number): PriceRow {
  if (typeof r !== "object" || r === null || Array.isArray(r)) {
    throw invalidArgument(`price table row ${i}: expected an object`);
  }
  const o = r as Record<string, unknown>;
  const model = o.model;
  const name =
    typeof model === "string" && model !== ""
      ? `price table row ${i} (model ${JSON.stringify(model.slice(0, 200))})`
      : `price table row ${i}`;
  const bad = (what: string) => invalidArgument(`${name}: ${what}`);
  if (typeof model !== "string" || model === "") throw bad('"model" must be a non-empty string');
  for (const k of Object.keys(o)) {
    if (!ROW_KEYS.has(k)) throw bad(`unknown key ${JSON.stringify(k)}`);
  }
  let fromMs = 0;
  if (o.from !== undefined) {
    const from = o.from;
    const ms = typeof from === "string" && RFC3339.test(from) ? Date.parse(from) : Number.NaN;
    if (Number.isNaN(ms)) {
      throw bad(`"from" ${JSON.stringify(from)} is not a timestamp like "2026-01-01T00:00:00Z"`);
    }
    if (ms % HOUR_MS !== 0) throw bad(`"from" ${JSON.stringify(from)} is not a whole UTC hour`);
    fromMs = ms;
  }
  const currency = o.currency;
  if (typeof currency !== "string" || !/^[A-Z]{3}$/.test(currency)) {
    throw bad(`"currency" ${JSON.stringify(currency)} is not an ISO 4217 code like "USD"`);
  }
  const prices = {} as Record<(typeof PRICE_KEYS)[number][1], bigint>;
  for (const [key, field] of PRICE_KEYS) {
    const v = o[key];
    if (
      typeof v !== "string" ||
      costProblem(create(CostSchema, { amount: v, currency })) !== undefined
    ) {
      throw bad(
        `${JSON.stringify(key)} ${JSON.stringify(v)} must be a decimal string like "3" or "0.3" (at most 12 fraction digits)`,
      );
    }
    prices[field] = amountUnits(v);
  }
  return { model, fromMs, currency, ...prices };
}

// ---- Persisted form --------------------------------------------------------

/** JSON-safe raw sums (token counts as numbers while exact, else strings; costs as decimals). */
export interface RawUsageJson {
  m: number;
  i: number | string;
  o: number | string;
  cr: number | string;
  cw: number | string;
  r: number | string;
  /** Caller-set costs: currency -> decimal amount. */
  c?: Record<string, string>;
  /** The uncosted part: [messages, input, output, cacheRead, cacheWrite]. */
  u?: [number, number | string, number | string, number | string, number | string];
}

function n(v: bigint): number | string {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

export function rawToJson(raw: RawUsage): RawUsageJson {
  const j: RawUsageJson = {
    m: raw.messages,
    i: n(raw.input),
    o: n(raw.output),
    cr: n(raw.cacheRead),
    cw: n(raw.cacheWrite),
    r: n(raw.reasoning),
  };
  if (raw.callerCost.size > 0) {
    j.c = Object.fromEntries([...raw.callerCost].map(([c, v]) => [c, formatUnits(v)]));
  }
  const u = raw.uncosted;
  if (u.messages > 0) j.u = [u.messages, n(u.input), n(u.output), n(u.cacheRead), n(u.cacheWrite)];
  return j;
}

function count(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw dataLoss(`usage sums: ${what} is not a count`);
  }
  return v;
}

function tokens(v: unknown, what: string): bigint {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === "string" && /^(0|[1-9][0-9]{0,19})$/.test(v)) return BigInt(v);
  throw dataLoss(`usage sums: ${what} is not a token count`);
}

/** Reads `rawToJson`'s form back; malformed input is DATA_LOSS. */
export function rawFromJson(j: unknown): RawUsage {
  if (typeof j !== "object" || j === null) throw dataLoss("usage sums: not an object");
  const o = j as Record<string, unknown>;
  const raw = emptyRaw();
  raw.messages = count(o.m, "m");
  raw.input = tokens(o.i, "i");
  raw.output = tokens(o.o, "o");
  raw.cacheRead = tokens(o.cr, "cr");
  raw.cacheWrite = tokens(o.cw, "cw");
  raw.reasoning = tokens(o.r, "r");
  if (o.c !== undefined) {
    if (typeof o.c !== "object" || o.c === null) throw dataLoss("usage sums: c is not an object");
    for (const [currency, amount] of Object.entries(o.c)) {
      if (
        typeof amount !== "string" ||
        costProblem(create(CostSchema, { amount, currency })) !== undefined
      ) {
        throw dataLoss(`usage sums: cost ${JSON.stringify(currency)} is malformed`);
      }
      raw.callerCost.set(currency, amountUnits(amount));
    }
  }
  if (o.u !== undefined) {
    if (!Array.isArray(o.u) || o.u.length !== 5) throw dataLoss("usage sums: u is malformed");
    const [m, i, out, cr, cw] = o.u as unknown[];
    raw.uncosted = {
      messages: count(m, "u[0]"),
      input: tokens(i, "u[1]"),
      output: tokens(out, "u[2]"),
      cacheRead: tokens(cr, "u[3]"),
      cacheWrite: tokens(cw, "u[4]"),
    };
  }
  return raw;
}
