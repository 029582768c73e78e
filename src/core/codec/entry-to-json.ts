import { type JsonObject, type JsonValue, toJsonString } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import type { ListValue, Struct, Timestamp, Value } from "@bufbuild/protobuf/wkt";
import {
  type ContentPart,
  type Entry,
  EntrySchema,
  type Message,
  type Role,
  type SessionInfo,
  type Usage,
} from "../../../gen/sessiond/v1/entry_pb.js";

/**
 * An entry's canonical JSON, the form it is stored in: exactly
 * `toJsonString(EntrySchema, e)`, faster.
 *
 * Why hand-written: protobuf-es's `toJson` is reflective (a reflect wrapper
 * per message, a descriptor walk and a checked get per field, JSON objects
 * turned into Struct messages and back) and costs ~7 us for a 500 B message
 * in a loop (this: ~3 us, of which JSON.stringify's escaping is 2.5), two to
 * three times that inside the server, on every appended entry. No library
 * writes these messages' JSON without that reflection, so this builds the
 * same plain object `toJson` builds (JSON names, fields in field-number
 * order, implicit-presence fields only when not zero, enums by name, 64-bit
 * integers as decimal strings, timestamps in RFC 3339, Struct data as it
 * is) and hands it to `JSON.stringify`, as `toJsonString` does.
 * It is the writing twin of the reader's entry-from-json.ts.
 *
 * Exact by construction: anything it does not recognise (a field of the
 * wrong type, a timestamp out of range, a Value with no kind, a number that
 * is not finite, a `__proto__` key, an object that is not plain, very deep
 * data, ...) leaves the fast path, and `toJsonString` writes the entry or
 * throws its own error. entry-json.test.ts checks both on random entries of
 * every kind.
 */
export function entryJson(e: Entry): string {
  const fast = tryEntryJson(e);
  return fast ?? toJsonString(EntrySchema, e);
}

/** The fast path alone: the JSON, or undefined when `e` is not a shape it handles. */
export function tryEntryJson(e: Entry): string | undefined {
  try {
    return JSON.stringify(entry(e));
  } catch {
    // Not a shape we handle: left to the reflective writer.
  }
  return undefined;
}

/**
 * An entry's canonical JSON in two pieces, the kind written once: `head`,
 * the JSON of the entry without its kind (id, parent, timestamp, seq), and
 * `kind`, the JSON of its kind alone (undefined for an entry without kind).
 * `entryJsonOfParts` joins them into what `tryEntryJson` gives, and
 * `entryJsonWithKind` writes the same entry with another head from `kind`.
 * `value` is the plain object the two were written from (what JSON.parse
 * of the entry's JSON gives, but for the caller's Struct data, which it
 * holds as given, and for keys whose value is undefined, which JSON leaves
 * out). Undefined when `e` is not a shape the fast path handles.
 */
export function tryEntryJsonParts(
  e: Entry,
): { head: string; kind: string | undefined; value: Record<string, unknown> } | undefined {
  try {
    const o = head(e);
    const headJson = JSON.stringify(o);
    const k = e.kind;
    if (k.case === undefined) return { head: headJson, kind: undefined, value: o };
    const v = kindValue(k);
    const kind = JSON.stringify(v);
    o[k.case] = v;
    return { head: headJson, kind, value: o };
  } catch {
    // Not a shape we handle: left to the reflective writer.
  }
  return undefined;
}

/**
 * The canonical JSON of `e`, given the JSON of its kind (`kind` of
 * `tryEntryJsonParts` of an entry whose kind is the very same as `e`'s,
 * unchanged since): its other fields written, the kind as given. Undefined
 * when they are not a shape the fast path handles.
 */
export function entryJsonWithKind(e: Entry, kind: string): string | undefined {
  const c = e.kind.case;
  if (c === undefined) return undefined;
  try {
    return joined(JSON.stringify(head(e)), c, kind);
  } catch {
    // Not a shape we handle: left to the reflective writer.
  }
  return undefined;
}

/**
 * The entry's JSON from the pieces of `tryEntryJsonParts`: `{...head,
 * "<kindCase>": kind}` as JSON.stringify writes it.
 */
export function entryJsonOfParts(
  headJson: string,
  kindCase: Entry["kind"]["case"],
  kind: string | undefined,
): string {
  return kindCase === undefined || kind === undefined ? headJson : joined(headJson, kindCase, kind);
}

