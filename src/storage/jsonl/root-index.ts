import type { Stats } from "node:fs";
import * as path from "node:path";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { quote } from "../../core/ids.js";
import { type FileKey, keyOf } from "./file-identity.js";
import { FIRST_BLOCK, type FirstLine, readFirstLine, readFirstLineSync } from "./first-line.js";
import { ioError } from "./fs-errors.js";
import { errnoCode, type FsOps, readBuffer } from "./fs-ops.js";
import { type FileRoot, IndexedRoot, rootOfFirstLine } from "./indexed-root.js";
import type { KnownRoot, SeedRoot } from "./listing-index.js";
import { SESSION_EXT, sessionIdOf, sessionsDir } from "./paths.js";

/**
 * The root index: per workspace, which session files exist and the root of
 * each, so that listing a workspace never parses whole files.
 *
 * - The ids of a directory (`sessions/`, `sessions/subagents/`) come from a
 *   readdir, cached and revalidated with ONE stat of the directory per call:
 *   a create or delete by any process changes the directory's mtime, and
 *   only then is it read again. This process's own creates and deletes
 *   update the index directly (and force the next re-read, since the mtime
 *   moved anyway and another process may have changed the directory too).
 * - Racy reads: a directory whose mtime is too close to the moment it was
 *   stat'ed (within the timestamp granularity) may change again without
 *   its mtime moving, so such a read is not trusted and the directory is
 *   read again next time (git's "racily clean" rule).
 * - The root of each file comes from its first line only (indexed-root.ts),
 *   read on first use: on the real file system with synchronous calls in
 *   slices of a few ms (the cheapest way for files in the page cache),
 *   switching to `concurrency` parallel asynchronous reads when the reads
 *   turn out slow (files on disk); with an injected FsOps always the
 *   latter. Concurrent listings share one read of each file. A file is
 *   append-only, so its first line never changes while the file exists;
 *   roots are dropped when their id leaves the directory. A file deleted
 *   and re-created under the same name by another process between two
 *   reads of the directory keeps its old root here until this process
 *   reads the session (`seen`), which replaces a root whose entry id
 *   differs.
 *
 * - Seeds: before it reads first lines, the index asks `seeder` (the
 *   persisted listing index, listing-index.ts) for roots it can vouch for
 *   with a stat, and tells it when it read first lines it could not.
 *
 * Lock directories and wait markers live in `sessions/` too, so appends
 * move its mtime as well: under write load a listing re-reads the
 * directory (about 6 ms per 10,000 files), but still reads no session file.
 */

interface DirState {
  readonly dir: string;
  /**
   * The session files of the directory as last read (plus own creates), by
   * id: the root, or null while its first line is not read yet.
   */
  files: Map<string, FileRoot | null>;
  /** "ino:mtime" of the directory when `files` was read; undefined: read again next time. */
  sig: string | undefined;
  /** Bumped by own creates/deletes: a read that started before one is not trusted. */
  gen: number;
  /**
   * `files` when a fill last went through it: every root of it was looked
   * for (those still null: files gone since the read of the directory),
   * so the next fill need not look at 10,000 entries again.
   */
  filled?: Map<string, FileRoot | null>;
}

class WorkspaceIndex {
  readonly dirs: readonly [DirState, DirState];
  /** Directory revalidations of this workspace run one after another... */
  refreshTurn: Promise<unknown> = Promise.resolve();
  /** ...and so do first-line reads, so that no file is read twice. */
  fillTurn: Promise<unknown> = Promise.resolve();

  constructor(top: string, sub: string) {
    const dir = (d: string): DirState => ({ dir: d, files: new Map(), sig: undefined, gen: 0 });
    this.dirs = [dir(top), dir(sub)];
  }

  dirOf(file: string): DirState | undefined {
    const d = path.dirname(file);
    return this.dirs.find((s) => s.dir === d);
  }
}

/** A signature that never matches: the directory does not exist. */
const MISSING = "missing";

/** How close to "now" a directory mtime makes its read untrustworthy. */
function racyMarginMs(mtimeMs: number): number {
  // Whole seconds: a file system with coarse timestamps (ext3, HFS+, FAT: 2 s).
  return mtimeMs % 1000 === 0 ? 2000 : 100;
}

/** Longest stretch of synchronous first-line reads before the event loop gets a turn. */
const SLICE_MS = 10;
/** Seeds between two clock reads (seedFrom); at a few µs each, far below a slice. */
const SEED_BATCH = 32;
/**
 * Synchronous reads slower than this on average: the files are not in the
 * page cache (a cached one takes a few µs; one from an SSD 100 µs or more),
 * so the rest is read with many requests in flight instead.
 */
const SLOW_READ_MS = 0.25;

