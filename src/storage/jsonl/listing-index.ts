import { type Stats, statSync } from "node:fs";
import type { SessionRecord } from "../engine.js";
import type { FileChanges } from "./file-changes.js";
import { type FileKey, sameFile, sameState } from "./file-identity.js";
import type { FileRoot } from "./indexed-root.js";
import type { RecordMemo } from "./listing.js";
import {
  type LoadedFile,
  LoadedRecord,
  type SavedFile,
  type SavedRecord,
} from "./listing-index-entries.js";
import type { ListingIndexFile } from "./listing-index-file.js";

/**
 * The persisted listing index at work (the file: listing-index-file.ts).
 *
 * Why: a filtered listing needs every session's record (folded tags,
 * counters), and a listing of any kind every session's root. After a
 * restart both were only in the files: the first filtered listing of
 * 10,000 sessions read 1 GB (bench row 11/filter-cold: 3.2 s), the first
 * plain one read 10,000 first lines. With the index, the first listing
 * after a restart reads one file and stats each session file instead.
 *
 * - Seeding: the root index asks for the root of a file it has not read
 *   yet; if the persisted entry's identity matches a stat of the file now,
 *   the root is used, and if the entry's record state matches too, the
 *   record goes into the record memo (with the FileChanges stamp taken
 *   before that stat, as the memo's own lookups do). Anything that does
 *   not match is read from the file as before: an entry is never trusted
 *   without its stat.
 * - Saving: whenever listings learn something the index does not hold
 *   (first lines read, records made by full reads), a save is scheduled,
 *   at most one per workspace every `saveDelayMs`, and made at close. It
 *   writes what the root index and the memo know: each root with the
 *   identity of the file it was read from, and the record of the same
 *   file (same inode) when the memo has one. At close the engine first
 *   puts the records of the sessions it has open into the memo, as their
 *   files stand (JsonlEngine.rememberOpen), and saves. A save that fails
 *   is dropped: the next start reads the files.
 */

/** statSync's options, made once (one check per session of a workspace). */
const NO_THROW = { throwIfNoEntry: false } as const;

/** Seeds of one workspace by id: of `sessions/` [0] and of `sessions/subagents/` [1]. */
type Seeds = readonly [Map<string, LoadedFile>, Map<string, LoadedFile>];

/** The root of a file from elsewhere than its first line, if known and still true. */
export type SeedRoot = (
  dir: string,
  sub: boolean,
  id: string,
  file: string,
) => FileRoot | undefined;

/** What the root index knows of one file (for a save). */
export interface KnownRoot {
  readonly sub: boolean;
  readonly id: string;
  /** The directory of its file. */
  readonly dir: string;
  readonly root: FileRoot;
}

export interface ListingIndexOptions {
  readonly file: ListingIndexFile;
  readonly memo: RecordMemo;
  readonly changes: FileChanges | undefined;
  /** Every root the root index holds for `workspace`. */
  readonly known: (workspace: string) => Iterable<KnownRoot>;
  /** Save at all (false for an engine that only reads the data dir). */
  readonly writable: boolean;
  /** Negative control (debug.noListingIndexCheck): use entries without a stat. */
  readonly noCheck?: boolean;
  /** Delay between learning something and saving it. Default 3,000 ms. */
  readonly saveDelayMs?: number;
}

export class ListingIndex {
  private readonly seeds = new Map<string, Promise<Seeds>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Saves in flight per workspace (one at a time each). */
  private readonly saving = new Map<string, Promise<void>>();
  private closed = false;

  constructor(private readonly o: ListingIndexOptions) {}

  /**
   * The seeding function of `workspace` (see RootSeeder), undefined when
   * its index holds nothing. The index file is read once per engine, by
   * the first listing of the workspace.
   */
  async seeder(workspace: string): Promise<SeedRoot | undefined> {
    let seeds = this.seeds.get(workspace);
    if (seeds === undefined) {
      seeds = this.read(workspace);
      this.seeds.set(workspace, seeds);
    }
    const known = await seeds;
    if (known[0].size + known[1].size === 0) return undefined;
    // One clock read for the records seeded by this listing, taken before their stats.
    const at = this.o.memo.clock();
    return (dir, sub, id, file) => this.seed(known, dir, sub, id, file, at);
  }

