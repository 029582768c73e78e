/**
 * The raw usage sums a session keeps for UsageReport (issue 42), shared by
 * the engines: per (UTC hour, model) the raw sums of core/usage-sums.ts
 * (tokens, caller-set costs, and the tokens of messages without a cost,
 * priced only when a report reads them), and the first and last seq of the
 * messages counted in the group, so that a report whose window starts or
 * ends inside an hour re-reads only those entries.
 *
 * Every ASSISTANT message with usage counts, wherever it is in the tree
 * (abandoned branches too: every appended message was billed), at its
 * entry's timestamp.
 */
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { timestampMillis } from "../core/entry.js";
import { dataLoss } from "../core/errors.js";
import { logForkCopiesThrough } from "../core/fork-plan.js";
import type { SessionLog } from "../core/session-log.js";
import {
  addMessage,
  emptyRaw,
  hourStartMs,
  mergeRaw,
  type RawUsage,
  rawFromJson,
  rawToJson,
} from "../core/usage-sums.js";

/** One (hour, model) group of a session. */
export interface HourUsage {
  /** Start of the UTC hour, ms. */
  readonly hour: number;
  /** The message's model ("" when unset). */
  readonly model: string;
  readonly raw: RawUsage;
  /** Seqs of the first and last message counted in the group. */
  firstSeq: number;
  lastSeq: number;
}

/** A session's groups by `groupKey(hour, model)`. */
export type SessionUsage = ReadonlyMap<string, HourUsage>;

export function groupKey(hour: number, model: string): string {
  return `${hour}\u0000${model}`;
}

/** Counts `entry` (seq `seq`) into `into` when it is billed. */
export function countEntry(into: Map<string, HourUsage>, entry: Entry, seq: number): void {
  if (entry.kind.case !== "message") return;
  const m = entry.kind.value;
  if (m.role !== Role.ASSISTANT || m.usage === undefined) return;
  const hour = hourStartMs(timestampMillis(entry.timestamp));
  const model = m.model ?? "";
  const key = groupKey(hour, model);
  let g = into.get(key);
  if (g === undefined) {
    g = { hour, model, raw: emptyRaw(), firstSeq: seq, lastSeq: seq };
    into.set(key, g);
  }
  addMessage(g.raw, m.usage);
  if (seq < g.firstSeq) g.firstSeq = seq;
  if (seq > g.lastSeq) g.lastSeq = seq;
}

/** The groups of some entries (seq = their place in `entries` + `firstSeq`). */
export function usageOfEntries(entries: readonly Entry[], firstSeq = 1): Map<string, HourUsage> {
  const out = new Map<string, HourUsage>();
  entries.forEach((e, i) => {
    countEntry(out, e, Number(e.seq) || firstSeq + i);
  });
  return out;
}

/**
 * Counts a session's entries read in seq order from seq 1 (a reader with
 * no log at hand, e.g. PostgreSQL's counting), leaving out ForkSession's
 * copies: a fork's copies run from seq 2 to the copy of its target, which
 * keeps the target's id, so they are held apart until that id is read
 * (and dropped then); a fork of the source's root copies nothing, and
 * what was held is counted when the reading ends without it.
 */
export class UsageCounter {
  private target: string | undefined;
  private held: Map<string, HourUsage> | undefined;

  constructor(readonly into: Map<string, HourUsage>) {}

  add(entry: Entry, seq: number): void {
    if (seq === 1) {
      const target =
        entry.kind.case === "sessionInfo" ? entry.kind.value.forkedFrom?.entryId : undefined;
      if (target !== undefined && target !== "") {
        this.target = target;
        this.held = new Map();
      }
      return;
    }
    if (this.held === undefined) {
      countEntry(this.into, entry, seq);
    } else if (entry.id === this.target) {
      this.held = undefined;
    } else {
      countEntry(this.held, entry, seq);
    }
  }

  /** Ends the reading of the whole session. */
  finish(): Map<string, HourUsage> {
    if (this.held !== undefined) {
      for (const [key, g] of this.held) {
        const into = this.into.get(key);
        if (into === undefined) {
          this.into.set(key, g);
          continue;
        }
        mergeRaw(into.raw, g.raw);
        into.firstSeq = Math.min(into.firstSeq, g.firstSeq);
        into.lastSeq = Math.max(into.lastSeq, g.lastSeq);
      }
      this.held = undefined;
    }
    return this.into;
  }
}

/** Per log: the groups of its first `upTo` entries, counted at log version `version`. */
const counted = new WeakMap<
  SessionLog,
  { upTo: number; version: number; copies: number; usage: Map<string, HourUsage> }
>();

/**
 * The usage groups of a whole log, kept per log object and grown by the
 * entries appended since the last call (only those are decoded). Each
 * entry admitted moves the log's version by one: a version that moved by
 * more than the entries added means entries were replaced (an erasure's
 * rewrite drops their usage) or cut off (a torn tail), and the log is
 * counted again from the start. The map returned is the log's own: read
 * it at once, do not change it. ForkSession's copies are left out (billed
 * in the source session: core/fork-plan.ts forkCopiesThrough).
 */
export function usageOfLog(log: SessionLog): SessionUsage {
  let known = counted.get(log);
  if (
    known === undefined ||
    known.upTo > log.headSeq ||
    log.version - known.version !== log.headSeq - known.upTo
  ) {
    known = { upTo: 0, version: log.version - log.headSeq, copies: 0, usage: new Map() };
    counted.set(log, known);
  }
  // A fork's copies come with its root, in one write: counted from the start, they are all there.
  if (known.upTo === 0) known.copies = logForkCopiesThrough(log);
  for (let seq = known.upTo + 1; seq <= log.headSeq; seq++) {
    const e = seq > known.copies ? log.at(seq) : undefined;
    if (e !== undefined) countEntry(known.usage, e, seq);
    known.upTo = seq;
  }
  known.version = log.version;
  return known.usage;
}