export interface RootIndexOptions {
  /** First lines read at the same time on the asynchronous path. Default 64. */
  concurrency?: number;
  /**
   * Read first lines with synchronous calls in short slices (only valid when
   * `ops` is the real file system). Falls back to `concurrency` parallel
   * asynchronous reads as soon as reads turn out slow (files not cached).
   */
  syncReads?: boolean;
  /**
   * Called with the names of each directory read (before the listing that
   * read it returns): the engine cleans up temp files of crashed creates.
   */
  onDirRead?: (dir: string, names: readonly string[]) => Promise<void>;
  /** Called for each id that left a directory since its last read (the engine forgets its record). */
  onGone?: (dir: string, id: string) => void;
  /**
   * Roots known from elsewhere (the persisted listing index), asked before
   * first lines are read, and told when first lines were read. Only with
   * `syncReads` (its checks are synchronous stats).
   */
  seeder?: {
    seeder(workspace: string): Promise<SeedRoot | undefined>;
    learned(workspace: string): void;
  };
  /** Longest stretch of synchronous reads, ms (tests). Default 10. */
  sliceMs?: number;
  /** Average time per synchronous read above which the rest is read in parallel, ms. Default 0.25. */
  slowReadMs?: number;
}

export class RootIndex {
  private readonly spaces = new Map<string, WorkspaceIndex>();
  private readonly concurrency: number;
  private readonly syncReads: boolean;
  private readonly sliceMs: number;
  private readonly slowReadMs: number;
  private readonly onDirRead: RootIndexOptions["onDirRead"];
  private readonly onGone: RootIndexOptions["onGone"];
  private readonly seeder: RootIndexOptions["seeder"];

  constructor(
    private readonly ops: FsOps,
    private readonly dataDir: string,
    o: RootIndexOptions = {},
  ) {
    this.concurrency = Math.max(1, o.concurrency ?? 64);
    this.syncReads = o.syncReads === true;
    this.sliceMs = o.sliceMs ?? SLICE_MS;
    this.slowReadMs = o.slowReadMs ?? SLOW_READ_MS;
    this.onDirRead = o.onDirRead;
    this.onGone = o.onGone;
    this.seeder = this.syncReads ? o.seeder : undefined;
  }

  /** Ids of every session file of the workspace (an id in both directories once). */
  async ids(workspace: string): Promise<string[]> {
    const [top, sub] = (await this.refreshed(workspace)).dirs;
    const out = [...top.files.keys()];
    for (const id of sub.files.keys()) if (!top.files.has(id)) out.push(id);
    return out;
  }

  /**
   * How many session files the workspace has: top-level, and subagent (an
   * id in both directories counts once, as top-level, as in `ids`). Reads
   * no file, only the directories when they changed.
   */
  async counts(workspace: string): Promise<{ top: number; sub: number }> {
    const [top, sub] = (await this.refreshed(workspace)).dirs;
    let subOnly = 0;
    for (const id of sub.files.keys()) if (!top.files.has(id)) subOnly++;
    return { top: top.files.size, sub: subOnly };
  }

  /**
   * The root of every session of the workspace, reading the first lines not
   * yet known. An id in both directories counts once, top-level first (as
   * the engine locates it).
   */
  async roots(workspace: string): Promise<FileRoot[]> {
    const ws = await this.refreshed(workspace);
    const fill = ws.fillTurn.then(() => this.fill(workspace, ws));
    ws.fillTurn = fill.catch(() => undefined);
    await fill;
    const [top, sub] = ws.dirs;
    const out: FileRoot[] = [];
    // Null: the file was gone when its first line was to be read (the next read of the directory drops it).
    for (const root of top.files.values()) if (root !== null) out.push(root);
    for (const [id, root] of sub.files) if (root !== null && !top.files.has(id)) out.push(root);
    return out;
  }

  /** This process created `file` (`origin`: its key, file-identity.ts) with `root` first. */
  added(workspace: string, sessionId: string, file: string, root: Entry, origin?: FileKey): void {
    const d = this.spaces.get(workspace)?.dirOf(file);
    if (d === undefined) return;
    touched(d);
    d.files.set(sessionId, IndexedRoot.ofEntry(sessionId, root, origin));
  }

  /** Whether the workspace's directories were read (its roots are what a save of its index writes). */
  has(workspace: string): boolean {
    return this.spaces.has(workspace);
  }

  /** Every root known of the workspace's files now (what the persisted listing index saves). */
  *known(workspace: string): Generator<KnownRoot> {
    const ws = this.spaces.get(workspace);
    if (ws === undefined) return;
    for (const d of ws.dirs) {
      const sub = d === ws.dirs[1];
      for (const [id, root] of d.files) {
        if (root !== null) yield { sub, id, dir: d.dir, root };
      }
    }
  }

