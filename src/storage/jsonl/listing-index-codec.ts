import { endianness } from "node:os";
import { crc32 } from "node:zlib";
import type { Tags } from "../../core/tags.js";
import { countsOfRaw, ROW, ROW_WIDTH, usageToJson } from "../usage-report.js";
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
 *   {"format":"sessiond.listing-index","version":4,"endian":"LE",
 *    "crc":"<8 hex>","bytes":<body bytes>,"files":<n>,"rows":<r>,"tags":<t>,
 *    "models":<m>,"strings":<s>,"usage":<u>}   \n
 *   n × 21 float64 (this machine's byte order, named in the header)
 *   r × 15 float64: the records' usage sums (UsageReport: per UTC hour and
 *   model), one row per group (storage/usage-report.ts ROW: hour, model
 *   index, first and last seq, then the counts), read in place by a report
 *   t bytes: the distinct tag sets, a JSON array of objects
 *   m bytes: the rows' model names, a JSON array of strings
 *   s bytes: the strings, UTF-8, one after another
 *   the root entries' JSON, one after another (kept as bytes until a page
 *   shows the session)
 *   u bytes: the usage sums that rows cannot hold exactly (caller-set
 *   costs, counts past 2^53), as JSON (usageToJson), one text after another
 *
 * The 21 numbers of a file (see SLOT): flags (sub, has a record, rootless,
 * corrupt, has a title, has usage sums, kept as JSON), the file key when
 * its first line was read (inode, birth ms, size, mtime ms), the root's
 * created ms, where its root JSON ends, where each of its six strings ends
 * (id, root id, parent id; leaf id, title, corrupt detail: empty without a
 * record), the record's size and mtime it was true of, head seq, message
 * count, updated ms and tag set, where its usage JSON ends and where its
 * usage rows end. Strings, roots, JSON and rows start where the previous
 * one ended, so only ends are kept. The CRC covers the body: a reader
 * trusts a writer of this version to have written it whole, and still
 * checks every value's shape (a file put there by hand or by a bug is
 * refused). Files of versions 2 (no usage) and 3 (usage as JSON only: a
 * report parsed 10,000 texts) are ignored and written again from the
 * session files, as any other version.
 *
 * A corrupt first line is not kept: it is read again, as only a valid root
 * is fixed for the life of a file.
 */

const FORMAT = "sessiond.listing-index";
const VERSION = 4;
const HOUR_MS = 3_600_000;
const ENDIAN = endianness();

