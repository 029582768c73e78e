import { endianness } from "node:os";
import { crc32 } from "node:zlib";
import type { Tags } from "../../core/tags.js";
import { usageToJson } from "../usage-report.js";
import { ALL_FLAGS, FLAG, IndexBody, SLOT, STRING, WIDTH } from "./listing-index-body.js";
import {
  LoadedFile,
  LoadedRecord,
  type SavedFile,
  type SavedRecord,
} from "./listing-index-entries.js";

/**
 * The bytes of a persisted listing index (listing-index-file.ts).
 *
 * Why binary: the index of 10,000 sessions is read whole by the first
 * listing after every start, which is measured against reading 10,000
 * first lines (bench rows 6/cold, 11/filter-cold). As JSON, parsing it made
 * ~250,000 values and 10,000 arrays (23 ms, and the garbage collector's
 * time on top); read as numbers from one Float64Array and strings sliced
 * from one buffer, the same files cost a quarter of that.
 *
 * Layout: one ASCII header line, padded with spaces to a multiple of 8
 * bytes (so the numbers can be read in place), then the body:
 *
 *   {"format":"sessiond.listing-index","version":3,"endian":"LE",
 *    "crc":"<8 hex>","bytes":<body bytes>,"files":<n>,"tags":<t>,"strings":<s>,
 *    "usage":<u>}   \n
 *   n × 20 float64 (this machine's byte order, named in the header)
 *   t bytes: the distinct tag sets, a JSON array of objects
 *   s bytes: the strings, UTF-8, one after another
 *   the root entries' JSON, one after another (kept as bytes until a page
 *   shows the session)
 *   u bytes: the records' usage sums (UsageReport: per UTC hour and model,
 *   storage/usage-report.ts usageToJson), one JSON text after another,
 *   parsed only when a report asks
 *
 * The 20 numbers of a file (see SLOT): flags (sub, has a record, rootless,
 * corrupt, has a title, has usage sums), the file key when its first line
 * was read (inode, birth ms, size, mtime ms), the root's created ms, where
 * its root JSON ends, where each of its six strings ends (id, root id,
 * parent id; leaf id, title, corrupt detail: empty without a record), the
 * record's size and mtime it was true of, head seq, message count, updated
 * ms and tag set, and where its usage sums end. Strings, roots and sums
 * start where the previous one ended, so only ends are kept. The CRC
 * covers the body: a reader trusts a writer of this version to have
 * written it whole, and still checks every value's shape (a file put there
 * by hand or by a bug is refused). Version 2 files (no usage) are ignored
 * and written again from the files, as any other version.
 *
 * A corrupt first line is not kept: it is read again, as only a valid root
 * is fixed for the life of a file.
 */

const FORMAT = "sessiond.listing-index";
const VERSION = 3;
const ENDIAN = endianness();

