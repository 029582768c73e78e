import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { Tags } from "../../core/tags.js";
import type { SessionRecord } from "../engine.js";
import type { FileKey } from "./file-identity.js";
import type { IndexedRoot, LazyText } from "./indexed-root.js";

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
