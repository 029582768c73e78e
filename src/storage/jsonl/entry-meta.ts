import type { EntryKind, EntryMeta } from "../../core/session-log.js";

/**
 * The indexed fields of an entry (id, parent id, seq, kind; the leaf
 * target, label text or title of the three kinds that have one), read from
 * the payload of a record WITHOUT decoding the whole entry. Loading a big
 * session needs only these; the full Entry is decoded from the stored bytes
 * the first time it is used (SessionLog.applyLazy).
 *
 * Two ways in, with the same result:
 *
 * - `scanMeta`, a hand-written scan of the payload. No JSON library reads
 *   a few leading fields of an object without building the rest, and a
 *   full `JSON.parse` per line would cost as much as the parse floor the
 *   cold load is measured against (most of a 900-byte line is message text
 *   nobody needs at load). It reads the layout `toJsonString` writes: no
 *   whitespace, fields in field-number order (id, parentId, timestamp,
 *   seq, then the kind), and then only skips over the kind's value (strings
 *   and nesting, memchr for long strings) to make sure the payload ends
 *   right after it, so no later key can repeat one it read. It gives up
 *   (returns false) at anything else: an escape or control character in an
 *   indexed string, another key order, an unknown key before the kind, a
 *   seq that is not plain digits, anything after the kind, and the kinds
 *   whose fields it would have to read (sessionInfo, label, leaf). It never
 *   guesses: what it returns is what JSON.parse would give (the property
 *   test in reader.property.test.ts holds it to that).
 * - `metaOfJson`, for everything the scan gives up on: `JSON.parse` of the
 *   payload and the same fields read from the plain object, with the
 *   proto-JSON rules fromJson applies to them (JSON or proto field names,
 *   null as unset, one kind at most).
 *
 * What is NOT checked here (timestamps, the fields inside a kind, that the
 * rest of the payload is valid JSON) is checked when the entry is decoded,
 * together with a comparison of the decoded entry against these fields;
 * either failure is DATA_LOSS naming the line (see README.md, "Reading and
 * damage").
 */

/** Resets `meta` to an entry with nothing set. */
export function clearMeta(meta: EntryMeta): void {
  meta.id = "";
  meta.parentId = undefined;
  meta.seq = 0;
  meta.kind = undefined;
  meta.leafId = undefined;
  meta.label = undefined;
  meta.title = undefined;
}