/** The bytes of an index holding `files`. */
export function encodeIndex(files: readonly SavedFile[]): Buffer {
  const nums = new Float64Array(files.length * WIDTH);
  const tagSets: Tags[] = [];
  const tagSetAt = new Map<string, number>();
  const strings: string[] = [];
  const roots: Buffer[] = [];
  const usages: Buffer[] = [];
  let stringEnd = 0;
  let rootEnd = 0;
  let usageEnd = 0;
  const addString = (s: string, slot: number) => {
    strings.push(s);
    stringEnd += Buffer.byteLength(s);
    nums[slot] = stringEnd;
  };
  files.forEach((f, i) => {
    const at = i * WIDTH;
    const r = f.record;
    const usageText = r === undefined ? "" : usageTextOf(r);
    if (usageText !== "") {
      const u = Buffer.from(usageText);
      usages.push(u);
      usageEnd += u.length;
    }
    nums[at + SLOT.usageEnd] = usageEnd;
    nums[at + SLOT.flags] =
      (f.sub ? FLAG.sub : 0) |
      (r === undefined
        ? 0
        : FLAG.record |
          (r.rootless ? FLAG.rootless : 0) |
          (r.health === "ok" ? 0 : FLAG.corrupt) |
          (r.title === undefined ? 0 : FLAG.titled) |
          (usageText === "" ? 0 : FLAG.usage));
    nums[at + SLOT.ino] = f.key.ino;
    nums[at + SLOT.birth] = f.key.birth;
    nums[at + SLOT.size] = f.key.size;
    nums[at + SLOT.mtime] = f.key.mtime;
    nums[at + SLOT.createdAtMs] = f.createdAtMs;
    const root = Buffer.from(typeof f.payload === "string" ? f.payload : f.payload.text());
    roots.push(root);
    rootEnd += root.length;
    nums[at + SLOT.rootEnd] = rootEnd;
    const s = at + SLOT.strings;
    addString(f.id, s + STRING.id);
    addString(f.rootId, s + STRING.rootId);
    addString(f.parent, s + STRING.parent);
    addString(r?.leafId ?? "", s + STRING.leafId);
    addString(r?.title ?? "", s + STRING.title);
    addString(r === undefined || r.health === "ok" ? "" : r.healthDetail, s + STRING.detail);
    if (r === undefined) return;
    nums[at + SLOT.recordSize] = r.size;
    nums[at + SLOT.recordMtime] = r.mtime;
    nums[at + SLOT.headSeq] = r.headSeq;
    nums[at + SLOT.messageCount] = r.messageCount;
    nums[at + SLOT.updatedAtMs] = r.updatedAtMs;
    const key = JSON.stringify(r.tags);
    let set = tagSetAt.get(key);
    if (set === undefined) {
      set = tagSets.length;
      tagSets.push(r.tags);
      tagSetAt.set(key, set);
    }
    nums[at + SLOT.tags] = set;
  });
  const tags = Buffer.from(JSON.stringify(tagSets));
  const text = Buffer.from(strings.join(""));
  const body = Buffer.concat([
    Buffer.from(nums.buffer, nums.byteOffset, nums.byteLength),
    tags,
    text,
    ...roots,
    ...usages,
  ]);
  const header = JSON.stringify({
    format: FORMAT,
    version: VERSION,
    endian: ENDIAN,
    crc: crc32(body).toString(16).padStart(8, "0"),
    bytes: body.length,
    files: files.length,
    tags: tags.length,
    strings: text.length,
    usage: usageEnd,
  });
  const padded = header.padEnd(Math.ceil((header.length + 1) / 8) * 8 - 1, " ");
  return Buffer.concat([Buffer.from(`${padded}\n`), body]);
}

/**
 * The files of an index of `workspace`, or undefined when `bytes` is not a
 * whole, valid index of this version written on a machine of this byte order.
 */
export function decodeIndex(bytes: Buffer, workspace: string): LoadedFile[] | undefined {
  const nl = bytes.indexOf(0x0a);
  if (nl < 0 || (nl + 1) % 8 !== 0) return undefined;
  let header: unknown;
  try {
    header = JSON.parse(bytes.toString("latin1", 0, nl));
  } catch {
    return undefined;
  }
  if (!isObject(header) || header.format !== FORMAT || header.version !== VERSION) {
    return undefined;
  }
  const body = bytes.subarray(nl + 1);
  const { files, tags, strings, usage } = header;
  if (
    header.endian !== ENDIAN ||
    header.bytes !== body.length ||
    !isCount(files) ||
    !isCount(tags) ||
    !isCount(strings) ||
    !isCount(usage) ||
    files * WIDTH * 8 + tags + strings + usage > body.length ||
    header.crc !== crc32(body).toString(16).padStart(8, "0")
  ) {
    return undefined;
  }
  const numsEnd = files * WIDTH * 8;
  const sets = tagSetsOf(body.subarray(numsEnd, numsEnd + tags));
  if (sets === undefined) return undefined;
  const view = new IndexBody(
    numbersOf(body, files * WIDTH),
    body.subarray(numsEnd + tags, numsEnd + tags + strings),
    body.subarray(numsEnd + tags + strings, body.length - usage),
    body.subarray(body.length - usage),
  );
  const out: LoadedFile[] = new Array(files);
  for (let i = 0; i < files; i++) {
    const f = fileOf(view, sets, i * WIDTH, workspace);
    if (f === undefined) return undefined;
    out[i] = f;
  }
  return out;
}

