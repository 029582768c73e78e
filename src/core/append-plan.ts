import { clone, equals } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { tryDecodeEntry } from "./codec/entry-from-json.js";
import {
  entryJson,
  entryJsonOfParts,
  entryJsonWithKind,
  tryEntryJsonParts,
} from "./codec/entry-to-json.js";
import { costProblem } from "./cost.js";
import { toolCallIds, toolResultCallId } from "./entry.js";
import { aborted, alreadyExists, invalidArgument, resourceExhausted } from "./errors.js";
import { checkEntryId, ENTRY_ID_PATTERN, newEntryId, quote } from "./ids.js";
import type { SessionLog } from "./session-log.js";
import { applyTagChanges, checkTagSet, checkTags, type Tags } from "./tags.js";
import { withhold } from "./withheld.js";

/**
 * Append planning: turns a client's request into the exact entries to write
 * (ids, parents, seqs and timestamps filled in), or an error, given the
 * session's log as it is under the write lock. Pure: nothing is written
 * here, so a rejected request leaves the log untouched by construction, and
 * every engine (memory, JSONL, PostgreSQL) validates with the same code.
 */

/** Optimistic-concurrency preconditions of a mutation. */
export interface Expectations {
  /** Fail with ABORTED unless the head seq equals this. */
  expectedSeq?: number | bigint | undefined;
  /** Fail with ABORTED unless the current leaf is this entry. */
  expectedLeafId?: string | undefined;
}

export interface AppendInput extends Expectations {
  entries: readonly Entry[];
  /**
   * The caller hands the entries over: they become parts of the stored
   * entries, so it must never change them afterwards (the server's freshly
   * decoded request, dropped once answered). Planning then copies only the
   * fields it sets instead of cloning each entry deeply (a reflective walk,
   * 6-10 us for a 500 B message, 2-3x that inside the server). Either way the
   * input itself is never changed, so a batch can be planned again (the
   * PostgreSQL engine does after a conflict).
   */
  handOver?: boolean | undefined;
}

export interface PlanContext {
  /** Clock for timestamps the caller left empty. */
  now?: () => Date;
  /** Largest entry as stored (canonical JSON, UTF-8 bytes); RESOURCE_EXHAUSTED beyond. */
  maxEntryBytes?: number;
  /** Id generator for entries the caller left without id. */
  newId?: () => string;
}

/** What to write and what to answer. */
export interface AppendPlan {
  /** Entries to write, seqs assigned; empty for an idempotent retry. */
  write: Entry[];
  /** The stored entries in request order (written or found). */
  entries: Entry[];
  /** Every entry already existed identically: nothing is written. */
  deduplicated: boolean;
  /**
   * The canonical JSON of each entry of `write` (seq included), computed
   * once here, where the size limit and the JSON form are checked, and
   * reused by engines that store JSON.
   */
  json?: string[];
}

function checkExpectations(log: SessionLog, x: Expectations): void {
  const seq = x.expectedSeq;
  if (typeof seq === "number" && !(Number.isSafeInteger(seq) && seq >= 0)) {
    throw invalidArgument(`expected_seq ${seq} is not a non-negative integer`);
  }
  if (x.expectedSeq !== undefined && BigInt(x.expectedSeq) !== BigInt(log.headSeq)) {
    throw aborted(
      `session ${quote(log.sessionId)}: expected head seq ${x.expectedSeq}, but it is ${log.headSeq}`,
    );
  }
  if (x.expectedLeafId !== undefined && x.expectedLeafId !== log.leafId) {
    throw aborted(
      `session ${quote(log.sessionId)}: expected leaf ${quote(x.expectedLeafId)}, but it is ${quote(log.leafId)}`,
    );
  }
}

/**
 * How errors name an entry of a request: by its position in the batch,
 * which the caller always knows, with its id when the caller chose it (an
 * id assigned here would mean nothing to them).
 */
function entryName(index: number, e: Entry, idGiven: boolean): string {
  return idGiven ? `entries[${index}] (id ${quote(e.id)})` : `entries[${index}]`;
}

/**
 * Checks the fields every kind requires; throws INVALID_ARGUMENT naming the
 * entry (`who(i)`, made only when it throws: a valid entry costs no string).
 */
function checkShape(e: Entry, allowLeaf: boolean, i: number, who: (i: number) => string): void {
  const problem = shapeProblem(e, allowLeaf);
  if (problem !== undefined) throw invalidArgument(`${who(i)}: ${problem}`);
  if (e.kind.case === "sessionInfo") checkTags(e.kind.value.tags, `${who(i)}: tags`, true);
}