  /** This process deleted `file`. */
  removed(workspace: string, sessionId: string, file: string): void {
    const d = this.spaces.get(workspace)?.dirOf(file);
    if (d === undefined) return;
    touched(d);
    d.files.delete(sessionId);
  }

  /**
   * This process read the session in `file` whole and found `root` first:
   * replaces an indexed root of another entry (the file was re-created).
   */
  seen(workspace: string, sessionId: string, file: string, root: Entry): void {
    const d = this.spaces.get(workspace)?.dirOf(file);
    const known = d?.files.get(sessionId);
    if (d === undefined || known === undefined) return;
    if (known !== null && known.health === "ok" && known.rootId === root.id) return;
    d.files.set(sessionId, IndexedRoot.ofEntry(sessionId, root));
  }

  /** The workspace's index with both directories revalidated (re-read if they changed). */
  private async refreshed(workspace: string): Promise<WorkspaceIndex> {
    let ws = this.spaces.get(workspace);
    if (ws === undefined) {
      const top = sessionsDir(this.dataDir, workspace, false);
      const sub = sessionsDir(this.dataDir, workspace, true);
      ws = new WorkspaceIndex(top, sub);
      this.spaces.set(workspace, ws);
    }
    const index = ws;
    const run = index.refreshTurn.then(() =>
      Promise.all(index.dirs.map((d) => this.refreshDir(d))),
    );
    index.refreshTurn = run.catch(() => undefined);
    const missing = await run;
    // Nothing is remembered of a workspace that does not exist (a client may ask for any name).
    if (missing.every(Boolean) && this.spaces.get(workspace) === index) {
      this.spaces.delete(workspace);
    }
    return index;
  }

  /** A session file that is a directory is listed as corrupt; any other error fails the listing. */
  private failed(err: unknown, sessionId: string): "EISDIR" {
    if (errnoCode(err) === "EISDIR") return "EISDIR";
    throw ioError(err, `listing session ${quote(sessionId)}`, this.dataDir);
  }

  /** Revalidates one directory: one stat, and a readdir if it changed; true when it is missing. */
  private async refreshDir(d: DirState): Promise<boolean> {
    const gen = d.gen;
    const started = Date.now();
    let st: Stats | undefined;
    try {
      st = await this.ops.stat(d.dir);
    } catch (err) {
      if (!isMissing(err)) throw ioError(err, "listing sessions", this.dataDir);
    }
    const sig = st === undefined ? MISSING : `${st.ino}:${st.mtimeMs}`;
    if (sig === d.sig && gen === d.gen) return st === undefined;
    let names: string[] = [];
    if (st !== undefined) {
      try {
        names = await this.ops.readdir(d.dir);
      } catch (err) {
        if (!isMissing(err)) throw ioError(err, "listing sessions", this.dataDir);
      }
    }
    if (st !== undefined) await this.onDirRead?.(d.dir, names);
    // Known roots carry over; ids that left the directory drop out with theirs.
    const old = d.files;
    const files = new Map<string, FileRoot | null>();
    for (const name of names) {
      const id = sessionIdOf(name);
      if (id !== undefined) files.set(id, old.get(id) ?? null);
    }
    d.files = files;
    if (this.onGone !== undefined) {
      for (const id of old.keys()) if (!files.has(id)) this.onGone(d.dir, id);
    }
    // An own create or delete came in between: read again next time.
    const racy = st !== undefined && st.mtimeMs >= started - racyMarginMs(st.mtimeMs);
    d.sig = racy || gen !== d.gen ? undefined : sig;
    return st === undefined;
  }

  /** Reads the first line of every listed file whose root is not known yet. */
  private async fill(workspace: string, ws: WorkspaceIndex): Promise<void> {
    const [top, sub] = ws.dirs;
    if (top.filled === top.files && sub.filled === sub.files) return;
    const maps = [top.files, sub.files] as const;
    await this.fillRoots(workspace, ws);
    // Only the maps looked through: a directory read meanwhile has new entries to look at.
    top.filled = maps[0];
    sub.filled = maps[1];
  }