/** The first `count` numbers of `body`, in place when aligned (the header pads it). */
function numbersOf(body: Buffer, count: number): Float64Array {
  if (body.byteOffset % 8 === 0) return new Float64Array(body.buffer, body.byteOffset, count);
  const nums = new Float64Array(count);
  new Uint8Array(nums.buffer).set(body.subarray(0, count * 8));
  return nums;
}

function tagSetsOf(bytes: Buffer): Tags[] | undefined {
  let sets: unknown;
  try {
    sets = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  if (!Array.isArray(sets) || !sets.every(isTags)) return undefined;
  // One object shared by every record with these tags: nothing may change it.
  return sets.map((s) => Object.freeze(s));
}

/**
 * File `at / WIDTH`, a view of the body (only its id read out); undefined
 * when its numbers are not what a writer of this code writes.
 */
function fileOf(
  body: IndexBody,
  sets: readonly Tags[],
  at: number,
  workspace: string,
): LoadedFile | undefined {
  const n = body.nums;
  const flags = n[at + SLOT.flags] as number;
  const rootEnd = n[at + SLOT.rootEnd] as number;
  if (
    !isInt(flags) ||
    (flags & ~ALL_FLAGS) !== 0 ||
    !Number.isFinite(n[at + SLOT.ino] as number) ||
    !Number.isFinite(n[at + SLOT.birth] as number) ||
    !Number.isFinite(n[at + SLOT.size] as number) ||
    !Number.isFinite(n[at + SLOT.mtime] as number) ||
    !isInt(n[at + SLOT.createdAtMs] as number) ||
    !isInt(rootEnd) ||
    rootEnd <= body.rootStart(at) ||
    rootEnd > body.rootBytes
  ) {
    return undefined;
  }
  const usageEnd = n[at + SLOT.usageEnd] as number;
  if (!isInt(usageEnd) || usageEnd < body.usageStart(at) || usageEnd > body.usageBytes) {
    return undefined;
  }
  for (let k = 0; k < 6; k++) {
    const end = n[at + SLOT.strings + k] as number;
    if (!isInt(end) || end < body.stringStart(at, k) || end > body.textBytes) return undefined;
  }
  const id = body.string(at, STRING.id);
  let record: LoadedRecord | undefined;
  if ((flags & FLAG.record) !== 0) {
    const tags = sets[n[at + SLOT.tags] as number];
    if (
      !Number.isFinite(n[at + SLOT.recordSize] as number) ||
      !Number.isFinite(n[at + SLOT.recordMtime] as number) ||
      !Number.isFinite(n[at + SLOT.updatedAtMs] as number) ||
      !isInt(n[at + SLOT.headSeq] as number) ||
      !isInt(n[at + SLOT.messageCount] as number) ||
      tags === undefined
    ) {
      return undefined;
    }
    record = new LoadedRecord(workspace, id, body, at, tags);
  }
  return new LoadedFile(id, body, at, record);
}

/** A record's usage sums as saved ("" when not known). */
function usageTextOf(r: SavedRecord): string {
  if (r instanceof LoadedRecord) return r.usageJson();
  return r.usage === undefined ? "" : usageToJson(r.usage);
}

function isInt(v: number): boolean {
  return Number.isSafeInteger(v);
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isTags(v: unknown): v is Tags {
  return isObject(v) && Object.values(v).every((t) => typeof t === "string");
}