/** `{...head, "<key>": kind}` as JSON.stringify writes it, from the head's JSON and the kind's. */
function joined(headJson: string, key: string, kind: string): string {
  // The head's JSON is "{}" or "{...}"; the kind's key is a plain identifier.
  return headJson.length === 2
    ? `{"${key}":${kind}}`
    : `${headJson.slice(0, -1)},"${key}":${kind}}`;
}

// Leaving the fast path is a thrown sentinel, not an Error (no stack trace).
// Stryker disable next-line ObjectLiteral,BooleanLiteral: the sentinel is only thrown and caught, never read
const UNHANDLED = Object.freeze({ unhandled: true });
function bail(): never {
  throw UNHANDLED;
}

type Obj = Record<string, unknown>;

/**
 * A message as protobuf-es v2 makes them: a plain object. toJson reads own
 * fields only, so a message with another prototype (which could lend it a
 * field) is left to it.
 */
function plain<T>(m: T): T {
  // A primitive's prototype is not Object.prototype, and null or undefined
  // make getPrototypeOf throw: the fast path is left either way.
  if (Object.getPrototypeOf(m) !== Object.prototype) bail();
  return m;
}

function str(v: unknown): string {
  if (typeof v !== "string") bail();
  return v;
}

function u32(v: unknown): number {
  if (typeof v !== "number") bail();
  return v;
}

function u64(v: unknown): string {
  if (typeof v !== "bigint") bail();
  return v.toString();
}

function bool(v: unknown): boolean {
  if (typeof v !== "boolean") bail();
  return v;
}

/** Sets `o[k]` to a string field with implicit presence: only when not empty. */
function implicitStr(o: Obj, k: string, v: unknown): void {
  if (str(v) !== "") o[k] = v;
}

/** An optional string (explicit presence): set when defined, even empty. */
function optionalStr(o: Obj, k: string, v: unknown): void {
  if (v !== undefined) o[k] = str(v);
}

function implicitU32(o: Obj, k: string, v: unknown): void {
  if (u32(v) !== 0) o[k] = v;
}

function implicitU64(o: Obj, k: string, v: unknown): void {
  const s = u64(v);
  if (s !== "0") o[k] = s;
}

const MIN_MS = Date.parse("0001-01-01T00:00:00Z");
const MAX_MS = Date.parse("9999-12-31T23:59:59Z");

/**
 * The second of the last timestamp written, as text: the entries of a batch
 * share one, and a session's entries are often the same second. A pure cache.
 */
let lastSeconds: bigint | undefined;
// Stryker disable next-line StringLiteral: never read before it is set (lastSeconds starts undefined, so the first timestamp sets both)
let lastSecond = "";

/** timestampToJson of protobuf-es, for the timestamps it accepts. */
function timestamp(t: Timestamp): string {
  plain(t);
  const ms = Number(t.seconds) * 1000;
  const nanos = t.nanos;
  if (typeof t.seconds !== "bigint" || typeof nanos !== "number") bail();
  if (!(ms >= MIN_MS && ms <= MAX_MS) || !(nanos >= 0 && nanos <= 999_999_999)) bail();
  let z = "Z";
  if (nanos > 0) {
    const digits = (nanos + 1_000_000_000).toString().substring(1);
    if (digits.substring(3) === "000000") z = `.${digits.substring(0, 3)}Z`;
    else if (digits.substring(6) === "000") z = `.${digits.substring(0, 6)}Z`;
    else z = `.${digits}Z`;
  }
  // Stryker disable next-line ConditionalExpression: a pure cache: always recomputing the second (true) writes the same text; never recomputing (false) is caught by the tests of timestamps of different seconds, but shares the line
  if (t.seconds !== lastSeconds) {
    // "YYYY-MM-DDTHH:MM:SS" of the second (toISOString writes ".000Z" after
    // it for whole seconds, which toJson replaces with the fraction).
    lastSecond = new Date(ms).toISOString().substring(0, 19);
    lastSeconds = t.seconds;
  }
  return lastSecond + z;
}

/**
 * Deepest nesting of Struct / Value data taken on the fast path (toJson has
 * no limit of its own, but JSON.stringify and the reflective walk run out of
 * stack alike only far deeper; past this the reflective path decides).
 */