/** What is wrong with the shape of an entry's kind, if anything. */
function shapeProblem(e: Entry, allowLeaf: boolean): string | undefined {
  const k = e.kind;
  if (e.withheld !== undefined && !allowLeaf) {
    return "withheld is set by the server (RedactEntries), never on Append";
  }
  switch (k.case) {
    case undefined:
      return "kind is not set";
    case "leaf":
      return allowLeaf ? undefined : "Leaf entries are written by Rewind and Reset only";
    case "message": {
      const m = k.value;
      if (m.role === Role.UNSPECIFIED || Role[m.role] === undefined) {
        return "message role is not set";
      }
      for (const p of m.content) {
        if (p.part.case === undefined) return "empty content part";
        if (p.part.case === "toolCall") {
          if (m.role !== Role.ASSISTANT) return "only ASSISTANT messages may carry tool calls";
          if (p.part.value.id === "") return "a tool call has no id";
        }
      }
      if (m.role === Role.TOOL && !m.toolCallId) return "a TOOL message needs tool_call_id";
      return m.usage?.cost === undefined ? undefined : costProblem(m.usage.cost);
    }
    case "modelChange":
      return k.value.model === "" ? "model change without model" : undefined;
    case "thinkingLevelChange":
      return k.value.thinkingLevel === "" ? "thinking level change without level" : undefined;
    case "compaction":
      return k.value.replacesEntryIds.length === 0 ? "compaction replaces no entries" : undefined;
    case "branchSummary":
      return k.value.fromId === "" ? "branch summary without from_id" : undefined;
    case "label":
      return k.value.label === "" || k.value.label.length > 128
        ? "label must have 1 to 128 characters"
        : undefined;
    case "custom":
      return k.value.namespace === "" ? "custom without namespace" : undefined;
    // Stryker disable next-line ConditionalExpression: an emptied default falls off the end, which returns undefined too
    default:
      return undefined;
  }
}

/**
 * A copy of `e` planning may set fields of: a new top-level object, and a
 * new SessionInfo (whose session id planning sets); the rest is shared.
 */
function shallowCopy(e: Entry): Entry {
  // Every field planning sets is there from the start, in one shape: adding
  // parentId, timestamp and seq to a spread copy costs a shape change each.
  // (Planning sets both optional fields, so none stays undefined.)
  const copy: Entry = {
    $typeName: e.$typeName,
    id: e.id,
    parentId: e.parentId,
    timestamp: e.timestamp,
    seq: e.seq,
    kind: e.kind,
  };
  // Stryker disable next-line ConditionalExpression: true sets an own $unknown of undefined, which reads as none (false: the "keeps an entry's unknown fields" test fails)
  if (e.$unknown !== undefined) copy.$unknown = e.$unknown;
  if (e.kind.case === "sessionInfo") {
    copy.kind = { case: "sessionInfo", value: { ...e.kind.value } };
  }
  return copy;
}

/**
 * A deep copy of an embedded caller's entry: its stored form read back, the
 * entry's canonical JSON (core/codec's fast writer) decoded by the fast
 * reader, a fifth of protobuf-es's reflective `clone` inside a process
 * (which also walks every string through encodeURIComponent). Exported for
 * its test.
 *
 * Whatever either fast path does not take goes to `clone`, with its checks
 * and its refusals (a Struct key that is no valid UTF-8, a value of the
 * wrong type: the caller's INVALID_ARGUMENT, not an internal error), and so
 * does any text with a lone surrogate (JSON.stringify escapes it where
 * clone decides). The copy is then what the store keeps on disk: a -0 in
 * Struct data is 0 and unknown fields are gone, in memory too. With
 * `kinds`, `kinds[i]` is set to the JSON of the copy's kind when the copy
 * was read back from it (left alone otherwise).
 */
