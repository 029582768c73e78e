import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { Tags } from "../../core/tags.js";
import type { SessionRecord } from "../engine.js";
import {
  groupKey,
  type HourUsage,
  ROW,
  ROW_WIDTH,
  rawOfCounts,
  type SessionUsage,
  type UsageRowSource,
  usageFromJson,
} from "../usage-report.js";
import type { FileKey } from "./file-identity.js";
import { decodeRoot, type FileRoot, type LazyText } from "./indexed-root.js";
import { FLAG, type IndexBody, SLOT, STRING } from "./listing-index-body.js";

/**
 * The entries of a persisted listing index (listing-index-file.ts): what a
 * save writes of each session file, and what a load makes of it.
 */

/**
 * A listing record to save: SessionRecord's fields without workspace, id
 * and root (the file entry has them), with the file state it is true of.
 */
export type SavedRecord = Omit<SessionRecord, "workspace" | "sessionId" | "root"> & {
  /** Size and mtime of the file when the record was true of it (its inode: the file's). */
  readonly size: number;
  readonly mtime: number;
  /** The record has no root (its first record was unreadable in the full read). */
  readonly rootless: boolean;
};

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
 * One session file as loaded: a view of its place in the index's body
 * (listing-index-body.ts), its fields read from there when asked (only
 * the id is read at load: the seeds are looked up by it). It is also the
 * root the root index keeps for the file once a stat vouches for it (its
 * own origin, its JSON the payload, decoded when a page shows it), so
 * loading 10,000 sessions makes no object per session beyond this, its id
 * and its record.
 */
export class LoadedFile implements FileKey, LazyText, FileRoot {
  // Declared, set in the constructor: a class field initializer is one more call per file.
  /** The root entry, once decoded (null: it did not decode). */
  declare private decoded: Entry | null | undefined;
  /** The root's strings, kept once read: a listing reads every root's parent, a save every root id. */
  declare private rootIdText: string | undefined;
  declare private parentText: string | undefined;

  constructor(
    /** The session id (changed only by `adopt`). */
    public id: string,
    private readonly body: IndexBody,
    /** Where the file's numbers start in the body. */
    private readonly at: number,
    readonly record: LoadedRecord | undefined,
  ) {
    this.decoded = undefined;
    this.rootIdText = undefined;
    this.parentText = undefined;
  }

  /**
   * Takes `id`, equal to its own, as its id (and its record's): the string
   * the directory's listing gave, which the maps keyed by session id (the
   * memo's, the root index's) hold. A Map finds its own key object ~3 ×
   * faster than an equal string read from the index, and a filtered
   * listing looks up every session of the workspace.
   */
  adopt(id: string): void {
    this.id = id;
    this.record?.adopt(id);
  }

  get sub(): boolean {
    return this.body.flag(this.at, FLAG.sub);
  }
  get ino(): number {
    return this.body.num(this.at, SLOT.ino);
  }
  get birth(): number {
    return this.body.num(this.at, SLOT.birth);
  }
  get size(): number {
    return this.body.num(this.at, SLOT.size);
  }
  get mtime(): number {
    return this.body.num(this.at, SLOT.mtime);
  }
  get createdAtMs(): number {
    return this.body.num(this.at, SLOT.createdAtMs);
  }
  get rootId(): string {
    this.rootIdText ??= this.body.string(this.at, STRING.rootId);
    return this.rootIdText;
  }
  get parent(): string {
    this.parentText ??= this.body.string(this.at, STRING.parent);
    return this.parentText;
  }

  // As the root index keeps it (FileRoot): a loaded file is only ever a valid root.
  get sessionId(): string {
    return this.id;
  }
  get parentSessionId(): string {
    return this.parent;
  }
  get health(): "ok" {
    return "ok";
  }
  get healthDetail(): string {
    return "";
  }
  /** The file's key when its first line was read: this file's own. */
  get origin(): FileKey {
    return this;
  }
  /** Decoded when a page shows the session, as for roots read from first lines. */
  get root(): Entry | undefined {
    if (this.decoded === undefined) this.decoded = decodeRoot(this.id, this.text()) ?? null;
    return this.decoded ?? undefined;
  }
  payloadJson(): string {
    return this.text();
  }

  text(): string {
    return this.body.rootJson(this.at);
  }
}

/**
 * A listing record as loaded, a view like LoadedFile (the strings a filter
 * reads again and again, title and leaf id, kept once read): what a save
 * writes back as it is, the key of the file state it is true of, and, once
 * the engine gives it its root (`seeded`), the SessionRecord a listing uses.
 */
