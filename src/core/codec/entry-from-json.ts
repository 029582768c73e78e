import {
  fromJson,
  type JsonObject,
  type JsonReadOptions,
  type JsonValue,
} from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import type { ListValue, Struct, Timestamp, Value } from "@bufbuild/protobuf/wkt";
import {
  type BranchSummary,
  type Compaction,
  type ContentPart,
  type Cost,
  type Custom,
  type Entry,
  EntrySchema,
  type ForkedFrom,
  type ImagePart,
  type Label,
  type Leaf,
  type Message,
  type ModelChange,
  Role,
  type SessionInfo,
  type ThinkingLevelChange,
  type ThinkingPart,
  type ToolCall,
  type Usage,
} from "../../../gen/sessiond/v1/entry_pb.js";

/**
 * Turns the parsed proto JSON of a stored entry into an `Entry`: the same
 * result as `fromJson(EntrySchema, json, options)`, faster.
 *
 * Why hand-written: protobuf-es's `fromJson` is reflective (a descriptor
 * walk, a field lookup and a checked `set` per key, a UTF-8 check through
 * `encodeURIComponent` per string) and dominated the time to open a session
 * (about 270 of 400 ms to open and fold a 10,000-entry session). No library
 * converts JSON to these messages faster than that reflection for a fixed
 * schema, so this walks exactly the shapes our own writer produces
 * (`toJsonString(EntrySchema, e)`: JSON field names, enums by name, 64-bit
 * integers as decimal strings, timestamps as RFC 3339 in UTC) straight into
 * the object literals protobuf-es v2 messages are: `$typeName`, every
 * implicit-presence field with its default, optional and message fields only
 * when set, Struct fields as plain JSON objects, `google.protobuf.Value` as
 * a Value message.
 *
 * It is exact by construction: anything it does not recognise (an unknown
 * or proto-named key, a null, a wrong type, a number where a string
 * belongs, an integer or timestamp in another form than our writer's, a
 * string that is not well-formed UTF-16, a `__proto__` key, very deep
 * data, ...) abandons the fast path and decodes the whole entry with
 * `fromJson(EntrySchema, json, options)` instead, which gives today's
 * result or throws today's error.
 * The fast path only accepts input for which it builds what `fromJson`
 * builds (entry-from-json.test.ts checks it on random entries of every kind).
 *
 * The returned entry shares no object with `json` (Struct data is copied,
 * as `fromJson` does).
 */
export function decodeEntry(json: unknown, options?: Partial<JsonReadOptions>): Entry {
  return tryDecodeEntry(json) ?? fromJson(EntrySchema, json as JsonValue, options);
}

/**
 * The fast path alone: the entry, or undefined when `json` is not a shape
 * it handles (then only `fromJson` may decide, error included). Exported
 * for the tests, which check that our writer's output never falls back.
 */
