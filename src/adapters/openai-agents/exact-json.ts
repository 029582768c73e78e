import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

/**
 * JSON that a protobuf message holds exactly, and a lossless form for the
 * rest. Protobuf strings are UTF-8, and a JavaScript string may hold a lone
 * UTF-16 surrogate, which has no UTF-8 form: on the wire it becomes U+FFFD.
 * JSON.stringify writes a lone surrogate as an escape (`\ud800`), so a value
 * holding one is kept as its JSON text under `<key>_json` instead of as a
 * Struct under `<key>` (the convention of the Python adapter). Other values
 * keep their Struct form: ordinary items cost nothing more.
 */

/** A lone surrogate: a high one not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

/** Whether every string of `value`, object keys included, has a UTF-8 form. */
export function utf8Safe(value: unknown): boolean {
  if (typeof value === "string") return !LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.every(utf8Safe);
  if (value === null || typeof value !== "object" || !isPlain(value)) return true;
  return Object.entries(value).every(([k, v]) => !LONE_SURROGATE.test(k) && utf8Safe(v));
}

/**
 * `value` as the server stores it: each lone surrogate of its strings and
 * keys replaced by U+FFFD (what UTF-8 encoding does). Plain objects and
 * arrays are copied only where something changed; anything else (bytes,
 * numbers) is kept.
 */
export function asUtf8<T>(value: T): T {
  if (utf8Safe(value)) return value;
  if (typeof value === "string") return value.replace(LONE_SURROGATES, "\uFFFD") as T;
  if (Array.isArray(value)) return value.map(asUtf8) as T;
  return Object.fromEntries(
    Object.entries(value as object).map(([k, v]) => [asUtf8(k), asUtf8(v)]),
  ) as T;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `{ key: value }`, or `{ key_json: its JSON text }` when a Struct would not keep it exactly. */
export function carry(key: string, value: JsonValue): JsonObject {
  return utf8Safe(value) ? { [key]: value } : { [`${key}_json`]: JSON.stringify(value) };
}

/** What `carry` stored under `key` in `data`. */
export function carried(data: JsonObject | undefined, key: string): JsonValue | undefined {
  const text = data?.[`${key}_json`];
  return typeof text === "string" ? (JSON.parse(text) as JsonValue) : data?.[key];
}