/** The bytes of an index holding `files`. */
export function encodeIndex(files: readonly SavedFile[]): Buffer {
  const nums = new Float64Array(files.length * WIDTH);
  const tagSets: Tags[] = [];
  const tagSetAt = new Map<string, number>();
  const strings: string[] = [];
  const roots: Buffer[] = [];
  const usages: Buffer[] = [];
  const rows: number[] = [];
  const modelAt = new Map<string, number>();
  const modelOf = (name: string): number => {
    let i = modelAt.get(name);
    if (i === undefined) {
      i = modelAt.size;
      modelAt.set(name, i);
    }
    return i;
  };
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
    const usage = r === undefined ? UNKNOWN : addUsage(r, rows, modelOf);
    const json = usage !== UNKNOWN && usage !== ROWS;
    if (json) {
      const u = Buffer.from(usage);
      usages.push(u);
      usageEnd += u.length;
    }
    nums[at + SLOT.usageEnd] = usageEnd;
    nums[at + SLOT.rowsEnd] = rows.length / ROW_WIDTH;
    nums[at + SLOT.flags] =
      (f.sub ? FLAG.sub : 0) |
      (r === undefined
        ? 0
        : FLAG.record |
          (r.rootless ? FLAG.rootless : 0) |
          (r.health === "ok" ? 0 : FLAG.corrupt) |
          (r.title === undefined ? 0 : FLAG.titled) |
          (usage === UNKNOWN ? 0 : FLAG.usage) |
          (json ? FLAG.usageJson : 0));
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
  const models = Buffer.from(JSON.stringify([...modelAt.keys()]));
  const text = Buffer.from(strings.join(""));
  const rowNums = Float64Array.from(rows);
  const body = Buffer.concat([
    Buffer.from(nums.buffer, nums.byteOffset, nums.byteLength),
    Buffer.from(rowNums.buffer, rowNums.byteOffset, rowNums.byteLength),
    tags,
    models,
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
    rows: rowNums.length / ROW_WIDTH,
    tags: tags.length,
    models: models.length,
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
  const { files, rows, tags, models, strings, usage } = header;
  if (
    header.endian !== ENDIAN ||
    header.bytes !== body.length ||
    !isCount(files) ||
    !isCount(rows) ||
    !isCount(tags) ||
    !isCount(models) ||
    !isCount(strings) ||
    !isCount(usage) ||
    files * WIDTH * 8 + rows * ROW_WIDTH * 8 + tags + models + strings + usage > body.length ||
    header.crc !== crc32(body).toString(16).padStart(8, "0")
  ) {
    return undefined;
  }
  const rowsAt = files * WIDTH * 8;
  const tagsAt = rowsAt + rows * ROW_WIDTH * 8;
  const modelsAt = tagsAt + tags;
  const stringsAt = modelsAt + models;
  const sets = tagSetsOf(body.subarray(tagsAt, modelsAt));
  const names = modelsOf(body.subarray(modelsAt, stringsAt));
  if (sets === undefined || names === undefined) return undefined;
  const rowNums = numbersOf(body.subarray(rowsAt), rows * ROW_WIDTH);
  if (!rowsValid(rowNums, names.length)) return undefined;
  const view = new IndexBody(
    numbersOf(body, files * WIDTH),
    body.subarray(stringsAt, stringsAt + strings),
    body.subarray(stringsAt + strings, body.length - usage),
    body.subarray(body.length - usage),
    rowNums,
    names,
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
  const rowsEnd = n[at + SLOT.rowsEnd] as number;
  if (
    !isInt(rowsEnd) ||
    rowsEnd < body.rowsStart(at) ||
    rowsEnd * ROW_WIDTH > body.rows.length ||
    ((flags & FLAG.usageJson) !== 0 && (flags & FLAG.usage) === 0)
  ) {
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

/** addUsage's answers other than JSON text (which starts with "["). */
const ROWS = "rows";
const UNKNOWN = "unknown";

/**
 * Adds record `r`'s usage sums to `rows` (ROWS), or answers them as JSON
 * when rows cannot hold them exactly, or UNKNOWN.
 */
function addUsage(r: SavedRecord, rows: number[], modelOf: (name: string) => number): string {
  if (r instanceof LoadedRecord) {
    const json = r.usageJson();
    if (json !== "") return json;
    const copied = r.usageRows(-Infinity, Infinity, (_hour, model, nums, at) => {
      for (let k = 0; k < ROW_WIDTH; k++) rows.push(nums[at + k] as number);
      rows[rows.length - ROW_WIDTH + ROW.model] = modelOf(model);
    });
    return copied ? ROWS : UNKNOWN;
  }
  if (r.usage === undefined) return UNKNOWN;
  const mine = new Float64Array(r.usage.size * ROW_WIDTH);
  let at = 0;
  for (const g of r.usage.values()) {
    if (!countsOfRaw(g.raw, mine, at + ROW.counts)) return usageToJson(r.usage);
    mine[at + ROW.hour] = g.hour;
    mine[at + ROW.firstSeq] = g.firstSeq;
    mine[at + ROW.lastSeq] = g.lastSeq;
    at += ROW_WIDTH;
  }
  at = 0;
  for (const g of r.usage.values()) {
    mine[at + ROW.model] = modelOf(g.model);
    at += ROW_WIDTH;
  }
  for (const v of mine) rows.push(v);
  return ROWS;
}

/** Every usage row has the shape a writer of this code writes. */
function rowsValid(rows: Float64Array, models: number): boolean {
  for (let at = 0; at < rows.length; at += ROW_WIDTH) {
    const hour = rows[at + ROW.hour] as number;
    const model = rows[at + ROW.model] as number;
    const first = rows[at + ROW.firstSeq] as number;
    const last = rows[at + ROW.lastSeq] as number;
    if (
      !isInt(hour) ||
      hour % HOUR_MS !== 0 ||
      !isInt(model) ||
      model < 0 ||
      model >= models ||
      !isInt(first) ||
      first < 1 ||
      !isInt(last) ||
      last < first
    ) {
      return false;
    }
    for (let k = at + ROW.counts; k < at + ROW_WIDTH; k++) {
      const v = rows[k] as number;
      if (!isInt(v) || v < 0) return false;
    }
  }
  return true;
}

function modelsOf(bytes: Buffer): string[] | undefined {
  let names: unknown;
  try {
    names = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  if (!Array.isArray(names) || !names.every((m) => typeof m === "string")) return undefined;
  return names;
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