  /**
   * The root of session `id` in `dir` from the seeds, when the persisted
   * entry is true of the file there now (one stat, synchronous: the root
   * index calls this in short slices, on the real file system only); its
   * record goes into the memo, as of `at`, when that is true of the file too.
   */
  private seed(
    seeds: Seeds,
    dir: string,
    sub: boolean,
    id: string,
    file: string,
    at: number,
  ): FileRoot | undefined {
    const known = seeds[sub ? 1 : 0].get(id);
    if (known === undefined) return undefined;
    // Taken before the stat: a change reported after it makes the memo stat again.
    const stamp = this.o.changes?.stamp(dir, id);
    let st: Stats | undefined;
    if (!this.o.noCheck) {
      try {
        st = statSync(file, NO_THROW);
      } catch {
        // Not readable as before (a directory in its place, no permission): the first-line read says what.
        return undefined;
      }
      if (st === undefined || !sameFile(known, st)) return undefined;
    }
    // The loaded file is the root (its own origin and payload): no object made per session.
    known.adopt(id);
    const r = known.record;
    if (r !== undefined && (st === undefined || sameState(r, st))) {
      this.o.memo.store(dir, id, r, r.seeded(known), stamp, at);
    }
    return known;
  }

  /** Listings of `workspace` learned what the index does not hold: save it soon. */
  learned(workspace: string): void {
    if (!this.o.writable || this.closed || this.timers.has(workspace)) return;
    const timer = setTimeout(() => {
      this.timers.delete(workspace);
      this.save(workspace);
    }, this.o.saveDelayMs ?? 3_000);
    timer.unref();
    this.timers.set(workspace, timer);
  }

  /** Saves what is scheduled now and waits for every save in flight (engine close). */
  async close(): Promise<void> {
    this.closed = true;
    for (const [workspace, timer] of this.timers) {
      clearTimeout(timer);
      this.save(workspace);
    }
    this.timers.clear();
    await Promise.all(this.saving.values());
  }

  private async read(workspace: string): Promise<Seeds> {
    if (this.o.writable) await this.o.file.removeStaleTemps(workspace);
    const seeds: Seeds = [new Map(), new Map()];
    for (const f of await this.o.file.load(workspace)) seeds[f.sub ? 1 : 0].set(f.id, f);
    return seeds;
  }

  private save(workspace: string): void {
    const before = this.saving.get(workspace) ?? Promise.resolve();
    const run = before
      .then(() => this.o.file.save(workspace, this.collect(workspace)))
      // A cache that could not be written: the next start reads the files.
      .catch(() => undefined)
      .finally(() => {
        if (this.saving.get(workspace) === run) this.saving.delete(workspace);
      });
    this.saving.set(workspace, run);
  }

  private collect(workspace: string): SavedFile[] {
    const out: SavedFile[] = [];
    for (const { sub, id, dir, root } of this.o.known(workspace)) {
      const key = root.origin;
      // A corrupt first line is read again: only a valid root is fixed for a file's life.
      const payload = root.health === "ok" ? root.payloadJson() : undefined;
      if (key === undefined || payload === undefined) continue;
      const memo = this.o.memo.peek(dir, id);
      // Only the record of the same file as the root (the load checks its state too).
      const record =
        memo !== undefined && memo.key.ino === key.ino && memo.key.birth === key.birth
          ? savedRecord(memo.key, memo.record)
          : undefined;
      out.push({
        sub,
        id,
        key,
        rootId: root.rootId,
        createdAtMs: root.createdAtMs,
        parent: root.parentSessionId,
        payload,
        record,
      });
    }
    return out;
  }
}

/**
 * The record to save: a loaded one as it is (none if the memo holds it for
 * another state: a loaded record is a view of the state it was saved for),
 * another one's fields with the state it is true of.
 */
function savedRecord(key: FileKey, r: SessionRecord): SavedRecord | undefined {
  if (r instanceof LoadedRecord)
    return r.size === key.size && r.mtime === key.mtime ? r : undefined;
  // The codec writes the fields it keeps; workspace, id and root are in the file entry.
  return { ...r, size: key.size, mtime: key.mtime, rootless: r.root === undefined };
}
