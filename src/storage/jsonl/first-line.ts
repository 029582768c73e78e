import { closeSync, openSync, readSync } from "node:fs";
import { fromJson } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { quote } from "../../core/ids.js";
import { SessionLog } from "../../core/session-log.js";
import type { RootRecord } from "../engine.js";
import { rootRecordOfEntry } from "../session-record.js";
import { closeQuietly, errnoCode, type FsOps } from "./fs-ops.js";
import { checkFrame } from "./record.js";

/**
 * The root of a session file from its FIRST LINE only, for listings. A
 * file is append-only, so its first line never changes: it is read once
 * (one open, usually one read of one block, one close) and remembered by
 * the root index (root-index.ts).
 *
 * The line is checked like the reader checks it (record.ts, reader.ts):
 * newline-terminated, frame and CRC right, header seq 1, the payload JSON
 * an object whose seq is 1, a SessionInfo without a parent, a well-formed
 * created_at. A file that fails any of these is listed with health
 * "corrupt". A first record with the `more` marker (record.ts; the engine
 * creates files without markers, but a file may be put together by other
 * means) is read the same way: only the full read of a page record would
 * call a file cut inside its first write corrupt. Turning the JSON into a proto Entry costs several times more
 * than everything else together (about 5 µs, as much as reading the file),
 * so it is deferred until `root` is first read: a listing of 10,000
 * sessions filters and orders on created_at and parent_session_id, taken
 * from the JSON, and never decodes the 9,900 roots it does not show. A
 * line with a valid checksum that still fails to decode (never written by
 * a sessiond; at worst by a newer or a buggy one) yields `root` undefined;
 * the page record (a full read) shows it CORRUPT.
 */

/** First read: one block holds the root line of nearly every session. */
export const FIRST_BLOCK = 4096;
const NEWLINE = 0x0a;

/** An indexed root: cheap fields from the JSON, the Entry decoded on first use. */
export class IndexedRoot implements RootRecord {
  private payload: string | undefined;
  private decoded: Entry | undefined;

  private constructor(
    readonly sessionId: string,
    /** The root entry's id: tells a file replaced behind our back from the one indexed. */
    readonly rootId: string,
    readonly createdAtMs: number,
    readonly parentSessionId: string,
    readonly health: "ok" | "corrupt",
    readonly healthDetail: string,
    payload: string | undefined,
    decoded: Entry | undefined,
  ) {
    this.payload = payload;
    this.decoded = decoded;
  }

  /** The root of a session this process knows whole (it created or loaded it). */
  static ofEntry(sessionId: string, root: Entry): IndexedRoot {
    const r = rootRecordOfEntry(sessionId, root);
    return new IndexedRoot(
      sessionId,
      root.id,
      r.createdAtMs,
      r.parentSessionId,
      "ok",
      "",
      undefined,
      root,
    );
  }

  static corrupt(sessionId: string, detail: string): IndexedRoot {
    return new IndexedRoot(sessionId, "", 0, "", "corrupt", detail, undefined, undefined);
  }

  static ofJson(
    sessionId: string,
    rootId: string,
    createdAtMs: number,
    parentSessionId: string,
    payload: string,
  ): IndexedRoot {
    return new IndexedRoot(
      sessionId,
      rootId,
      createdAtMs,
      parentSessionId,
      "ok",
      "",
      payload,
      undefined,
    );
  }

  get root(): Entry | undefined {
    const payload = this.payload;
    if (payload !== undefined) {
      this.payload = undefined;
      this.decoded = decodeRoot(this.sessionId, payload);
    }
    return this.decoded;
  }
}

function decodeRoot(sessionId: string, payload: string): Entry | undefined {
  try {
    const entry = fromJson(EntrySchema, JSON.parse(payload), { ignoreUnknownFields: true });
    new SessionLog(sessionId).apply(entry);
    return entry;
  } catch {
    return undefined;
  }
}

/**
 * Reads the first line of `file` into `scratch` (growing it when the line
 * is longer): the bytes read and where the first newline is (-1 when the
 * file ends first). Undefined when the file does not exist (any more).
 */
export async function readFirstLine(
  ops: FsOps,
  file: string,
  scratch: Buffer,
): Promise<FirstLine | undefined> {
  let fd: number;
  try {
    fd = await ops.open(file, "r");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
  try {
    let buf = scratch;
    let length = 0;
    for (;;) {
      if (length === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, length);
        buf = bigger;
      }
      const n = await ops.read(fd, buf, length, buf.length - length, length);
      const nl = n > 0 ? buf.indexOf(NEWLINE, length) : -1;
      length += n;
      if (nl >= 0 && nl < length) return { buf, length, newline: nl };
      if (n === 0) return { buf, length, newline: -1 };
    }
  } finally {
    await closeQuietly(ops, fd);
  }
}

/** What readFirstLine and readFirstLineSync give. */
export interface FirstLine {
  /** The bytes read (`scratch`, or a bigger buffer for a long line). */
  readonly buf: Buffer;
  readonly length: number;
  /** Offset of the first newline in `buf`, -1 when the file ended first. */
  readonly newline: number;
}

/**
 * readFirstLine with node:fs's synchronous calls, straight on the calling
 * thread: for files in the page cache that is 2–3 µs of system calls per
 * file against 10+ µs of thread-pool round trips and promises for the
 * asynchronous three (open, read, close). The root index uses it in short
 * slices, and only when the engine runs on the real file system.
 */
