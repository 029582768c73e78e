import { crc32 } from "node:zlib";
import type { Tags } from "../../core/tags.js";
import { LoadedFile, LoadedRecord, type SavedFile } from "./listing-index-entries.js";

/**
 * The bytes of a persisted listing index (listing-index-file.ts).
 *
 * Layout: one header line, then the body: the files as JSON, a newline,
 * and the root entries' JSON one after another:
 *
 *   {"format":"sessiond.listing-index","version":1,"crc":"<8 hex>","bytes":<n>,"files":<m>}\n
 *   [<file>,...]\n
 *   <root JSON><root JSON>...
 *
 * where crc is the CRC-32 of the body's n bytes, m the length of the files
 * JSON in bytes, and each file one flat array (no key names and no nested
 * objects: the index of 10,000 sessions is read whole at start-up, and
 * every object parsed is one more for the garbage collector):
 *
 *   [sub (0|1), id, ino, birth ms, size, mtime ms, root id, created ms,
 *    parent id, root JSON start, root JSON length]
 *
 * followed, when the record is known, by
 *
 *   size, mtime ms, title (or null), tags, head seq, leaf id,
 *   message count, updated ms, corrupt detail (or null when ok), rootless (0|1)
 *
 * with the first stat fields those of the file when its first line was
 * read, the record's size and mtime those it was true of, and the root
 * JSON's place given in bytes from the start of the roots (they stay bytes
 * until a page shows the session, and so are neither parsed nor escaped
 * inside the files JSON).
 *
 * A corrupt first line is not kept: it is read again, as only a valid root
 * is fixed for the life of a file.
 */

const FORMAT = "sessiond.listing-index";
const VERSION = 1;

/** The bytes of an index holding `files`. */
export function encodeIndex(files: readonly SavedFile[]): Buffer {
  const roots: Buffer[] = [];
  let at = 0;
  const tuples = files.map((f) => {
    const root = Buffer.from(typeof f.payload === "string" ? f.payload : f.payload.text());
    roots.push(root);
    at += root.length;
    return tupleOf(f, at - root.length, root.length);
  });
  const meta = Buffer.from(`${JSON.stringify(tuples)}\n`);
  const body = Buffer.concat([meta, ...roots]);
  const crc = crc32(body).toString(16).padStart(8, "0");
  const header = JSON.stringify({
    format: FORMAT,
    version: VERSION,
    crc,
    bytes: body.length,
    files: meta.length - 1,
  });
  return Buffer.concat([Buffer.from(`${header}\n`), body]);
}

/**
 * The files of an index of `workspace`, or undefined when `bytes` is not a
 * whole, valid index of this version.
 */
export function decodeIndex(bytes: Buffer, workspace: string): LoadedFile[] | undefined {
  const nl = bytes.indexOf(0x0a);
  if (nl < 0) return undefined;
  let tuples: unknown;
  let roots: Buffer;
  try {
    const header: unknown = JSON.parse(bytes.toString("utf8", 0, nl));
    if (!isObject(header) || header.format !== FORMAT || header.version !== VERSION) {
      return undefined;
    }
    const body = bytes.subarray(nl + 1);
    const metaLength = header.files;
    if (header.bytes !== body.length || !isNum(metaLength) || metaLength >= body.length) {
      return undefined;
    }
    if (header.crc !== crc32(body).toString(16).padStart(8, "0")) return undefined;
    tuples = JSON.parse(body.toString("utf8", 0, metaLength));
    roots = body.subarray(metaLength + 1);
  } catch {
    return undefined;
  }
  if (!Array.isArray(tuples)) return undefined;
  // The CRC says these bytes are what a writer wrote; the shape check says
  // the writer was this code (not a file put there by hand or by a bug).
  const out: LoadedFile[] = [];
  for (const t of tuples) {
    const f = Array.isArray(t) ? fileOf(t, roots, workspace) : undefined;
    if (f === undefined) return undefined;
    out.push(f);
  }
  return out;
}

function tupleOf(f: SavedFile, rootAt: number, rootLength: number): unknown[] {
  const k = f.key;
  const t: unknown[] = [
    f.sub ? 1 : 0,
    f.id,
    k.ino,
    k.birth,
    k.size,
    k.mtime,
    f.rootId,
    f.createdAtMs,
    f.parent,
    rootAt,
    rootLength,
  ];
  const r = f.record;
  if (r !== undefined) {
    t.push(
      r.size,
      r.mtime,
      r.title ?? null,
      r.tags,
      r.headSeq,
      r.leafId,
      r.messageCount,
      r.updatedAtMs,
      r.health === "ok" ? null : r.healthDetail,
      r.rootless ? 1 : 0,
    );
  }
  return t;
}

function fileOf(t: unknown[], roots: Buffer, workspace: string): LoadedFile | undefined {
  if (t.length !== 11 && t.length !== 21) return undefined;
  const [sub, id, ino, birth, size, mtime, rootId, createdAtMs, parent, rootAt, rootLength] = t;
  if (
    (sub !== 0 && sub !== 1) ||
    typeof id !== "string" ||
    !isNum(ino) ||
    !isNum(birth) ||
    !isNum(size) ||
    !isNum(mtime) ||
    typeof rootId !== "string" ||
    !isInt(createdAtMs) ||
    typeof parent !== "string" ||
    !isInt(rootAt) ||
    !isInt(rootLength) ||
    rootAt < 0 ||
    rootLength <= 0 ||
    rootAt + rootLength > roots.length
  ) {
    return undefined;
  }
  let record: LoadedRecord | undefined;
  if (t.length === 21) {
    record = recordOf(t, workspace, id, ino, birth);
    if (record === undefined) return undefined;
  }
  return new LoadedFile(
    sub === 1,
    id,
    ino,
    birth,
    size,
    mtime,
    rootId,
    createdAtMs,
    parent,
    roots,
    rootAt,
    rootAt + rootLength,
    record,
  );
}

/** The record in `t[11..21)`; undefined when it is not one. */
function recordOf(
  t: unknown[],
  workspace: string,
  id: string,
  ino: number,
  birth: number,
): LoadedRecord | undefined {
  const [size, mtime, title, tags, headSeq, leafId, messageCount, updatedAtMs, detail, rootless] =
    t.slice(11);
  if (
    !isNum(size) ||
    !isNum(mtime) ||
    !isNum(updatedAtMs) ||
    (title !== null && typeof title !== "string") ||
    !isTags(tags) ||
    !isInt(headSeq) ||
    typeof leafId !== "string" ||
    !isInt(messageCount) ||
    (detail !== null && typeof detail !== "string") ||
    (rootless !== 0 && rootless !== 1)
  ) {
    return undefined;
  }
  return new LoadedRecord(
    workspace,
    id,
    ino,
    birth,
    size,
    mtime,
    title ?? undefined,
    tags,
    headSeq,
    leafId,
    messageCount,
    updatedAtMs,
    detail === null ? "ok" : "corrupt",
    detail ?? "",
    rootless === 1,
  );
}

function isInt(v: unknown): v is number {
  return Number.isSafeInteger(v);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isNum(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

function isTags(v: unknown): v is Tags {
  return isObject(v) && Object.values(v).every((t) => typeof t === "string");
}