export function copyEntry(e: Entry, i: number, kinds?: (string | undefined)[]): Entry {
  if (e.$unknown === undefined) {
    const parts = tryEntryJsonParts(e);
    const kind = parts?.kind;
    if (
      parts !== undefined &&
      !LONE_SURROGATE.test(parts.head) &&
      // Stryker disable next-line ConditionalExpression: test(undefined) tests the string "undefined", which has no surrogate escape
      (kind === undefined || !LONE_SURROGATE.test(kind))
    ) {
      // The entry's JSON read back: decoded from the object it was written
      // from (the reader copies Struct data, and takes strings as they are,
      // which JSON.parse would copy), else from the JSON itself.
      const copy =
        // Stryker disable next-line LogicalOperator: && reads the same JSON back the other way when the first succeeds, and clone copies the same entry when it does not
        tryDecodeEntry(parts.value) ??
        tryDecodeEntry(JSON.parse(entryJsonOfParts(parts.head, e.kind.case, kind)));
      if (copy !== undefined) {
        // The copy's kind is this JSON read back: planning writes the stored
        // form from it (storedJsonOf) instead of writing the kind again.
        if (kinds !== undefined) kinds[i] = parts.kind;
        return copy;
      }
    }
  }
  try {
    return clone(EntrySchema, e);
  } catch (err) {
    throw invalidArgument(`entries[${i}] is no valid entry: ${(err as Error).message}`);
  }
}

/** How JSON.stringify writes a lone surrogate. */
const LONE_SURROGATE = /\\ud[89a-f][0-9a-f]{2}/;

/** Same entry as stored? Fields the caller left empty are taken from the stored copy. */
function sameAsStored(input: Entry, stored: Entry): boolean {
  const probe = clone(EntrySchema, input);
  probe.seq = stored.seq;
  if (probe.parentId === undefined) probe.parentId = stored.parentId;
  if (probe.timestamp === undefined) probe.timestamp = stored.timestamp;
  // A retry of an entry redacted since it was stored: the same when it
  // withholds to what is stored (its content cannot be compared any more).
  if (
    stored.withheld !== undefined &&
    // Stryker disable next-line ConditionalExpression: withhold hands back an entry already withheld unchanged, so both branches compare the same
    probe.withheld === undefined &&
    probe.kind.case === stored.kind.case
  ) {
    return equals(EntrySchema, withhold(probe, stored.withheld), stored);
  }
  return equals(EntrySchema, probe, stored);
}

/**
 * Resolves an id against earlier entries: batch-local entries first, then
 * the log, so that parents, tool calls and compaction targets inside the
 * same batch work.
 */
type BatchLookup = (id: string) => Entry | undefined;

/**
 * A TOOL message must answer an unanswered tool call of an ASSISTANT message
 * on its path, and the call must not have been compacted away on that path
 * (the CONTEXT would then hold a result without its call, which LLM APIs
 * reject).
 */
function checkToolResult(lookup: BatchLookup, e: Entry, callId: string, who: string): void {
  const compactedBy = new Map<string, string>();
  // Parents always precede their children (in the log and in the batch), so
  // every parent is found and the walk ends at the root.
  for (let id = e.parentId; id !== undefined; ) {
    const p = lookup(id) as Entry;
    if (toolResultCallId(p) === callId) {
      throw invalidArgument(
        `${who}: tool call ${quote(callId)} is already answered by ${quote(p.id)}`,
      );
    }
    if (p.kind.case === "compaction") {
      for (const id of p.kind.value.replacesEntryIds) compactedBy.set(id, p.id);
    }
    if (toolCallIds(p).includes(callId)) {
      const compaction = compactedBy.get(p.id);
      if (compaction === undefined) return;
      throw invalidArgument(
        `${who}: tool call ${quote(callId)} of ${quote(p.id)} was replaced by compaction ${quote(compaction)}`,
      );
    }
    id = p.parentId;
  }
  throw invalidArgument(`${who}: no ASSISTANT tool call ${quote(callId)} on its path to answer`);
}

/** A compaction replaces entries of its own path only, never splitting a call from its result. */
function checkCompaction(
  lookup: BatchLookup,
  e: Entry,
  replaces: readonly string[],
  who: string,
): void {
  const path = new Map<string, Entry>();
  // As in checkToolResult, the walk finds every parent and ends at the root.
  for (let id = e.parentId; id !== undefined; ) {
    const p = lookup(id) as Entry;
    path.set(id, p);
    id = p.parentId;
  }
  const replaced = new Set(replaces);
  for (const id of replaces) {
    const target = path.get(id);
    if (target === undefined) {
      throw invalidArgument(`${who}: compaction replaces ${quote(id)}, which is not on its path`);
    }
    if (target.parentId === undefined) {
      throw invalidArgument(`${who}: compaction cannot replace the root ${quote(id)}`);
    }
  }
  // Every call/result pair on the path must be replaced together or not at all.
  // A result answers the nearest call with its id above it (see
  // checkToolResult), so the path is walked from the root down; a call id
  // made again later owns the results after it. Keyed by call id, and a
  // non-result's call id (undefined) has no owner.
  const callOwner = new Map<string | undefined, string>();
  for (const p of [...path.values()].reverse()) {
    const callId = toolResultCallId(p);
    const owner = callOwner.get(callId);
    if (owner !== undefined && replaced.has(owner) !== replaced.has(p.id)) {
      throw invalidArgument(
        `${who}: compaction separates tool call ${quote(callId as string)} (${quote(owner)}) from its result ${quote(p.id)}`,
      );
    }
    for (const c of toolCallIds(p)) callOwner.set(c, p.id);
  }
}