const MAX_DATA_DEPTH = 32;

/**
 * A Struct field's JSON object, checked to be what toJson writes unchanged:
 * plain objects and arrays, finite numbers, strings, booleans and nulls, no
 * `__proto__` key (the Struct conversion would drop it). Returns it as is.
 */
function jsonObject(v: unknown, depth = 0): JsonObject {
  const o = plain(v) as Obj;
  if (depth > MAX_DATA_DEPTH) bail();
  for (const k of Object.keys(o)) {
    if (k === "__proto__") bail();
    jsonData(o[k], depth + 1);
  }
  return o as JsonObject;
}

function jsonData(v: unknown, depth: number): void {
  switch (typeof v) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(v)) bail();
      return;
    case "object":
      if (v === null) return;
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype || depth > MAX_DATA_DEPTH) bail();
        // A hole reads as undefined, which is refused below.
        for (let i = 0; i < v.length; i++) jsonData(v[i], depth + 1);
        return;
      }
      jsonObject(v, depth);
      return;
  }
  bail();
}

/** A google.protobuf.Value message as JSON (valueToJson). */
function value(v: Value, depth: number): JsonValue {
  plain(v);
  if (depth > MAX_DATA_DEPTH) bail();
  const k = v.kind;
  switch (k.case) {
    case "nullValue":
      return null;
    case "numberValue":
      if (!Number.isFinite(k.value)) bail();
      return k.value;
    // As toJson: the value as it is (JSON.stringify then writes it alike).
    case "boolValue":
    case "stringValue":
      return k.value;
    case "structValue":
      return struct(k.value, depth + 1);
    case "listValue":
      return list(k.value, depth + 1);
  }
  return bail();
}

function struct(s: Struct, depth: number): JsonObject {
  plain(s);
  // Built as toJson builds it, key by key (a "__proto__" key then sets the
  // prototype in both, and JSON.stringify skips it in both).
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(s.fields)) out[k] = value(v, depth);
  return out;
}

function list(l: ListValue, depth: number): JsonValue[] {
  plain(l);
  return l.values.map((v) => value(v, depth));
}

const ROLES = ["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_ASSISTANT", "ROLE_TOOL"] as const;

function role(r: Role): string | number {
  if (typeof r !== "number") bail();
  // An unknown value is written as its number, as toJson does.
  return ROLES[r] ?? r;
}

function part(p: ContentPart): Obj {
  plain(p);
  const o: Obj = {};
  const k = p.part;
  switch (k.case) {
    case undefined:
      break;
    case "text":
      o.text = str(k.value);
      break;
    case "thinking": {
      const t: Obj = {};
      implicitStr(t, "thinking", plain(k.value).thinking);
      optionalStr(t, "signature", plain(k.value).signature);
      o.thinking = t;
      break;
    }
    case "image": {
      const i: Obj = {};
      implicitStr(i, "mimeType", plain(k.value).mimeType);
      const data = plain(k.value).data;
      if (!(data instanceof Uint8Array)) bail();
      if (data.length > 0) i.data = base64Encode(data);
      o.image = i;
      break;
    }
    case "toolCall": {
      const c: Obj = {};
      implicitStr(c, "id", plain(k.value).id);
      implicitStr(c, "name", plain(k.value).name);
      const args = plain(k.value).arguments;
      if (args !== undefined) c.arguments = value(args, 0);
      o.toolCall = c;
      break;
    }
    default:
      bail();
  }
  return o;
}

function usage(u: Usage): Obj {
  plain(u);
  const o: Obj = {};
  implicitU64(o, "inputTokens", u.inputTokens);
  implicitU64(o, "outputTokens", u.outputTokens);
  implicitU64(o, "cacheReadTokens", u.cacheReadTokens);
  implicitU64(o, "cacheWriteTokens", u.cacheWriteTokens);
  implicitU64(o, "reasoningTokens", u.reasoningTokens);
  if (u.cost !== undefined) {
    const c: Obj = {};
    plain(u.cost);
    implicitStr(c, "amount", u.cost.amount);
    implicitStr(c, "currency", u.cost.currency);
    o.cost = c;
  }
  return o;
}