  private async fillRoots(workspace: string, ws: WorkspaceIndex): Promise<void> {
    // Two parallel arrays rather than 10,000 small objects.
    const ids: string[] = [];
    const dirs: DirState[] = [];
    for (const d of ws.dirs) {
      for (const [id, root] of d.files) {
        if (root !== null) continue;
        ids.push(id);
        dirs.push(d);
      }
    }
    if (ids.length === 0) return;
    const seed = await this.seeder?.seeder(workspace);
    if (seed !== undefined) {
      await this.seedFrom(seed, ws, ids, dirs);
      // What the seeds vouched for is not read: only the rest goes on.
      let kept = 0;
      for (let i = 0; i < ids.length; i++) {
        const d = dirs[i] as DirState;
        const id = ids[i] as string;
        if (d.files.get(id) !== null) continue;
        ids[kept] = id;
        dirs[kept++] = d;
      }
      ids.length = kept;
      dirs.length = kept;
      if (kept === 0) return;
    }
    this.seeder?.learned(workspace);
    let next = 0;
    if (this.syncReads) next = await this.fillSync(workspace, ids, dirs);
    if (next >= ids.length) return;
    const worker = async () => {
      const scratch = readBuffer(FIRST_BLOCK);
      while (next < ids.length) {
        const i = next++;
        const d = dirs[i] as DirState;
        const id = ids[i] as string;
        let line: FirstLine | undefined | "EISDIR";
        try {
          line = await readFirstLine(this.ops, fileOf(d, id), scratch);
        } catch (err) {
          line = this.failed(err, id);
        }
        install(workspace, d, id, line);
      }
    };
    const workers = Math.min(this.concurrency, ids.length - next);
    await Promise.all(Array.from({ length: workers }, worker));
  }

  /**
   * Roots from `seed` (one synchronous stat each), in slices of `sliceMs`.
   * The clock is read once per SEED_BATCH seeds: a seed costs a few µs, a
   * clock read a tenth of that, and a cold start seeds every session.
   */
  private async seedFrom(
    seed: SeedRoot,
    ws: WorkspaceIndex,
    ids: readonly string[],
    dirs: readonly DirState[],
  ): Promise<void> {
    let next = 0;
    while (next < ids.length) {
      const start = performance.now();
      do {
        const end = Math.min(ids.length, next + SEED_BATCH);
        for (; next < end; next++) {
          const d = dirs[next] as DirState;
          const id = ids[next] as string;
          // Still unknown (not created, removed or read meanwhile).
          if (d.files.get(id) !== null) continue;
          const root = seed(d.dir, d === ws.dirs[1], id, fileOf(d, id));
          if (root !== undefined) d.files.set(id, root);
        }
      } while (next < ids.length && performance.now() - start < this.sliceMs);
      if (next < ids.length) await yieldToEventLoop();
    }
  }

  /**
   * Synchronous reads in slices of `sliceMs`, yielding to the event loop in
   * between; stops early (returning how far it got) after two slow slices
   * in a row (one may be a blip: a first call, the process descheduled).
   */
  private async fillSync(
    workspace: string,
    ids: readonly string[],
    dirs: readonly DirState[],
  ): Promise<number> {
    const scratch = readBuffer(FIRST_BLOCK);
    let next = 0;
    let slow = 0;
    while (next < ids.length) {
      const start = performance.now();
      const first = next;
      let elapsed = 0;
      do {
        const d = dirs[next] as DirState;
        const id = ids[next++] as string;
        let line: FirstLine | undefined | "EISDIR";
        try {
          line = readFirstLineSync(fileOf(d, id), scratch);
        } catch (err) {
          line = this.failed(err, id);
        }
        install(workspace, d, id, line);
        elapsed = performance.now() - start;
      } while (next < ids.length && elapsed < this.sliceMs);
      slow = elapsed / (next - first) > this.slowReadMs ? slow + 1 : 0;
      if (slow >= 2) break;
      if (next < ids.length) await yieldToEventLoop();
    }
    return next;
  }
}

/**
 * Records the root of a first line just read, unless the file left the
 * directory or got its root from elsewhere (an own create) meanwhile. A
 * file gone since the directory was read (undefined) stays without a root
 * and out of listings; the next read of the directory drops its id.
 */
function install(
  workspace: string,
  d: DirState,
  id: string,
  line: FirstLine | undefined | "EISDIR",
): void {
  if (line === undefined || d.files.get(id) !== null) return;
  const root =
    line === "EISDIR"
      ? IndexedRoot.corrupt(id, `session ${quote(id)} is not a regular file`)
      : rootOfFirstLine(workspace, id, line.buf, line.length, line.newline, keyOf(line.stats));
  d.files.set(id, root);
}

/** The file of a session id: `dir` is resolved and the id allowlisted (paths.ts), no join needed. */
function fileOf(d: DirState, id: string): string {
  return d.dir + path.sep + id + SESSION_EXT;
}

/** An own change: the directory must be read again, reads in flight are not trusted. */
function touched(d: DirState): void {
  d.sig = undefined;
  d.gen++;
}

function isMissing(err: unknown): boolean {
  const code = errnoCode(err);
  return code === "ENOENT" || code === "ENOTDIR";
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
