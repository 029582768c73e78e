/**
 * A serialized value (the serializer's type and bytes) as the JSON fields
 * of a Custom entry, and back. UTF-8 bytes (what LangGraph's JSON
 * serializer writes) are kept as text, anything else as base64. A value
 * that starts like the previous version of its channel (a list that grew
 * by a message) is kept as that version's first `keep` characters plus
 * the rest, so a state that grows each step costs the growth, not the
 * whole state again.
 */

/** How a version of a channel (or a checkpoint, metadata, a write) is kept. */
export interface StoredValue {
  /** The serializer's type ("json", "bytes", ...). */
  t: string;
  /** The text (the tail after `keep` characters of `base`, when `base` is set). */
  d?: string;
  /** `d` is base64 of bytes that are not UTF-8. */
  b64?: boolean;
  /** The entry (a Message off the checkpoints' path) whose text part holds `d`. */
  ref?: string;
  /** The checkpoint (of the same namespace) whose value of the same channel this one extends. */
  base?: string;
  /** How many characters of `base`'s text this one starts with. */
  keep?: number;
}

/** A shorter common start than this is not worth a reference to the base. */
const MIN_KEEP = 64;

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** The text of UTF-8 bytes, or undefined for bytes that are not UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** `bytes` as a StoredValue of its own (no base). */
export function storedBytes(type: string, bytes: Uint8Array): StoredValue {
  const text = utf8Text(bytes);
  if (text !== undefined) return { t: type, d: text };
  return { t: type, d: Buffer.from(bytes).toString("base64"), b64: true };
}

/**
 * How many characters `a` and `b` start with in common, never ending
 * between the two halves of a surrogate pair (a tail that began with a
 * lone low surrogate could not be stored as UTF-8).
 */
export function commonStart(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a.charCodeAt(k) === b.charCodeAt(k)) k++;
  if (k > 0 && k < b.length) {
    const last = b.charCodeAt(k - 1);
    if (last >= 0xd800 && last <= 0xdbff) k--;
  }
  return k;
}

/**
 * `value` kept as an extension of `base` (the text of the channel's value
 * stored by checkpoint `baseCheckpoint`) when they share a long enough
 * start and the tail is under half the text; else `value` unchanged.
 */
export function againstBase(
  value: StoredValue,
  baseCheckpoint: string,
  base: string | undefined,
): StoredValue {
  if (value.b64 || value.d === undefined || base === undefined) return value;
  const text = value.d;
  const keep = commonStart(base, text);
  if (keep < MIN_KEEP || text.length - keep > text.length / 2) return value;
  return { t: value.t, d: text.slice(keep), base: baseCheckpoint, keep };
}

/** Finds what `materialize` needs: a base checkpoint's stored value, a carrier entry's text. */
export interface ValueSource {
  version(checkpoint: string): StoredValue | undefined;
  carried(entryId: string): string | undefined;
}

/** The text `value` stands for (its own, or its base's start and its tail). */
export function materialize(value: StoredValue, source: ValueSource): string {
  const pieces: string[] = [];
  let want = Number.POSITIVE_INFINITY;
  let cur: StoredValue = value;
  for (let depth = 0; ; depth++) {
    const own = ownText(cur, source);
    if (cur.base === undefined || cur.keep === undefined) {
      pieces.push(want === Number.POSITIVE_INFINITY ? own : own.slice(0, want));
      break;
    }
    if (want > cur.keep) {
      pieces.push(own.slice(0, want - cur.keep));
      want = cur.keep;
    }
    const base = source.version(cur.base);
    if (base === undefined || depth > 100_000) {
      throw new Error(
        `langgraph value: the value of checkpoint ${cur.base} it extends is not stored`,
      );
    }
    cur = base;
  }
  return pieces.reverse().join("");
}

function ownText(value: StoredValue, source: ValueSource): string {
  if (value.ref === undefined) return value.d ?? "";
  const text = source.carried(value.ref);
  if (text === undefined) throw new Error(`langgraph value: entry ${value.ref} is not stored`);
  return text;
}

/** The bytes a stored value's text stands for (base64 decoded when `b64`). */
export function bytesOf(value: StoredValue, text: string): Uint8Array {
  return value.b64 ? new Uint8Array(Buffer.from(text, "base64")) : encoder.encode(text);
}

/** The UTF-8 size of a string, counted without encoding it. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** A StoredValue as Struct-safe JSON (no undefined fields). */
export function storedJson(v: StoredValue): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = { t: v.t };
  if (v.d !== undefined) out.d = v.d;
  if (v.b64) out.b64 = true;
  if (v.ref !== undefined) out.ref = v.ref;
  if (v.base !== undefined) out.base = v.base;
  if (v.keep !== undefined) out.keep = v.keep;
  return out;
}

/** A StoredValue read back from an entry's JSON (undefined when it is not one). */
export function storedOf(json: unknown): StoredValue | undefined {
  if (typeof json !== "object" || json === null) return undefined;
  const o = json as Record<string, unknown>;
  if (typeof o.t !== "string") return undefined;
  const v: StoredValue = { t: o.t };
  if (typeof o.d === "string") v.d = o.d;
  if (o.b64 === true) v.b64 = true;
  if (typeof o.ref === "string") v.ref = o.ref;
  if (typeof o.base === "string") v.base = o.base;
  if (typeof o.keep === "number") v.keep = o.keep;
  return v;
}