function message(m: Message): Obj {
  plain(m);
  const o: Obj = {};
  const r = role(m.role);
  if (m.role !== 0) o.role = r;
  if (m.content.length > 0) o.content = m.content.map(part);
  optionalStr(o, "toolCallId", m.toolCallId);
  optionalStr(o, "toolName", m.toolName);
  if (bool(m.isError)) o.isError = true;
  optionalStr(o, "model", m.model);
  optionalStr(o, "provider", m.provider);
  if (m.usage !== undefined) o.usage = usage(m.usage);
  optionalStr(o, "stopReason", m.stopReason);
  if (m.metadata !== undefined) o.metadata = jsonObject(m.metadata);
  return o;
}

function sessionInfo(s: SessionInfo): Obj {
  plain(s);
  const o: Obj = {};
  implicitStr(o, "sessionId", s.sessionId);
  optionalStr(o, "title", s.title);
  optionalStr(o, "cwd", s.cwd);
  if (s.createdAt !== undefined) o.createdAt = timestamp(s.createdAt);
  implicitU32(o, "formatVersion", s.formatVersion);
  optionalStr(o, "parentSessionId", s.parentSessionId);
  optionalStr(o, "agentType", s.agentType);
  implicitU32(o, "spawnDepth", s.spawnDepth);
  if (s.forkedFrom !== undefined) {
    const f: Obj = {};
    const from = plain(s.forkedFrom);
    implicitStr(f, "sessionId", from.sessionId);
    implicitStr(f, "entryId", from.entryId);
    o.forkedFrom = f;
  }
  if (s.metadata !== undefined) o.metadata = jsonObject(s.metadata);
  // A map field is a plain object too; built key by key, as toJson does.
  let t: Obj | undefined;
  for (const [k, v] of Object.entries(plain(s.tags))) {
    t ??= {};
    t[k] = str(v);
  }
  o.tags = t; // undefined when empty: JSON.stringify leaves it out, as toJson does
  return o;
}

function entry(e: Entry): Obj {
  const o = head(e);
  const k = e.kind;
  // The JSON name of each kind is its oneof case.
  if (k.case !== undefined) o[k.case] = kindValue(k);
  return o;
}

/** The fields of an entry before its kind (id, parent, timestamp, seq), checked like `entry`. */
function head(e: Entry): Obj {
  plain(e);
  // A withheld entry (rare: redacted or erased) is left to the reflective writer.
  if (e.withheld !== undefined) bail();
  const o: Obj = {};
  implicitStr(o, "id", e.id);
  optionalStr(o, "parentId", e.parentId);
  if (e.timestamp !== undefined) o.timestamp = timestamp(e.timestamp);
  implicitU64(o, "seq", e.seq);
  return o;
}

/** The JSON object of an entry's kind (the value under its oneof case's name). */
function kindValue(k: Entry["kind"]): Obj {
  switch (k.case) {
    case "sessionInfo":
      return sessionInfo(k.value);
    case "message":
      return message(k.value);
    case "modelChange": {
      const m: Obj = {};
      implicitStr(m, "model", plain(k.value).model);
      optionalStr(m, "provider", plain(k.value).provider);
      return m;
    }
    case "thinkingLevelChange": {
      const t: Obj = {};
      implicitStr(t, "thinkingLevel", plain(k.value).thinkingLevel);
      return t;
    }
    case "compaction": {
      const c: Obj = {};
      implicitStr(c, "summary", plain(k.value).summary);
      const ids = plain(k.value).replacesEntryIds;
      if (ids.length > 0) c.replacesEntryIds = ids.map(str);
      if (plain(k.value).tokensBefore !== undefined)
        c.tokensBefore = u64(plain(k.value).tokensBefore);
      return c;
    }
    case "branchSummary": {
      const b: Obj = {};
      implicitStr(b, "summary", plain(k.value).summary);
      implicitStr(b, "fromId", plain(k.value).fromId);
      return b;
    }
    case "label": {
      const l: Obj = {};
      implicitStr(l, "label", plain(k.value).label);
      return l;
    }
    case "leaf": {
      const l: Obj = {};
      implicitStr(l, "leafId", plain(k.value).leafId);
      return l;
    }
    case "custom": {
      const c: Obj = {};
      implicitStr(c, "namespace", plain(k.value).namespace);
      if (plain(k.value).data !== undefined) c.data = jsonObject(plain(k.value).data);
      return c;
    }
    default:
      return bail();
  }
}
