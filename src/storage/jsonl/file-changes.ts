import { type FSWatcher, watch } from "node:fs";
import { SESSION_EXT } from "./paths.js";

/**
 * The changes the kernel reports (fs.watch: inotify on Linux) to the files
 * of the directories listings read, so that a listing record remembered
 * for a file (RecordMemo) stays valid without a stat of the file until a
 * change to it is reported. A filtered listing needs the record of every
 * session of a workspace; with a stat each, a warm one cost 10,000 stats
 * (bench row 11/filter-warm).
 *
 * A stamp names what is known of a file: its directory's watch and the
 * count of changes reported for it (a number: the watch's id times 2^32
 * plus the count, so that a listing of 10,000 sessions builds no strings). It is taken BEFORE the file is read,
 * so a change that lands during the read makes the stamp stale. A watch
 * that fails, or a report without a file name, ends the directory's watch,
 * and its next one gets a new id: no earlier stamp matches again. Where a
 * directory cannot be watched (no inotify watches left), there is no stamp
 * and the caller stats as before.
 */
export class FileChanges {
  private readonly dirs = new Map<string, Watched>();
  private nextId = 1;

  /** At most this many directories watched at once (the one watched first goes first). */
  constructor(private readonly maxDirs = 256) {}

  /**
   * The stamp of session `sessionId`'s file in directory `dir` now;
   * undefined when the directory cannot be watched. (By directory and id,
   * not by path: this runs once per session of a listing, and the ids are
   * the root index's own strings, whose hashes V8 keeps: no string is built
   * or hashed per call.)
   */
  stamp(dir: string, sessionId: string): number | undefined {
    const watched = this.watched(dir);
    return watched === undefined ? undefined : stampIn(watched, sessionId);
  }

  /**
   * The stamps of the files of directory `dir` as of now, by session id;
   * undefined when the directory cannot be watched. The directory's watch
   * is looked up once: a listing stamps every session of a workspace, and
   * no report can come in between two stamps of one synchronous pass.
   */
  stamper(dir: string): ((sessionId: string) => number) | undefined {
    const watched = this.watched(dir);
    return watched === undefined ? undefined : (sessionId) => stampIn(watched, sessionId);
  }

  /** Stops every watch. */
  close(): void {
    for (const dir of [...this.dirs.keys()]) this.forget(dir);
  }

  /** The watch of `dir`, started when there is none; undefined when it cannot be watched. */
  private watched(dir: string): Watched | undefined {
    return this.dirs.get(dir) ?? this.watch(dir);
  }

  private watch(dir: string): Watched | undefined {
    if (this.dirs.size >= this.maxDirs) {
      const oldest = this.dirs.keys().next().value;
      if (oldest !== undefined) this.forget(oldest);
    }
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false });
    } catch {
      return undefined;
    }
    const watched: Watched = { id: this.nextId++, watcher, changes: new Map() };
    watcher.on("change", (_event, name) => {
      if (typeof name !== "string") return this.forget(dir, watched);
      // A session file's changes count under its id (other names under themselves: no id has a dot).
      const key = name.endsWith(SESSION_EXT) ? name.slice(0, -SESSION_EXT.length) : name;
      watched.changes.set(key, (watched.changes.get(key) ?? 0) + 1);
    });
    watcher.on("error", () => this.forget(dir, watched));
    this.dirs.set(dir, watched);
    return watched;
  }

  private forget(dir: string, which?: Watched): void {
    const watched = this.dirs.get(dir);
    if (watched === undefined || (which !== undefined && watched !== which)) return;
    this.dirs.delete(dir);
    watched.watcher.close();
  }
}

interface Watched {
  readonly id: number;
  readonly watcher: FSWatcher;
  /** Changes reported per session id (per file name for other files). */
  readonly changes: Map<string, number>;
}

/** The stamp of session `sessionId`'s file under `watched` (see FileChanges). */
function stampIn(watched: Watched, sessionId: string): number {
  return watched.id * 2 ** 32 + (watched.changes.get(sessionId) ?? 0);
}