export class LoadedRecord implements SessionRecord, SavedRecord, FileKey, UsageRowSource {
  // Declared, set in the constructor: a class field initializer is one more call per record.
  declare private indexed: FileRoot | undefined;
  declare private titleText: string | undefined;
  declare private leaf: string | undefined;
  declare private usageMemo: SessionUsage | null | undefined;

  constructor(
    readonly workspace: string,
    /** The session id (changed only by `adopt`). */
    public sessionId: string,
    private readonly body: IndexBody,
    private readonly at: number,
    readonly tags: Tags,
  ) {
    this.indexed = undefined;
    this.titleText = undefined;
    this.leaf = undefined;
    this.usageMemo = undefined;
  }

  /** The usage sums' JSON as saved ("" when not known or kept as rows): a save writes it back as it is. */
  usageJson(): string {
    return this.body.flag(this.at, FLAG.usageJson) ? this.body.usageJson(this.at) : "";
  }

  /**
   * The usage rows of the hours [fromHour, toHour), read in place
   * (UsageRowSource: what a report reads); false when the sums are not
   * kept as rows (`usage` then says).
   */
  usageRows(
    fromHour: number,
    toHour: number,
    each: (hour: number, model: string, nums: Float64Array, at: number) => void,
  ): boolean {
    const flags = this.body.num(this.at, SLOT.flags);
    if ((flags & FLAG.usage) === 0 || (flags & FLAG.usageJson) !== 0) return false;
    const rows = this.body.rows;
    const models = this.body.models;
    const end = this.body.num(this.at, SLOT.rowsEnd) * ROW_WIDTH;
    for (let at = this.body.rowsStart(this.at) * ROW_WIDTH; at < end; at += ROW_WIDTH) {
      const hour = rows[at + ROW.hour] as number;
      if (hour >= fromHour && hour < toHour) {
        each(hour, models[rows[at + ROW.model] as number] as string, rows, at);
      }
    }
    return true;
  }

  /** The usage sums, read from the index when first asked (undefined: not known or malformed). */
  get usage(): SessionUsage | undefined {
    if (this.usageMemo === undefined) {
      if (!this.body.flag(this.at, FLAG.usage)) {
        this.usageMemo = null;
      } else if (this.body.flag(this.at, FLAG.usageJson)) {
        try {
          this.usageMemo = usageFromJson(this.body.usageJson(this.at));
        } catch {
          this.usageMemo = null;
        }
      } else {
        const out = new Map<string, HourUsage>();
        this.usageRows(-Infinity, Infinity, (hour, model, nums, at) => {
          out.set(groupKey(hour, model), {
            hour,
            model,
            raw: rawOfCounts(nums, at + ROW.counts),
            firstSeq: nums[at + ROW.firstSeq] as number,
            lastSeq: nums[at + ROW.lastSeq] as number,
          });
        });
        this.usageMemo = out;
      }
    }
    return this.usageMemo ?? undefined;
  }

  /** See LoadedFile.adopt. */
  adopt(id: string): void {
    this.sessionId = id;
  }

  get ino(): number {
    return this.body.num(this.at, SLOT.ino);
  }
  get birth(): number {
    return this.body.num(this.at, SLOT.birth);
  }
  get size(): number {
    return this.body.num(this.at, SLOT.recordSize);
  }
  get mtime(): number {
    return this.body.num(this.at, SLOT.recordMtime);
  }
  get title(): string | undefined {
    if (this.titleText === undefined && this.body.flag(this.at, FLAG.titled)) {
      this.titleText = this.body.string(this.at, STRING.title);
    }
    return this.titleText;
  }
  get headSeq(): number {
    return this.body.num(this.at, SLOT.headSeq);
  }
  get leafId(): string {
    this.leaf ??= this.body.string(this.at, STRING.leafId);
    return this.leaf;
  }
  get messageCount(): number {
    return this.body.num(this.at, SLOT.messageCount);
  }
  get updatedAtMs(): number {
    return this.body.num(this.at, SLOT.updatedAtMs);
  }
  get health(): "ok" | "corrupt" {
    return this.body.flag(this.at, FLAG.corrupt) ? "corrupt" : "ok";
  }
  get healthDetail(): string {
    return this.body.string(this.at, STRING.detail);
  }
  get rootless(): boolean {
    return this.body.flag(this.at, FLAG.rootless);
  }

  /** Decoded when a page shows the session, as for roots read from first lines. */
  get root(): Entry | undefined {
    return this.rootless ? undefined : this.indexed?.root;
  }

  /** Gives the record the root it was loaded with. */
  seeded(root: FileRoot): this {
    this.indexed = root;
    return this;
  }
}