/**
 * Plans an Append. Order of checks: shape of every entry, then idempotency
 * (a retry of an acknowledged batch returns the stored entries even though
 * the head has moved since), then the expectations (ABORTED), then the tree
 * rules entry by entry.
 */
export function planAppend(
  log: SessionLog,
  input: AppendInput,
  ctx: PlanContext = {},
  allowLeaf = false,
): AppendPlan {
  const given = input.entries;
  const n = given.length;
  if (n === 0) throw invalidArgument("append needs at least one entry");
  const newId = ctx.newId ?? newEntryId;
  // The name of entries[i] in errors, made only when one is thrown.
  const who = (i: number) => entryName(i, batch[i] as Entry, (given[i] as Entry).id !== "");
  // Stryker disable next-line ArrayDeclaration: the length only preallocates; every slot is set in the loop below
  const batch: Entry[] = new Array(n);
  // The JSON of each copied entry's kind, as copyEntry wrote it (an entry's
  // JSON is its head, then its kind: the kind is written once per append).
  // Stryker disable next-line ArrayDeclaration: the length only preallocates; copyEntry sets the slots it reads back
  const kinds: (string | undefined)[] | undefined = input.handOver ? undefined : new Array(n);
  for (let i = 0; i < n; i++) {
    const e = given[i] as Entry;
    const copy = input.handOver ? shallowCopy(e) : copyEntry(e, i, kinds);
    batch[i] = copy;
    if (copy.id === "") copy.id = newId();
    // Stryker disable next-line ConditionalExpression: a shortcut (no message made per entry): checkEntryId passes every id the pattern matches
    if (!ENTRY_ID_PATTERN.test(copy.id)) checkEntryId(copy.id, `id of entries[${i}]`);
    checkShape(copy, allowLeaf, i, who);
    if (copy.kind.case === "sessionInfo") copy.kind.value.sessionId = log.sessionId;
  }

  // Idempotency: entries already in the log (a retry of an acknowledged batch).
  let found = 0;
  for (let i = 0; i < n; i++) if (log.has((batch[i] as Entry).id)) found++;
  if (found > 0) {
    const existing = batch.map((e) => log.get(e.id));
    batch.forEach((e, i) => {
      const stored = existing[i];
      if (stored !== undefined && !sameAsStored(e, stored)) {
        throw alreadyExists(
          `entry ${quote(e.id)} already exists in session ${quote(log.sessionId)} with other content`,
        );
      }
    });
    if (found === n) {
      return { write: [], entries: existing as Entry[], deduplicated: true };
    }
    const first = batch.find((_, i) => existing[i] !== undefined) as Entry;
    throw alreadyExists(
      `entry ${quote(first.id)} already exists in session ${quote(log.sessionId)}; a retried batch must be identical`,
    );
  }

  checkExpectations(log, input);

  // Entries of this batch by id, once there are two: parents, tool calls
  // and compaction targets inside the same batch resolve to them.
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a batch of one entry with the map finds no batch-local id in it either (its own entry is added after its checks)
  const added = n > 1 ? new Map<string, Entry>() : undefined;
  const lookup = (id: string): Entry | undefined => added?.get(id) ?? log.get(id);
  const kindIn = (id: string): Entry["kind"]["case"] | null => {
    const local = added?.get(id);
    return local !== undefined ? local.kind.case : log.kindOf(id);
  };
  let leaf = log.leafId;
  let seq = log.headSeq;
  let tags: Tags | undefined;
  // Stryker disable next-line ArrayDeclaration: the length only preallocates; every slot is set in the loop below
  const json: string[] = new Array(n);
  const maxEntryBytes = ctx.maxEntryBytes ?? Number.POSITIVE_INFINITY;
  let stamp: Timestamp | undefined;
  for (let i = 0; i < n; i++) {
    const e = batch[i] as Entry;
    if (added?.has(e.id)) {
      const first = batch.findIndex((b) => b.id === e.id);
      throw invalidArgument(`${who(i)}: duplicate entry id, already used by entries[${first}]`);
    }
    if (e.parentId === undefined) e.parentId = leaf;
    // The parent's kind as the log indexes it: a stored entry is not decoded for it.
    const parentKind = kindIn(e.parentId);
    if (parentKind === null) {
      throw invalidArgument(`${who(i)}: parent ${quote(e.parentId)} not found`);
    }
    if (parentKind === "leaf") {
      throw invalidArgument(
        `${who(i)}: parent ${quote(e.parentId)} is a Leaf entry, which cannot be a parent`,
      );
    }
    const k = e.kind;
    const callId = toolResultCallId(e);
    if (callId !== undefined) {
      checkToolResult(lookup, e, callId, who(i));
    } else if (k.case === "compaction") {
      checkCompaction(lookup, e, k.value.replacesEntryIds, who(i));
    } else if (k.case === "branchSummary" && lookup(k.value.fromId) === undefined) {
      throw invalidArgument(`${who(i)}: from_id ${quote(k.value.fromId)} not found`);
    } else if (k.case === "leaf") {
      const target = kindIn(k.value.leafId);
      if (target === null || target === "leaf") {
        throw invalidArgument(`${who(i)}: leaf target ${quote(k.value.leafId)} invalid`);
      }
    } else if (k.case === "sessionInfo") {
      // The session's tags after this entry must stay within the limits.
      tags = applyTagChanges(tags ?? log.tags, k.value.tags);
      checkTagSet(tags, `${who(i)}: tags`);
    }
    if (e.timestamp === undefined) {
      stamp ??= timestampOf((ctx.now ?? newDate)());
      e.timestamp = stamp;
    }
    e.seq = BigInt(++seq);
    // A SessionInfo's kind was changed above (its session id): written anew.
    const kind = k.case === "sessionInfo" ? undefined : kinds?.[i];
    json[i] = storedJsonOf(e, maxEntryBytes, i, who, kind);
    added?.set(e.id, e);
    leaf = k.case === "leaf" ? k.value.leafId : e.id;
  }
  return { write: batch, entries: batch, deduplicated: false, json };
}

