/**
 * The body of a persisted listing index as loaded (format:
 * listing-index-codec.ts): the files' numbers in one Float64Array, their
 * strings in one UTF-8 buffer, their roots' JSON in another. The loaded
 * files and records (listing-index-entries.ts) read their fields from it
 * when asked rather than copying them out at load: the first listing after
 * a start loads 10,000 files, and every number or string copied is one
 * more object for the garbage collector of a young process (each double a
 * heap number: ~1.4 MB of them for 10,000 files when they were copied).
 * The records' usage sums are rows of numbers in a second Float64Array
 * (storage/usage-report.ts ROW), their models by index in a table of
 * names; a record whose sums rows cannot hold (caller-set costs) keeps
 * them as JSON in a section of its own.
 */

/** Slots of a file's numbers; a file's numbers start at a multiple of WIDTH. */
export const SLOT = {
  flags: 0,
  ino: 1,
  birth: 2,
  size: 3,
  mtime: 4,
  createdAtMs: 5,
  rootEnd: 6,
  /** Ends of the file's six strings (STRING), in that order. */
  strings: 7,
  recordSize: 13,
  recordMtime: 14,
  headSeq: 15,
  messageCount: 16,
  updatedAtMs: 17,
  tags: 18,
  /** Where the record's usage sums' JSON ends (usage-report.ts usageToJson), when kept as JSON. */
  usageEnd: 19,
  /** Where the record's usage rows end (in rows of ROW_WIDTH), when kept as rows. */
  rowsEnd: 20,
} as const;
export const WIDTH = 21;

/** A file's strings, in the order they are written; each starts where the one before ends. */
export const STRING = { id: 0, rootId: 1, parent: 2, leafId: 3, title: 4, detail: 5 } as const;

/**
 * Flags (slot `flags`). `usage`: the record's usage sums are known, as
 * rows, or as JSON when `usageJson` is set too.
 */
export const FLAG = {
  sub: 1,
  record: 2,
  rootless: 4,
  corrupt: 8,
  titled: 16,
  usage: 32,
  usageJson: 64,
} as const;
export const ALL_FLAGS = 127;

export class IndexBody {
  constructor(
    readonly nums: Float64Array,
    private readonly text: Buffer,
    private readonly roots: Buffer,
    private readonly usage: Buffer = Buffer.alloc(0),
    /** The usage rows (ROW_WIDTH numbers each) of every record, one record's after another. */
    readonly rows: Float64Array = new Float64Array(0),
    /** Model names of the rows, by index. */
    readonly models: readonly string[] = [],
  ) {}

  /** Number `slot` of the file whose numbers start at `at`. */
  num(at: number, slot: number): number {
    return this.nums[at + slot] as number;
  }

  flag(at: number, flag: number): boolean {
    return ((this.nums[at + SLOT.flags] as number) & flag) !== 0;
  }

  /** Where string `k` of the file at `at` starts: where the string before it (maybe the previous file's last) ends. */
  stringStart(at: number, k: number): number {
    if (k > 0) return this.nums[at + SLOT.strings + k - 1] as number;
    return at === 0 ? 0 : (this.nums[at - WIDTH + SLOT.strings + 5] as number);
  }

  /** String `k` (STRING) of the file at `at`. */
  string(at: number, k: number): string {
    const start = this.stringStart(at, k);
    const end = this.nums[at + SLOT.strings + k] as number;
    return start === end ? "" : this.text.toString("utf8", start, end);
  }

  rootStart(at: number): number {
    return at === 0 ? 0 : (this.nums[at - WIDTH + SLOT.rootEnd] as number);
  }

  /** The root entry's JSON of the file at `at`. */
  rootJson(at: number): string {
    return this.roots.toString("utf8", this.rootStart(at), this.nums[at + SLOT.rootEnd]);
  }

  usageStart(at: number): number {
    return at === 0 ? 0 : (this.nums[at - WIDTH + SLOT.usageEnd] as number);
  }

  /** The record's usage sums' JSON of the file at `at` ("" when not kept). */
  usageJson(at: number): string {
    return this.usage.toString("utf8", this.usageStart(at), this.nums[at + SLOT.usageEnd]);
  }

  /** Where the usage rows of the file at `at` start, in rows. */
  rowsStart(at: number): number {
    return at === 0 ? 0 : (this.nums[at - WIDTH + SLOT.rowsEnd] as number);
  }

  get usageBytes(): number {
    return this.usage.length;
  }

  get textBytes(): number {
    return this.text.length;
  }

  get rootBytes(): number {
    return this.roots.length;
  }
}