/** A meta to fill (one per scan, reused for every line: all fields present, one shape). */
export function newMeta(): EntryMeta {
  return {
    id: "",
    parentId: undefined,
    seq: 0,
    kind: undefined,
    leafId: undefined,
    label: undefined,
    title: undefined,
  };
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const MAX_SEQ_DIGITS = 15; // below 2^53: exact as a number

const bytes = (s: string) => Uint8Array.from(Buffer.from(s));
const ID = bytes('"id":"');
const PARENT = bytes('"parentId":"');
const TIMESTAMP = bytes('"timestamp":"');
const SEQ = bytes('"seq":"');

/** The kinds the scan resolves by their key alone (no field of theirs is indexed). */
const PLAIN_KINDS: ReadonlyArray<readonly [Uint8Array, EntryKind]> = (
  [
    "message",
    "modelChange",
    "thinkingLevelChange",
    "compaction",
    "branchSummary",
    "custom",
  ] as const
).map((k) => [bytes(`"${k}":{`), k] as const);

function matchAt(buf: Uint8Array, at: number, end: number, token: Uint8Array): boolean {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: a token matched up to or past end leads the scan to give up anyway (every token ends in a quote or brace that must be followed by more payload, and all reads after it stop at end)
  if (end - at < token.length) return false;
  for (let i = 0; i < token.length; i++) if (buf[at + i] !== token[i]) return false;
  return true;
}

/**
 * End (index of the closing quote) of the JSON string whose content starts
 * at `at`, or -1 when it has an escape or a control character (or no end):
 * then its bytes are not its value.
 */
function stringEnd(buf: Uint8Array, at: number, end: number): number {
  // Stryker disable next-line EqualityOperator: a string closed at end leaves no room for the seq and kind, so the scan gives up all the same
  for (let i = at; i < end; i++) {
    const b = buf[i] as number;
    if (b === QUOTE) return i;
    // Stryker disable next-line UnaryOperator: 1 instead of -1 sends the scan to byte 2 of the buffer, which in a record line is the s of {"seq" and not a comma, so it gives up all the same
    if (b === BACKSLASH || b < 0x20) return -1;
  }
  // Stryker disable next-line UnaryOperator: 1 instead of -1 sends the scan to byte 2 of the buffer, which in a record line is the s of {"seq" and not a comma, so it gives up all the same
  return -1;
}

/**
 * End (index of the closing quote) of a JSON string whose content starts at
 * `at`, escapes allowed, or -1. Short strings byte by byte; the rest of a
 * long one (message text) with memchr, checking the backslashes before
 * each quote found.
 */
function quotedEnd(buf: Buffer, at: number, end: number): number {
  let i = at;
  // Stryker disable next-line MethodExpression,ArithmeticOperator: where the byte loop hands over to memchr changes no answer: both skip escapes alike, and a quote found past end ends valueEnd's loop with -1 as no quote does
  const stop = Math.min(end, at + 24);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: where the byte loop hands over to memchr changes no answer: both skip escapes alike
  for (; i < stop; i++) {
    const b = buf[i] as number;
    if (b === QUOTE) return i;
    if (b === BACKSLASH) i++;
  }
  // Stryker disable next-line EqualityOperator: indexOf from end finds no quote before end, so the loop returns -1 as it ends
  while (i < end) {
    const q = buf.indexOf(QUOTE, i);
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,UnaryOperator: without either check (or with it moved by one) q = -1 comes back as -1 through the parity test below, a quote at or past end ends valueEnd's loop with -1 too, and a returned 1 makes valueEnd rescan from byte 2 until it loops or closes before this string, never at end - 2
    if (q < 0 || q >= end) return -1;
    // The run of backslashes before a quote starts after the opening quote or
    // a non-backslash, and escapes pair up from its start: its parity decides.
    let k = q - 1;
    while (buf[k] === BACKSLASH) k--;
    // Stryker disable next-line ArithmeticOperator: q + 1 - k and q - 1 + k have the parity of q - 1 - k
    if ((q - 1 - k) % 2 === 0) return q;
    i = q + 1;
  }
  // Stryker disable next-line UnaryOperator: a returned 1 makes valueEnd rescan from byte 2 until it loops or closes before this string, never at end - 2
  return -1;
}

/**
 * Index of the bracket closing the object or array that opens at `at`, or
 * -1. Only strings and nesting are followed: what lies inside is checked
 * when the entry is decoded.
 */
function valueEnd(buf: Buffer, at: number, end: number): number {
  let depth = 0;
  // Stryker disable next-line EqualityOperator: a value closed at end is not closed at end - 2, which is all the caller accepts
  for (let i = at; i < end; i++) {
    const b = buf[i] as number;
    if (b === QUOTE) {
      i = quotedEnd(buf, i + 1, end);
      // Stryker disable next-line EqualityOperator,UnaryOperator: quotedEnd never returns 0, and 1 is never end - 2 for a payload that reached its kind
      if (i < 0) return -1;
    } else if (b === OPEN || b === OPEN_LIST) {
      depth++;
    } else if (b === CLOSE || b === CLOSE_LIST) {
      if (--depth === 0) return i;
    }
  }
  // Stryker disable next-line UnaryOperator: 1 is never end - 2 for a payload that reached its kind, which is all the caller accepts
  return -1;
}

/**
 * The fast path: fills `meta` from the payload `buf[start, end)` and
 * returns true, or returns false (meta then undefined) when the payload is
 * not laid out exactly as `toJsonString` writes it, or is of a kind whose
 * fields must be read.
 */
export function scanMeta(buf: Buffer, start: number, end: number, meta: EntryMeta): boolean {
  clearMeta(meta);
  if (buf[start] !== OPEN) return false;
  let at = start + 1;
  if (matchAt(buf, at, end, ID)) {
    const from = at + ID.length;
    const to = stringEnd(buf, from, end);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: stringEnd returns -1 or an index past the key (never 0), and with to = -1 the scan reads byte 0 of the buffer, which in a record line is { and not a comma, so it gives up all the same
    if (to < 0 || buf[to + 1] !== COMMA) return false;
    meta.id = buf.toString("utf8", from, to);
    at = to + 2;
  }
  if (matchAt(buf, at, end, PARENT)) {
    const from = at + PARENT.length;
    const to = stringEnd(buf, from, end);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: stringEnd returns -1 or an index past the key (never 0), and with to = -1 the scan reads byte 0 of the buffer, which in a record line is { and not a comma, so it gives up all the same
    if (to < 0 || buf[to + 1] !== COMMA) return false;
    meta.parentId = buf.toString("utf8", from, to);
    at = to + 2;
  }
  if (matchAt(buf, at, end, TIMESTAMP)) {
    const to = stringEnd(buf, at + TIMESTAMP.length, end);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: stringEnd returns -1 or an index past the key (never 0), and with to = -1 the scan reads byte 0 of the buffer, which in a record line is { and not a comma, so it gives up all the same
    if (to < 0 || buf[to + 1] !== COMMA) return false;
    at = to + 2;
  }
  if (!matchAt(buf, at, end, SEQ)) return false;
  at += SEQ.length;
  let seq = 0;
  const digits = at;
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: reading one digit more or fewer, or past end, changes no answer: 16 digits or more are refused below as 15 are not, and digits running to end leave no room for the kind
  for (; at < end && at - digits <= MAX_SEQ_DIGITS; at++) {
    const d = buf[at] as number;
    if (d < 0x30 || d > 0x39) break;
    seq = seq * 10 + (d - 0x30);
  }
  const n = at - digits;
  if (n === 0 || n > MAX_SEQ_DIGITS || buf[digits] === 0x30) return false;
  if (buf[at] !== QUOTE || buf[at + 1] !== COMMA) return false;
  meta.seq = seq;
  at += 2;
  for (const [key, kind] of PLAIN_KINDS) {
    if (matchAt(buf, at, end, key)) {
      // Nothing may follow the kind: a key after it could repeat one read above.
      if (buf[end - 1] !== CLOSE || valueEnd(buf, at + key.length - 1, end) !== end - 2) {
        return false;
      }
      meta.kind = kind;
      return true;
    }
  }
  return false;
}

type Json = Record<string, unknown>;

const KINDS: ReadonlyArray<readonly [string, string, EntryKind]> = [
  ["sessionInfo", "session_info", "sessionInfo"],
  ["message", "message", "message"],
  ["modelChange", "model_change", "modelChange"],
  ["thinkingLevelChange", "thinking_level_change", "thinkingLevelChange"],
  ["compaction", "compaction", "compaction"],
  ["branchSummary", "branch_summary", "branchSummary"],
  ["label", "label", "label"],
  ["leaf", "leaf", "leaf"],
  ["custom", "custom", "custom"],
];

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The value of a field that proto JSON accepts under its JSON name or its
 * proto name (both at once is an error, as in fromJson); null is unset.
 */
function field(o: Json, jsonName: string, protoName: string): unknown {
  const a = o[jsonName];
  if (jsonName === protoName) return a ?? undefined;
  const b = o[protoName];
  if (a !== undefined && b !== undefined) throw new Error(`${jsonName} set twice`);
  return a ?? b ?? undefined;
}

function stringField(o: Json, jsonName: string, protoName = jsonName): string | undefined {
  const v = field(o, jsonName, protoName);
  if (v !== undefined && typeof v !== "string") throw new Error(`${jsonName} is not a string`);
  return v;
}

/** A uint64 in proto JSON: a decimal string or an integer number. */
function seqOf(v: unknown): number {
  if (v === undefined) return 0;
  // Stryker disable next-line ConditionalExpression: Number.isSafeInteger is false for anything but a number
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return v;
  if (typeof v === "string" && /^[0-9]{1,16}$/.test(v)) return Number(v);
  throw new Error("seq is not an unsigned integer");
}

/**
 * The slow path: fills `meta` from a parsed payload. Returns undefined, or
 * why the payload cannot be an entry.
 */
export function metaOfJson(json: unknown, meta: EntryMeta): string | undefined {
  clearMeta(meta);
  if (!isObject(json)) return "payload is not a JSON object";
  try {
    meta.id = stringField(json, "id") ?? "";
    meta.parentId = stringField(json, "parentId", "parent_id");
    meta.seq = seqOf(field(json, "seq", "seq"));
    let kindKey: string | undefined;
    for (const [jsonName, protoName, kind] of KINDS) {
      const key = json[jsonName] !== undefined ? jsonName : protoName;
      if (json[key] === undefined) continue;
      if (kindKey !== undefined) throw new Error(`kind set twice (${kindKey} and ${key})`);
      kindKey = key;
      const value = field(json, jsonName, protoName);
      if (value === undefined) continue; // null: no kind
      if (!isObject(value)) throw new Error(`${key} is not an object`);
      meta.kind = kind;
      if (kind === "leaf") meta.leafId = stringField(value, "leafId", "leaf_id") ?? "";
      else if (kind === "label") meta.label = stringField(value, "label") ?? "";
      else if (kind === "sessionInfo") meta.title = stringField(value, "title");
    }
  } catch (err) {
    return `payload is not a valid entry (${(err as Error).message})`;
  }
  return undefined;
}