export function tryDecodeEntry(json: unknown): Entry | undefined {
  try {
    return entry(json);
  } catch {
    // Not a shape we handle, or malformed: left to the reflective decoder.
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Plumbing. Each message reads its fields by their JSON names (property
// loads, which JSON.parse's shared object shapes make cheap even before the
// code is optimised), then checks that the object has no other own key: a
// key it did not read (unknown, a proto name, a second oneof member, ...)
// means fromJson must decide. Leaving the fast path is a thrown sentinel,
// not an Error (no stack trace is captured); any other exception (a bug
// here, a missing builtin) leaves it the same way.

// Stryker disable next-line ObjectLiteral,BooleanLiteral: the sentinel is only thrown and caught, never read
const UNHANDLED = Object.freeze({ unhandled: true });
function bail(): never {
  throw UNHANDLED;
}

/**
 * Deepest nesting of Struct / Value data taken on the fast path. fromJson
 * stops at a recursion depth of 100 (messages and Values count); anything
 * deeper than this is left to it, errors included.
 */
const MAX_DATA_DEPTH = 32;

type Obj = Record<string, unknown>;

/**
 * A plain object, as JSON.parse makes them. Its prototype is checked so
 * that a property load cannot find an inherited field (fromJson reads own
 * keys only).
 */
function obj(v: unknown): Obj {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: the prototype check alone refuses every non-object (a primitive's prototype is not Object.prototype, and Object.getPrototypeOf throws on null and undefined, which tryDecodeEntry catches)
  if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) bail();
  return v as Obj;
}

/** Fails unless `o` has exactly `n` own enumerable keys: the ones that were read. */
function onlyKeys(o: Obj, n: number): void {
  if (Object.keys(o).length !== n) bail();
}

function arr(v: unknown): unknown[] {
  if (!Array.isArray(v)) bail();
  return v;
}

/** String.prototype.isWellFormed (Node >= 20), not in the ES2022 lib typings. */
type WellFormed = { isWellFormed(): boolean };

/** fromJson checks every string field for valid UTF-8, i.e. no lone surrogate. */
function str(v: unknown): string {
  // Stryker disable next-line ConditionalExpression: a non-string from JSON.parse has no isWellFormed method, so the call throws and tryDecodeEntry falls back all the same
  if (typeof v !== "string" || !(v as unknown as WellFormed).isWellFormed()) bail();
  return v;
}

const UINT64_MAX = 18446744073709551615n;

/** uint64 as toJson writes it: a decimal string. */
function u64(v: unknown): bigint {
  if (typeof v !== "string") bail();
  const n = v.length;
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: skipping this shortcut, or taking it for 16 digits (which print back as themselves only when exact), gives the same bigint as the digit loop below; the one mutant here that differs, the shortcut at any length, would fail the 20-digit seq test but shares the line
  if (n < 16) {
    // the common case: a canonical decimal below 2^53 (it prints back as itself)
    // Stryker disable next-line UnaryOperator: -v prints back as v only for "0", and -0 is 0n as well
    const x = +v;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator,StringLiteral: each mutant only skips the shortcut for some strings (then the digit loop gives the same bigint) or takes it for a fraction, on which BigInt throws and the caller falls back
    if (x >= 0 && x % 1 === 0 && `${x}` === v) return BigInt(x);
  }
  // Stryker disable next-line ConditionalExpression: more than 20 digits is above UINT64_MAX (refused below) unless led by zeros, which fromJson reads as the same number
  if (n === 0 || n > 20) bail();
  // Stryker disable next-line EqualityOperator: charCodeAt(n) is NaN, which passes the digit test
  for (let i = 0; i < n; i++) {
    const c = v.charCodeAt(i);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: above "9" BigInt accepts only the 0x / 0o / 0b prefixes, which fromJson reads as the same number, and throws on the rest (then the caller falls back)
    if (c < 0x30 || c > 0x39) bail();
  }
  const b = BigInt(v);
  if (b > UINT64_MAX) bail();
  return b;
}

/** uint32 as toJson writes it: a JSON number. */
function u32(v: unknown): number {
  if (typeof v !== "number" || v % 1 !== 0 || v < 0 || v > 0xffffffff) bail();
  return v;
}

function bool(v: unknown): boolean {
  if (typeof v !== "boolean") bail();
  return v;
}

function role(v: unknown): Role {
  switch (v) {
    case "ROLE_USER":
      return Role.USER;
    case "ROLE_ASSISTANT":
      return Role.ASSISTANT;
    case "ROLE_TOOL":
      return Role.TOOL;
    case "ROLE_UNSPECIFIED":
      return Role.UNSPECIFIED;
  }
  return bail();
}

function bytes(v: unknown): Uint8Array<ArrayBuffer> {
  // Stryker disable next-line ConditionalExpression: base64Decode throws on a non-string, and the caller falls back all the same
  if (typeof v !== "string") bail();
  // Stryker disable next-line ConditionalExpression,StringLiteral: base64Decode("") is an empty array as well
  if (v === "") return new Uint8Array(0);
  return base64Decode(v); // the function fromJson uses; it throws on bad input (then fromJson decides)
}

// ---------------------------------------------------------------------------
// Timestamps: "YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z", a real UTC date from year 1
// to 9999. Offsets, leap seconds, hour 24, day 31 of a 30-day month, ...
// (which Date.parse, and so fromJson, may normalise) go to fromJson.

function digit(s: string, i: number): number {
  const d = s.charCodeAt(i) - 0x30;
  if (d < 0 || d > 9) bail();
  return d;
}

function two(s: string, i: number): number {
  return digit(s, i) * 10 + digit(s, i + 1);
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's days_from_civil, y >= 1). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Seconds since the epoch of a valid "YYYY-MM-DDTHH:MM" at the start of `v`. */
function minuteOf(v: string): number {
  if (v[4] !== "-" || v[7] !== "-" || v[10] !== "T" || v[13] !== ":") bail();
  const year = two(v, 0) * 100 + two(v, 2);
  const month = two(v, 5);
  const day = two(v, 8);
  const hour = two(v, 11);
  const minute = two(v, 14);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) bail();
  if (hour > 23 || minute > 59) bail();
  return daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60;
}

/**
 * The minute of the last timestamp read, validated, and its seconds: the
 * entries of a session are usually seconds apart, so most timestamps only
 * need their seconds and fraction read. A pure cache.
 */
// Stryker disable next-line StringLiteral: another initial value is a prefix of no timestamp, so the first one is read whole as well
let lastMinute = "";
let lastMinuteSeconds = 0;

function timestamp(v: unknown): Timestamp {
  // Stryker disable next-line ConditionalExpression: a non-string has no charCodeAt, so the call throws and the caller falls back all the same
  if (typeof v !== "string") bail();
  const n = v.length;
  // Stryker disable next-line ConditionalExpression: a string shorter than 20 with ":" at 16 and "Z" last has a non-digit at 17 or 18, refused when the seconds are read
  if (n < 20 || n > 30 || v.charCodeAt(n - 1) !== 0x5a /* Z */ || v[16] !== ":") bail();
  let base: number;
  // Stryker disable next-line ConditionalExpression,MethodExpression: a pure cache: skipping it reads the minute again, and no valid timestamp ends with a minute
  if (lastMinute !== "" && v.startsWith(lastMinute)) {
    base = lastMinuteSeconds;
  } else {
    base = minuteOf(v);
    // Stryker disable next-line MethodExpression: a whole cached timestamp is a prefix only of itself and of strings the checks after the cache refuse
    lastMinute = v.slice(0, 16);
    lastMinuteSeconds = base;
  }
  const second = two(v, 17);
  if (second > 59) bail();
  let nanos = 0;
  if (n > 20) {
    // ".f…fZ": 1 to 9 digits, scaled to nanoseconds
    if (v[19] !== "." || n === 21) bail();
    for (let i = 20; i < 29; i++) nanos = nanos * 10 + (i < n - 1 ? digit(v, i) : 0);
  }
  return { $typeName: "google.protobuf.Timestamp", seconds: BigInt(base + second), nanos };
}

// ---------------------------------------------------------------------------
// Struct fields (JsonObject: a copy of the data, as fromJson makes) and
// google.protobuf.Value (a Value message).

function jsonObject(v: unknown, depth: number): JsonObject {
  const o = obj(v);
  if (depth > MAX_DATA_DEPTH) bail();
  const keys = Object.keys(o);
  const out: JsonObject = {};
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    // fromJson assigns keys on a plain object too: "__proto__" would set its prototype.
    if (k === "__proto__") bail();
    out[k] = jsonValue(o[k], depth + 1);
  }
  return out;
}

function jsonValue(v: unknown, depth: number): JsonValue {
  switch (typeof v) {
    case "string":
    case "number":
    case "boolean":
      return v;
    case "object": {
      if (v === null) return null;
      if (Array.isArray(v)) {
        if (depth > MAX_DATA_DEPTH) bail();
        // Stryker disable next-line ArrayDeclaration: every index is assigned below, so an array created empty ends up the same
        const out: JsonValue[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) out[i] = jsonValue(v[i], depth + 1);
        return out;
      }
      return jsonObject(v, depth);
    }
  }
  return bail();
}

function value(v: unknown, depth: number): Value {
  switch (typeof v) {
    case "string":
      return { $typeName: "google.protobuf.Value", kind: { case: "stringValue", value: v } };
    case "number":
      return { $typeName: "google.protobuf.Value", kind: { case: "numberValue", value: v } };
    case "boolean":
      return { $typeName: "google.protobuf.Value", kind: { case: "boolValue", value: v } };
    case "object": {
      if (v === null) {
        return { $typeName: "google.protobuf.Value", kind: { case: "nullValue", value: 0 } };
      }
      if (depth > MAX_DATA_DEPTH) bail();
      if (Array.isArray(v)) {
        // Stryker disable next-line ArrayDeclaration: every index is assigned below, so an array created empty ends up the same
        const values: Value[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) values[i] = value(v[i], depth + 1);
        const list: ListValue = { $typeName: "google.protobuf.ListValue", values };
        return { $typeName: "google.protobuf.Value", kind: { case: "listValue", value: list } };
      }
      const o = obj(v);
      const keys = Object.keys(o);
      const fields: { [key: string]: Value } = {};
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        if (k === "__proto__") bail();
        fields[k] = value(o[k], depth + 1);
      }
      const struct: Struct = { $typeName: "google.protobuf.Struct", fields };
      return { $typeName: "google.protobuf.Value", kind: { case: "structValue", value: struct } };
    }
  }
  return bail();
}

// ---------------------------------------------------------------------------
// Messages: the create() shape (every implicit field, with its default when
// absent), then the optional and message fields that are set, then the key
// count. `n` counts the fields read.

function entry(v: unknown): Entry {
  const o = obj(v);
  const { id, parentId, timestamp: ts, seq, message: m } = o;
  let n = 0;
  let kind: Entry["kind"];
  if (m !== undefined) {
    kind = { case: "message", value: message(m) };
    n++;
  } else {
    kind = otherKind(o);
    if (kind.case !== undefined) n++;
  }
  const e: Entry = {
    $typeName: "sessiond.v1.Entry",
    id: id === undefined ? "" : str(id),
    seq: seq === undefined ? 0n : u64(seq),
    kind,
  };
  if (id !== undefined) n++;
  if (seq !== undefined) n++;
  if (parentId !== undefined) {
    e.parentId = str(parentId);
    n++;
  }
  if (ts !== undefined) {
    e.timestamp = timestamp(ts);
    n++;
  }
  onlyKeys(o, n); // also catches a second kind
  return e;
}

/** The kind of an entry that is not a Message. */
function otherKind(o: Obj): Entry["kind"] {
  const { leaf: lf, label: lb, sessionInfo: si, modelChange: mc, thinkingLevelChange: tl } = o;
  if (lf !== undefined) return { case: "leaf", value: leaf(lf) };
  if (lb !== undefined) return { case: "label", value: label(lb) };
  if (si !== undefined) return { case: "sessionInfo", value: sessionInfo(si) };
  if (mc !== undefined) return { case: "modelChange", value: modelChange(mc) };
  if (tl !== undefined) return { case: "thinkingLevelChange", value: thinkingLevelChange(tl) };
  const { compaction: c, branchSummary: bs, custom: cu } = o;
  if (c !== undefined) return { case: "compaction", value: compaction(c) };
  if (bs !== undefined) return { case: "branchSummary", value: branchSummary(bs) };
  if (cu !== undefined) return { case: "custom", value: custom(cu) };
  return { case: undefined };
}

function message(v: unknown): Message {
  const o = obj(v);
  const { role: r, content: c, isError: err } = o;
  const m: Message = {
    $typeName: "sessiond.v1.Message",
    role: r === undefined ? Role.UNSPECIFIED : role(r),
    content: c === undefined ? [] : contentParts(c),
    isError: err === undefined ? false : bool(err),
  };
  let n = (r === undefined ? 0 : 1) + (c === undefined ? 0 : 1) + (err === undefined ? 0 : 1);
  const { toolCallId, toolName, model, provider, usage: u, stopReason, metadata } = o;
  if (toolCallId !== undefined) {
    m.toolCallId = str(toolCallId);
    n++;
  }
  if (toolName !== undefined) {
    m.toolName = str(toolName);
    n++;
  }
  if (model !== undefined) {
    m.model = str(model);
    n++;
  }
  if (provider !== undefined) {
    m.provider = str(provider);
    n++;
  }
  if (u !== undefined) {
    m.usage = usage(u);
    n++;
  }
  if (stopReason !== undefined) {
    m.stopReason = str(stopReason);
    n++;
  }
  if (metadata !== undefined) {
    m.metadata = jsonObject(metadata, 0);
    n++;
  }
  onlyKeys(o, n);
  return m;
}

function contentParts(v: unknown): ContentPart[] {
  const a = arr(v);
  // Stryker disable next-line ArrayDeclaration: every index is assigned below, so an array created empty ends up the same
  const parts: ContentPart[] = new Array(a.length);
  for (let i = 0; i < a.length; i++) parts[i] = contentPart(a[i]);
  return parts;
}

function contentPart(v: unknown): ContentPart {
  const o = obj(v);
  const { text, toolCall: tc, thinking, image } = o;
  let part: ContentPart["part"];
  if (text !== undefined) part = { case: "text", value: str(text) };
  else if (tc !== undefined) part = { case: "toolCall", value: toolCall(tc) };
  else if (thinking !== undefined) part = { case: "thinking", value: thinkingPart(thinking) };
  else if (image !== undefined) part = { case: "image", value: imagePart(image) };
  else part = { case: undefined };
  onlyKeys(o, part.case === undefined ? 0 : 1); // also catches a second member of the oneof
  return { $typeName: "sessiond.v1.ContentPart", part };
}

function thinkingPart(v: unknown): ThinkingPart {
  const o = obj(v);
  const { thinking, signature } = o;
  const t: ThinkingPart = {
    $typeName: "sessiond.v1.ThinkingPart",
    thinking: thinking === undefined ? "" : str(thinking),
  };
  let n = thinking === undefined ? 0 : 1;
  if (signature !== undefined) {
    t.signature = str(signature);
    n++;
  }
  onlyKeys(o, n);
  return t;
}

function imagePart(v: unknown): ImagePart {
  const o = obj(v);
  const { mimeType, data } = o;
  onlyKeys(o, (mimeType === undefined ? 0 : 1) + (data === undefined ? 0 : 1));
  return {
    $typeName: "sessiond.v1.ImagePart",
    mimeType: mimeType === undefined ? "" : str(mimeType),
    data: data === undefined ? new Uint8Array(0) : bytes(data),
  };
}

function toolCall(v: unknown): ToolCall {
  const o = obj(v);
  const { id, name, arguments: args } = o;
  const t: ToolCall = {
    $typeName: "sessiond.v1.ToolCall",
    id: id === undefined ? "" : str(id),
    name: name === undefined ? "" : str(name),
  };
  let n = (id === undefined ? 0 : 1) + (name === undefined ? 0 : 1);
  if (args !== undefined) {
    t.arguments = value(args, 0); // a Value field: JSON null is a null Value, not "unset"
    n++;
  }
  onlyKeys(o, n);
  return t;
}

function usage(v: unknown): Usage {
  const o = obj(v);
  const {
    inputTokens: i,
    outputTokens: out,
    cacheReadTokens: cr,
    cacheWriteTokens: cw,
    reasoningTokens: r,
    cost: c,
  } = o;
  onlyKeys(
    o,
    (i === undefined ? 0 : 1) +
      (out === undefined ? 0 : 1) +
      (cr === undefined ? 0 : 1) +
      (cw === undefined ? 0 : 1) +
      (r === undefined ? 0 : 1) +
      (c === undefined ? 0 : 1),
  );
  const u: Usage = {
    $typeName: "sessiond.v1.Usage",
    inputTokens: i === undefined ? 0n : u64(i),
    outputTokens: out === undefined ? 0n : u64(out),
    cacheReadTokens: cr === undefined ? 0n : u64(cr),
    cacheWriteTokens: cw === undefined ? 0n : u64(cw),
    reasoningTokens: r === undefined ? 0n : u64(r),
  };
  if (c !== undefined) u.cost = cost(c);
  return u;
}

function cost(v: unknown): Cost {
  const o = obj(v);
  const { amount, currency } = o;
  onlyKeys(o, (amount === undefined ? 0 : 1) + (currency === undefined ? 0 : 1));
  return {
    $typeName: "sessiond.v1.Cost",
    amount: amount === undefined ? "" : str(amount),
    currency: currency === undefined ? "" : str(currency),
  };
}

function sessionInfo(v: unknown): SessionInfo {
  const o = obj(v);
  const { sessionId, formatVersion, spawnDepth } = o;
  const s: SessionInfo = {
    $typeName: "sessiond.v1.SessionInfo",
    sessionId: sessionId === undefined ? "" : str(sessionId),
    formatVersion: formatVersion === undefined ? 0 : u32(formatVersion),
    spawnDepth: spawnDepth === undefined ? 0 : u32(spawnDepth),
    tags: {},
  };
  let n =
    (sessionId === undefined ? 0 : 1) +
    (formatVersion === undefined ? 0 : 1) +
    (spawnDepth === undefined ? 0 : 1);
  const { title, cwd, createdAt, parentSessionId, agentType, forkedFrom: ff, metadata, tags } = o;
  if (tags !== undefined) {
    const m = obj(tags);
    for (const key of Object.keys(m)) s.tags[key] = str(m[key]);
    n++;
  }
  if (title !== undefined) {
    s.title = str(title);
    n++;
  }
  if (cwd !== undefined) {
    s.cwd = str(cwd);
    n++;
  }
  if (createdAt !== undefined) {
    s.createdAt = timestamp(createdAt);
    n++;
  }
  if (parentSessionId !== undefined) {
    s.parentSessionId = str(parentSessionId);
    n++;
  }
  if (agentType !== undefined) {
    s.agentType = str(agentType);
    n++;
  }
  if (ff !== undefined) {
    s.forkedFrom = forkedFrom(ff);
    n++;
  }
  if (metadata !== undefined) {
    s.metadata = jsonObject(metadata, 0);
    n++;
  }
  onlyKeys(o, n);
  return s;
}

function forkedFrom(v: unknown): ForkedFrom {
  const o = obj(v);
  const { sessionId, entryId } = o;
  onlyKeys(o, (sessionId === undefined ? 0 : 1) + (entryId === undefined ? 0 : 1));
  return {
    $typeName: "sessiond.v1.ForkedFrom",
    sessionId: sessionId === undefined ? "" : str(sessionId),
    entryId: entryId === undefined ? "" : str(entryId),
  };
}

function modelChange(v: unknown): ModelChange {
  const o = obj(v);
  const { model, provider } = o;
  const m: ModelChange = {
    $typeName: "sessiond.v1.ModelChange",
    model: model === undefined ? "" : str(model),
  };
  let n = model === undefined ? 0 : 1;
  if (provider !== undefined) {
    m.provider = str(provider);
    n++;
  }
  onlyKeys(o, n);
  return m;
}

function thinkingLevelChange(v: unknown): ThinkingLevelChange {
  const o = obj(v);
  const { thinkingLevel } = o;
  onlyKeys(o, thinkingLevel === undefined ? 0 : 1);
  return {
    $typeName: "sessiond.v1.ThinkingLevelChange",
    thinkingLevel: thinkingLevel === undefined ? "" : str(thinkingLevel),
  };
}

function compaction(v: unknown): Compaction {
  const o = obj(v);
  const { summary, replacesEntryIds: ids, tokensBefore } = o;
  let replacesEntryIds: string[] = [];
  if (ids !== undefined) {
    const a = arr(ids);
    // Stryker disable next-line ArrayDeclaration: every index is assigned below, so an array created empty ends up the same
    replacesEntryIds = new Array(a.length);
    for (let i = 0; i < a.length; i++) replacesEntryIds[i] = str(a[i]);
  }
  const c: Compaction = {
    $typeName: "sessiond.v1.Compaction",
    summary: summary === undefined ? "" : str(summary),
    replacesEntryIds,
  };
  let n = (summary === undefined ? 0 : 1) + (ids === undefined ? 0 : 1);
  if (tokensBefore !== undefined) {
    c.tokensBefore = u64(tokensBefore);
    n++;
  }
  onlyKeys(o, n);
  return c;
}

function branchSummary(v: unknown): BranchSummary {
  const o = obj(v);
  const { summary, fromId } = o;
  onlyKeys(o, (summary === undefined ? 0 : 1) + (fromId === undefined ? 0 : 1));
  return {
    $typeName: "sessiond.v1.BranchSummary",
    summary: summary === undefined ? "" : str(summary),
    fromId: fromId === undefined ? "" : str(fromId),
  };
}

function label(v: unknown): Label {
  const o = obj(v);
  const { label: text } = o;
  onlyKeys(o, text === undefined ? 0 : 1);
  return { $typeName: "sessiond.v1.Label", label: text === undefined ? "" : str(text) };
}

function leaf(v: unknown): Leaf {
  const o = obj(v);
  const { leafId } = o;
  onlyKeys(o, leafId === undefined ? 0 : 1);
  return { $typeName: "sessiond.v1.Leaf", leafId: leafId === undefined ? "" : str(leafId) };
}

function custom(v: unknown): Custom {
  const o = obj(v);
  const { namespace, data } = o;
  const c: Custom = {
    $typeName: "sessiond.v1.Custom",
    namespace: namespace === undefined ? "" : str(namespace),
  };
  let n = namespace === undefined ? 0 : 1;
  if (data !== undefined) {
    c.data = jsonObject(data, 0);
    n++;
  }
  onlyKeys(o, n);
  return c;
}
