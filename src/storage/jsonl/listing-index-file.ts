import { randomBytes } from "node:crypto";
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { crc32 } from "node:zlib";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { Tags } from "../../core/tags.js";
import type { SessionRecord } from "../engine.js";
import type { FileKey } from "./file-identity.js";
import { errnoCode } from "./fs-ops.js";
import type { IndexedRoot, LazyText } from "./indexed-root.js";

/**
 * The persisted listing index of one workspace, as a file:
 * `<dataDir>/<workspace>/listing-index.json`. It keeps, per session file,
 * what a listing needs and would otherwise read every file for after a
 * restart: the root (first line) and the listing record (counters, title,
 * folded tags), each with the stat key it was true for (file-identity.ts).
 *
 * It is a cache: the session files stay the truth. Every entry is checked
 * against a stat of its file before it is used (listing-index.ts), a file
 * that is missing, cut, damaged (CRC), of another version or not what this
 * code writes counts as empty, and the next listing reads the session
 * files and writes it again. So it needs no fsync: a crash or power cut
 * can at worst lose or age it, never make a listing wrong. It is written
 * to a temp file and renamed over the old one, so a reader sees a whole
 * file or the previous one, and two processes on one data dir can both
 * write it (the last rename wins; both contents are true of their time).
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

/** A listing record to save (SessionRecord without workspace, id and root). */
export interface SavedRecord {
  /** Size and mtime of the file when the record was true of it (its inode: the file's). */
  readonly size: number;
  readonly mtime: number;
  readonly title: string | undefined;
  readonly tags: Tags;
  readonly headSeq: number;
  readonly leafId: string;
  readonly messageCount: number;
  readonly updatedAtMs: number;
  readonly health: "ok" | "corrupt";
  readonly healthDetail: string;
  /** The record has no root (its first record was unreadable in the full read). */
  readonly rootless: boolean;
}

/** One session file to save: a valid root, and the record when known. */
export interface SavedFile {
  /** In `sessions/subagents/` rather than `sessions/`. */
  readonly sub: boolean;
  readonly id: string;
  /** The key (file-identity.ts) of the file when its first line was read. */
  readonly key: FileKey;
  readonly rootId: string;
  readonly createdAtMs: number;
  readonly parent: string;
  /** The root entry's JSON, as in the first line. */
  readonly payload: string | LazyText;
  readonly record: SavedRecord | undefined;
}

/**
 * One session file as loaded. Also the key of the file at its first-line
 * read and the root's JSON (read from the index's bytes when first asked
 * for): the engine keeps it as the root's origin and payload, so loading
 * 10,000 sessions makes no object per session beyond this and its record.
 */
export class LoadedFile implements FileKey, LazyText {
  constructor(
    readonly sub: boolean,
    readonly id: string,
    readonly ino: number,
    readonly birth: number,
    readonly size: number,
    readonly mtime: number,
    readonly rootId: string,
    readonly createdAtMs: number,
    readonly parent: string,
    private readonly roots: Buffer,
    private readonly rootAt: number,
    private readonly rootEnd: number,
    readonly record: LoadedRecord | undefined,
  ) {}

  text(): string {
    return this.roots.toString("utf8", this.rootAt, this.rootEnd);
  }
}

/**
 * A listing record as loaded: what a save writes back as it is, the key
 * of the file state it is true of, and, once the engine gives it its root
 * (`seeded`), the SessionRecord a listing uses.
 */
export class LoadedRecord implements SessionRecord, SavedRecord, FileKey {
  private indexed: IndexedRoot | undefined;

  constructor(
    readonly workspace: string,
    readonly sessionId: string,
    readonly ino: number,
    readonly birth: number,
    readonly size: number,
    readonly mtime: number,
    readonly title: string | undefined,
    readonly tags: Tags,
    readonly headSeq: number,
    readonly leafId: string,
    readonly messageCount: number,
    readonly updatedAtMs: number,
    readonly health: "ok" | "corrupt",
    readonly healthDetail: string,
    readonly rootless: boolean,
  ) {}

  /** Decoded when a page shows the session, as for roots read from first lines. */
  get root(): Entry | undefined {
    return this.rootless ? undefined : this.indexed?.root;
  }

  /** Gives the record the root it was loaded with. */
  seeded(root: IndexedRoot): this {
    this.indexed = root;
    return this;
  }
}

const FORMAT = "sessiond.listing-index";
const VERSION = 1;
export const LISTING_INDEX_NAME = "listing-index.json";
const TEMP_PREFIX = ".listing-index-";
/** A temp file older than this is a crashed writer's (a write takes milliseconds). */
const TEMP_GRACE_MS = 60_000;

/** The file operations the index uses (injectable: tests fail them). */
export interface ListingIndexIo {
  readFile(p: string): Promise<Buffer>;
  writeFile(p: string, data: Buffer): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(p: string): Promise<void>;
  readdir(dir: string): Promise<string[]>;
  mtimeMs(p: string): Promise<number>;
}

const nodeIo: ListingIndexIo = {
  readFile: (p) => fsp.readFile(p),
  writeFile: (p, data) => fsp.writeFile(p, data, { flag: "wx" }),
  rename: (from, to) => fsp.rename(from, to),
  unlink: (p) => fsp.unlink(p),
  readdir: (dir) => fsp.readdir(dir),
  mtimeMs: async (p) => (await fsp.stat(p)).mtimeMs,
};

/** Reads and writes the index files of a data dir. */
export class ListingIndexFile {
  constructor(
    private readonly dataDir: string,
    private readonly io: ListingIndexIo = nodeIo,
  ) {}

  /** The index file of `workspace` (a checked name: paths.ts built its session dirs first). */
  pathOf(workspace: string): string {
    return path.join(this.dataDir, workspace, LISTING_INDEX_NAME);
  }

  /**
   * The files the index of `workspace` holds: empty when there is no index
   * or it is not one this code wrote whole. Never throws.
   */
  async load(workspace: string): Promise<LoadedFile[]> {
    let bytes: Buffer;
    try {
      bytes = await this.io.readFile(this.pathOf(workspace));
    } catch {
      return [];
    }
    return decodeIndex(bytes, workspace) ?? [];
  }

  /** Writes the index of `workspace` (temp file, then rename over the old one). */
  async save(workspace: string, files: readonly SavedFile[]): Promise<void> {
    const target = this.pathOf(workspace);
    const temp = path.join(
      path.dirname(target),
      `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString("hex")}.tmp`,
    );
    await this.io.writeFile(temp, encodeIndex(files));
    try {
      await this.io.rename(temp, target);
    } catch (err) {
      await this.io.unlink(temp).catch(() => undefined);
      throw err;
    }
  }

  /** Removes temp files of writers that crashed mid-save. Never throws. */
  async removeStaleTemps(workspace: string, now = Date.now()): Promise<void> {
    const dir = path.dirname(this.pathOf(workspace));
    let names: string[];
    try {
      names = await this.io.readdir(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.startsWith(TEMP_PREFIX)) continue;
      const p = path.join(dir, name);
      try {
        if (now - (await this.io.mtimeMs(p)) >= TEMP_GRACE_MS) await this.io.unlink(p);
      } catch (err) {
        // Gone already (another process cleaned it): nothing to do; anything else: next time.
        if (errnoCode(err) !== "ENOENT") return;
      }
    }
  }
}

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
