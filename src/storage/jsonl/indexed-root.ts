import { toJsonString } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { decodeEntry } from "../../core/codec/entry-from-json.js";
import { timestampJsonMs } from "../../core/codec/timestamp-json.js";
import { quote } from "../../core/ids.js";
import { SessionLog } from "../../core/session-log.js";
import type { RootRecord } from "../engine.js";
import { rootRecordOfEntry } from "../session-record.js";
import type { FileKey } from "./file-identity.js";
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

/**
 * Text made when first asked for: the root JSON of a root seeded from the
 * persisted listing index stays bytes in the index file's buffer until a
 * page shows the session (listing-index-file.ts).
 */
export interface LazyText {
  text(): string;
}

/**
 * What the root index keeps of a file: its root record, the id of its root
 * entry, the key of the file it was read from and its JSON. An IndexedRoot,
 * or a file loaded from the persisted listing index (which is all of that
 * by itself: listing-index-entries.ts).
 */
export interface FileRoot extends RootRecord {
  /** The root entry's id: tells a file replaced behind our back from the one indexed. */
  readonly rootId: string;
  /** The key of the file the root was read from (file-identity.ts), when known. */
  readonly origin: FileKey | undefined;
  /** The root entry's JSON; undefined for a corrupt root. */
  payloadJson(): string | undefined;
}

/** An indexed root: cheap fields from the JSON, the Entry decoded on first use. */
export class IndexedRoot implements FileRoot {
  private payload: string | LazyText | undefined;
  private decoded: Entry | undefined;
  private isDecoded: boolean;

  private constructor(
    readonly sessionId: string,
    /** The root entry's id: tells a file replaced behind our back from the one indexed. */
    readonly rootId: string,
    readonly createdAtMs: number,
    readonly parentSessionId: string,
    readonly health: "ok" | "corrupt",
    readonly healthDetail: string,
    payload: string | LazyText | undefined,
    decoded: Entry | undefined,
    /**
     * The key of the file the root was read from (file-identity.ts), when
     * known: what the persisted listing index checks it by.
     */
    readonly origin: FileKey | undefined,
  ) {
    this.payload = payload;
    this.decoded = decoded;
    this.isDecoded = payload === undefined;
  }

  /** The root of a session this process knows whole (it created or loaded it). */
  static ofEntry(sessionId: string, root: Entry, origin?: FileKey): IndexedRoot {
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
      origin,
    );
  }

  static corrupt(sessionId: string, detail: string, origin?: FileKey): IndexedRoot {
    return new IndexedRoot(sessionId, "", 0, "", "corrupt", detail, undefined, undefined, origin);
  }

  static ofJson(
    sessionId: string,
    rootId: string,
    createdAtMs: number,
    parentSessionId: string,
    payload: string | LazyText,
    origin?: FileKey,
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
      origin,
    );
  }

  get root(): Entry | undefined {
    if (!this.isDecoded) {
      this.isDecoded = true;
      this.decoded = decodeRoot(this.sessionId, this.payloadJson() as string);
    }
    return this.decoded;
  }

  /**
   * The root entry's JSON, as read from the first line (kept after
   * decoding: the persisted listing index writes it back as it was), or
   * encoded from the entry of a root this process created; undefined for a
   * corrupt root.
   */
  payloadJson(): string | undefined {
    const p = this.payload;
    if (p === undefined) {
      if (this.decoded !== undefined) this.payload = toJsonString(EntrySchema, this.decoded);
    } else if (typeof p !== "string") {
      this.payload = p.text();
    }
    return this.payload as string | undefined;
  }
}

/** The root entry of `payload`, checked as a log's first entry; undefined when it is not one. */
export function decodeRoot(sessionId: string, payload: string): Entry | undefined {
  try {
    // The reader's decoder (core/codec/entry-from-json.ts): what fromJson gives, without its reflection.
    const entry = decodeEntry(JSON.parse(payload), { ignoreUnknownFields: true });
    new SessionLog(sessionId).apply(entry);
    return entry;
  } catch {
    return undefined;
  }
}

/** The indexed root of the first line `buf[0, newline)` (newline -1: the file ended first). */
export function rootOfFirstLine(
  workspace: string,
  sessionId: string,
  buf: Buffer,
  length: number,
  newline: number,
  origin?: FileKey,
): IndexedRoot {
  const corrupt = (reason: string) =>
    IndexedRoot.corrupt(
      sessionId,
      `session ${quote(sessionId)} in workspace ${quote(workspace)} is corrupt at line 1 (byte 0): ${reason}`,
      origin,
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
  return IndexedRoot.ofJson(sessionId, root.id, root.createdAtMs, root.parent, payload, origin);
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