export function readFirstLineSync(file: string, scratch: Buffer): FirstLine | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
  try {
    let buf = scratch;
    let length = 0;
    for (;;) {
      if (length === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, length);
        buf = bigger;
      }
      const n = readSync(fd, buf, length, buf.length - length, length);
      const nl = n > 0 ? buf.indexOf(NEWLINE, length) : -1;
      length += n;
      if (nl >= 0 && nl < length) return { buf, length, newline: nl };
      if (n === 0) return { buf, length, newline: -1 };
    }
  } finally {
    closeSync(fd);
  }
}

/** The indexed root of the first line `buf[0, newline)` (newline -1: the file ended first). */
export function rootOfFirstLine(
  workspace: string,
  sessionId: string,
  buf: Buffer,
  length: number,
  newline: number,
): IndexedRoot {
  const corrupt = (reason: string) =>
    IndexedRoot.corrupt(
      sessionId,
      `session ${quote(sessionId)} in workspace ${quote(workspace)} is corrupt at line 1 (byte 0): ${reason}`,
    );
  if (length === 0) return corrupt("the file is empty");
  if (newline < 0) return corrupt("no valid first record (incomplete first line)");
  const frame = checkFrame(buf, 0, newline);
  if (typeof frame === "string") return corrupt(`no valid first record (${frame})`);
  if (frame.seq !== 1) return corrupt(`the first record has seq ${frame.seq}`);
  const payload = buf.toString("utf8", frame.start, frame.end);
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return corrupt(`payload is not a valid entry (${why.slice(0, 120)})`);
  }
  const root = checkRootJson(json);
  if (typeof root === "string") return corrupt(root);
  return IndexedRoot.ofJson(sessionId, root.id, root.createdAtMs, root.parent, payload);
}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A field by its JSON name or its proto name (the proto JSON parser accepts both); null is unset. */
function field(o: JsonObject, jsonName: string, protoName: string): unknown {
  const v = o[jsonName] ?? o[protoName];
  return v === null ? undefined : v;
}

/**
 * What the listing needs of a root entry's JSON, checked the way decoding
 * plus SessionLog.apply would check the first entry: the entry seq 1, a
 * SessionInfo, no parent; or a reason it is not a valid root.
 */
function checkRootJson(
  json: unknown,
): { id: string; createdAtMs: number; parent: string } | string {
  if (!isObject(json)) return "payload is not a valid entry (not a JSON object)";
  const seq = field(json, "seq", "seq");
  if (seq !== 1 && seq !== "1") return `header seq 1 but entry seq ${String(seq ?? 0)}`;
  const id = field(json, "id", "id") ?? "";
  if (typeof id !== "string") return "payload is not a valid entry (id is not a string)";
  const info = field(json, "sessionInfo", "session_info");
  if (!isObject(info) || field(json, "parentId", "parent_id") !== undefined) {
    return "the first entry must be a SessionInfo root";
  }
  const created = field(info, "createdAt", "created_at");
  const createdAtMs = created === undefined ? 0 : timestampJsonMs(created);
  if (createdAtMs === undefined) {
    return "payload is not a valid entry (created_at is not an RFC 3339 timestamp)";
  }
  const parent = field(info, "parentSessionId", "parent_session_id") ?? "";
  if (typeof parent !== "string") {
    return "payload is not a valid entry (parent_session_id is not a string)";
  }
  return { id, createdAtMs, parent };
}

const RFC3339 =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:Z|([+-][0-9][0-9]:[0-9][0-9]))$/;
const MIN_MS = Date.parse("0001-01-01T00:00:00Z");
const MAX_MS = Date.parse("9999-12-31T23:59:59Z");

/**
 * The ms of a google.protobuf.Timestamp in JSON form, exactly as
 * `timestampMs(fromJson(TimestampSchema, value))` computes it (same
 * pattern, range and rounding as @bufbuild/protobuf), without building
 * the message; undefined when it is not a valid timestamp.
 */
export function timestampJsonMs(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const fast = canonicalMs(value);
  if (fast !== undefined) return fast;
  const m = RFC3339.exec(value);
  if (m === null) return undefined;
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[8] ? m[8] : "Z"}`);
  if (Number.isNaN(ms) || ms < MIN_MS || ms > MAX_MS) return undefined;
  const nanos = m[7] ? Number(m[7].padEnd(9, "0")) : 0;
  return ms + Math.round(nanos / 1_000_000);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The common case, about 5 times cheaper: the form `toJson` writes
 * ("YYYY-MM-DDTHH:MM:SS[.fraction]Z") holding a valid date and time of a
 * year from 100 on. Undefined for anything else, which the general path
 * then decides (Date.parse rolls "02-30" over to March, for instance).
 */
function canonicalMs(s: string): number | undefined {
  const n = s.length;
  if (n < 20 || n > 30 || s.charCodeAt(n - 1) !== 0x5a /* Z */) return undefined;
  if (
    s.charCodeAt(4) !== 0x2d /* - */ ||
    s.charCodeAt(7) !== 0x2d ||
    s.charCodeAt(10) !== 0x54 /* T */ ||
    s.charCodeAt(13) !== 0x3a /* : */ ||
    s.charCodeAt(16) !== 0x3a
  ) {
    return undefined;
  }
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 7);
  const day = digits(s, 8, 10);
  const hour = digits(s, 11, 13);
  const minute = digits(s, 14, 16);
  const second = digits(s, 17, 19);
  let nanos = 0;
  if (n > 20) {
    if (s.charCodeAt(19) !== 0x2e /* . */ || n === 21) return undefined;
    const fraction = digits(s, 20, n - 1);
    if (fraction < 0) return undefined;
    nanos = fraction * 10 ** (30 - n);
  }
  if (year < 100 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return undefined;
  if (minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  if (day > days) return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, second) + Math.round(nanos / 1_000_000);
}

/** The decimal number `s[from, to)`, or -1 when a character is not a digit. */
function digits(s: string, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 0x30;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}