/** A copy of a session's groups (a record keeps one that no later append changes). */
export function copyUsage(u: SessionUsage): SessionUsage {
  const out = new Map<string, HourUsage>();
  for (const [k, g] of u) {
    const raw = emptyRaw();
    // mergeRaw would do; a structured copy keeps the maps apart.
    Object.assign(raw, g.raw, {
      callerCost: new Map(g.raw.callerCost),
      uncosted: { ...g.raw.uncosted },
    });
    out.set(k, { ...g, raw });
  }
  return out;
}

/** JSON text of a session's groups (the JSONL listing index keeps it per record). */
export function usageToJson(u: SessionUsage): string {
  const rows: unknown[] = [];
  for (const g of u.values()) rows.push([g.hour, g.model, rawToJson(g.raw), g.firstSeq, g.lastSeq]);
  return JSON.stringify(rows);
}

/** Reads usageToJson's text back; malformed text is DATA_LOSS. */
export function usageFromJson(text: string): SessionUsage {
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    throw dataLoss("usage sums: not JSON");
  }
  if (!Array.isArray(rows)) throw dataLoss("usage sums: not an array");
  const out = new Map<string, HourUsage>();
  for (const r of rows) {
    if (!Array.isArray(r) || r.length !== 5) throw dataLoss("usage sums: malformed group");
    const [hour, model, raw, first, last] = r as unknown[];
    if (
      typeof hour !== "number" ||
      !Number.isSafeInteger(hour) ||
      hour % 3_600_000 !== 0 ||
      typeof model !== "string" ||
      typeof first !== "number" ||
      typeof last !== "number" ||
      !Number.isSafeInteger(first) ||
      !Number.isSafeInteger(last) ||
      first < 1 ||
      last < first
    ) {
      throw dataLoss("usage sums: malformed group");
    }
    out.set(groupKey(hour, model), {
      hour,
      model,
      raw: rawFromJson(raw),
      firstSeq: first,
      lastSeq: last,
    });
  }
  return out;
}

// ---- Groups as numbers ------------------------------------------------------

/**
 * A group as a row of numbers (the JSONL listing index keeps them so: a
 * report reads them in place, with no object made per session): where
 * each value sits in a row of ROW_WIDTH. The model is an index into a
 * table of model names kept beside the rows.
 */
export const ROW = { hour: 0, model: 1, firstSeq: 2, lastSeq: 3, counts: 4 } as const;
/** The counts of a row, in this order from `ROW.counts`. */
export const COUNT = {
  messages: 0,
  input: 1,
  output: 2,
  cacheRead: 3,
  cacheWrite: 4,
  reasoning: 5,
  uncostedMessages: 6,
  uncostedInput: 7,
  uncostedOutput: 8,
  uncostedCacheRead: 9,
  uncostedCacheWrite: 10,
} as const;
export const COUNTS = 11;
export const ROW_WIDTH = ROW.counts + COUNTS;

/** `n` as a count a row can hold exactly. */
function countOf(n: bigint | number): number | undefined {
  const v = Number(n);
  return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/**
 * Writes `raw`'s counts into `out` from `at`; false (nothing to rely on in
 * `out`) when it has caller-set costs (exact amounts: kept as JSON) or a
 * count that is not a safe integer.
 */
export function countsOfRaw(raw: RawUsage, out: Float64Array, at: number): boolean {
  if (raw.callerCost.size > 0) return false;
  const u = raw.uncosted;
  const values = [
    raw.messages,
    raw.input,
    raw.output,
    raw.cacheRead,
    raw.cacheWrite,
    raw.reasoning,
    u.messages,
    u.input,
    u.output,
    u.cacheRead,
    u.cacheWrite,
  ];
  for (let k = 0; k < COUNTS; k++) {
    const v = countOf(values[k] as bigint | number);
    if (v === undefined) return false;
    out[at + k] = v;
  }
  return true;
}

/** The RawUsage of counts written by countsOfRaw (no caller-set costs). */
export function rawOfCounts(n: ArrayLike<number>, at: number): RawUsage {
  const raw = emptyRaw();
  raw.messages = n[at + COUNT.messages] as number;
  raw.input = BigInt(n[at + COUNT.input] as number);
  raw.output = BigInt(n[at + COUNT.output] as number);
  raw.cacheRead = BigInt(n[at + COUNT.cacheRead] as number);
  raw.cacheWrite = BigInt(n[at + COUNT.cacheWrite] as number);
  raw.reasoning = BigInt(n[at + COUNT.reasoning] as number);
  const u = raw.uncosted;
  u.messages = n[at + COUNT.uncostedMessages] as number;
  u.input = BigInt(n[at + COUNT.uncostedInput] as number);
  u.output = BigInt(n[at + COUNT.uncostedOutput] as number);
  u.cacheRead = BigInt(n[at + COUNT.uncostedCacheRead] as number);
  u.cacheWrite = BigInt(n[at + COUNT.uncostedCacheWrite] as number);
  return raw;
}

/**
 * A record that keeps its usage as rows of numbers (the JSONL listing
 * index's loaded records): `usageRows` calls `each` for every group whose
 * hour is in [fromHour, toHour), its counts at `nums[at + COUNT.*]`, and
 * answers false when the record keeps none (its `usage` then says).
 */
export interface UsageRowSource {
  usageRows(
    fromHour: number,
    toHour: number,
    each: (hour: number, model: string, nums: Float64Array, at: number) => void,
  ): boolean;
}