const newDate = () => new Date();

/** `toTimestamp(date)` (protobuf-es's timestampFromDate) as the literal `create` would make. */
function timestampOf(date: Date): Timestamp {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return {
    $typeName: "google.protobuf.Timestamp",
    seconds: BigInt(seconds),
    nanos: (ms - seconds * 1000) * 1_000_000,
  };
}

/**
 * An entry's canonical JSON, which is how it is stored: it must exist (a
 * google.protobuf.Value with no kind, or a NaN / Infinity number, is valid
 * on the wire but has none) and fit the size limit. Refused before anything
 * is written, rather than failing in storage as "outcome unknown". Exported
 * for the entries written without planAppend: the SessionInfo roots of
 * CreateSession, Fork and Import.
 */
export function storedJson(e: Entry, maxBytes: number, who: string): string {
  return storedJsonOf(e, maxBytes, 0, () => who);
}

/** storedJson naming entries[i] with `who(i)`, made only when it refuses the entry. */
function storedJsonOf(
  e: Entry,
  maxBytes: number,
  i: number,
  who: (i: number) => string,
  /** The JSON of `e`'s kind as it stands, when known (copyEntry). */
  kind?: string,
): string {
  let text: string | undefined;
  try {
    if (kind !== undefined) text = entryJsonWithKind(e, kind);
    text ??= entryJson(e);
  } catch (err) {
    throw invalidArgument(
      `${who(i)} cannot be stored: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  // At most 3 UTF-8 bytes per UTF-16 unit: a short text fits without counting.
  // Stryker disable next-line ConditionalExpression,EqualityOperator: the fast path forced off (false) or taken one unit less often (<) counts the bytes and decides alike; forcing it on (true) or flipping it (>) is caught by the UTF-8 limit test, checked by hand since Stryker cannot disable one direction alone
  const size = text.length <= maxBytes / 3 ? text.length : Buffer.byteLength(text);
  if (size > maxBytes) {
    throw resourceExhausted(
      `${who(i)} is ${size} bytes as stored, over the limit of ${maxBytes} (the server's --max-entry-bytes; maxEntryBytes in openStore's limits)`,
    );
  }
  return text;
}
