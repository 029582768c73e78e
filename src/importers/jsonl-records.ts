import type { JsonObject } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ImportNote } from "./mapped-session.js";

/** One JSON object of a JSONL file, with its 1-based line number. */
export interface JsonRecord {
  line: number;
  value: JsonObject;
}

/**
 * Splits a JSONL file into its objects. A line that is not a JSON object
 * (a torn last write, a damaged byte) is noted and left out, as the
 * source tools skip it when they load the file; blank lines are nothing.
 */
export function readJsonl(text: string): { records: JsonRecord[]; notes: ImportNote[] } {
  const records: JsonRecord[] = [];
  const notes: ImportNote[] = [];
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    try {
      const value: unknown = JSON.parse(raw);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        records.push({ line: i + 1, value: value as JsonObject });
        continue;
      }
      notes.push({ line: i + 1, reason: "not a JSON object: skipped" });
    } catch (err) {
      notes.push({ line: i + 1, reason: `not JSON (${(err as Error).message}): skipped` });
    }
  }
  return { records, notes };
}

/** An ISO time or Unix milliseconds as a Timestamp; undefined when it is neither. */
export function timestampOf(value: unknown): Timestamp | undefined {
  const ms =
    typeof value === "number" ? value : typeof value === "string" ? Date.parse(value) : Number.NaN;
  const date = new Date(ms);
  // A Date holds ±8.64e15 ms; past that (or NaN) it is Invalid Date, not a time.
  return Number.isNaN(date.getTime()) ? undefined : timestampFromDate(date);
}

/** A string field of a record, or undefined. */
export function str(o: JsonObject | undefined, key: string): string | undefined {
  const v = o?.[key];
  return typeof v === "string" ? v : undefined;
}

/**
 * A field as text for a name (a record's type in a namespace): a string as
 * is, anything else as its JSON. Not String(): it throws on an object whose
 * own toString is no function, which any JSON line can hold.
 */
export function textOf(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
}

/** An object field of a record, or undefined. */
export function obj(o: JsonObject | undefined, key: string): JsonObject | undefined {
  const v = o?.[key];
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined;
}

/** The record without the given keys: what a mapping keeps as metadata. */
export function without(o: JsonObject, ...keys: string[]): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/**
 * Records in file order, except that a record whose parent comes later in
 * the file waits for it (a child written before its parent by an
 * out-of-order write), so the log can be built parents first. Records
 * that wait on each other in a cycle come last, in file order: the log
 * builder then hangs the first under the root and notes it.
 */
export function parentsFirst(
  records: readonly JsonRecord[],
  idOf: (r: JsonRecord) => string | undefined,
  parentOf: (r: JsonRecord) => string | undefined,
): JsonRecord[] {
  const ids = new Set(records.map(idOf));
  const done = new Set<string | undefined>();
  const waiting = new Map<string, JsonRecord[]>();
  const out: JsonRecord[] = [];
  const emit = (r: JsonRecord) => {
    out.push(r);
    const id = idOf(r);
    done.add(id);
    const children = id === undefined ? undefined : waiting.get(id);
    if (children === undefined) return;
    waiting.delete(id as string);
    for (const c of children) emit(c);
  };
  for (const r of records) {
    const parent = parentOf(r);
    if (parent !== undefined && ids.has(parent) && !done.has(parent) && parent !== idOf(r)) {
      waiting.set(parent, [...(waiting.get(parent) ?? []), r]);
    } else {
      emit(r);
    }
  }
  const stuck = new Set([...waiting.values()].flat());
  for (const r of records) if (stuck.has(r) && !out.includes(r)) emit(r);
  return out;
}
