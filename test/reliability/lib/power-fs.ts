/**
 * A simulated disk with a page cache, as an FsOps for the JSONL engine
 * (T2 power loss, T3 I/O errors).
 *
 * Every call really happens on a directory of the real file system (that
 * is the page cache: what the process reads back), and the model remembers
 * what a power cut would leave on the disk:
 *
 * - per file (identified at creation, so a reused inode number is a new
 *   file): its bytes as of its last successful fsync / fdatasync;
 * - per directory (the root, and every directory made through `mkdir`):
 *   its entries as of its last fsync (a created, linked or unlinked name is
 *   durable only once its directory is fsynced; a file fsync does not make
 *   its name durable). A directory's own name is an entry of its parent.
 *
 * No real fsync is ever made (the model decides what is durable), so the
 * real directory can be a tmpfs. `cutAt = k` cuts the power at the k-th
 * call: the durable state is captured (`image`), that call and every later
 * one fail with EIO, and a sync that was in flight does not count.
 *
 * `poison(fd)` models a failed fsync on Linux ("fsyncgate"): the dirty
 * pages of the file are marked clean without having reached the disk, so a
 * later successful fsync does not write them (the disk keeps its old bytes,
 * zeros past its old end) unless they are written again.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import type { FsOps } from "../../../src/storage/jsonl/fs-ops.js";
import type { Rng } from "./random.js";

export type DirEntry = { readonly kind: "file"; readonly id: number } | { readonly kind: "dir" };

interface FileModel {
  readonly id: number;
  /** Content on the disk: as of the last successful sync. */
  synced: Buffer;
  /** Current names (absolute paths). */
  readonly paths: Set<string>;
  /** Content when the last name went (the file may still be durable under it). */
  last: Buffer | undefined;
  /** Byte ranges that are clean in the cache but not on the disk (after a failed sync). */
  poisoned: [number, number][];
}

/** What a power cut at one moment leaves: durable entries and, per file, disk and cache content. */
export interface CrashImage {
  /** Durable entries by directory, relative to the root ("" is the root). */
  readonly dirs: Map<string, Map<string, DirEntry>>;
  readonly files: Map<number, { readonly synced: Buffer; readonly current: Buffer | undefined }>;
  /** The I/O step at which it was taken. */
  readonly step: number;
}

export type Noise = "none" | "zeros" | "garbage" | "prefix" | "truncated";

export interface MaterializeStats {
  files: number;
  /** Files that got bytes beyond their synced content, by kind of noise. */
  noise: Record<Noise, number>;
}

export function powerError(): Error {
  return Object.assign(new Error("EIO: power cut (simulated)"), { code: "EIO" });
}

export class PowerFs {
  readonly ops: FsOps;
  /** Calls made so far (each counts as one I/O step). */
  steps = 0;
  /** The step at which the power is cut (Infinity: never). */
  cutAt = Number.POSITIVE_INFINITY;
  /** The durable state captured at the cut; set once the power is off. */
  image: CrashImage | undefined;
  private nextId = 1;
  private readonly files = new Map<number, FileModel>();
  private readonly idByIno = new Map<number, number>();
  private readonly fds = new Map<number, { path: string; id: number | undefined }>();
  private readonly dirs = new Map<string, Map<string, DirEntry>>();

  /** `root` must exist; it is durable and empty as far as the model knows. */
  constructor(readonly root: string) {
    this.root = path.resolve(root);
    this.dirs.set(this.root, new Map());
    this.ops = this.makeOps();
  }

  /** Cuts the power now (if not already off) and returns the durable state. */
  cutNow(): CrashImage {
    if (this.image === undefined) this.image = this.capture();
    return this.image;
  }

  /** Marks `file`'s current content as synced and its name (and parents) durable: test setup only. */
  syncPath(file: string): void {
    const abs = path.resolve(file);
    const id = this.idByIno.get(fs.statSync(abs).ino);
    if (id !== undefined) this.fileOf(id).synced = fs.readFileSync(abs);
    for (let d = path.dirname(abs); this.dirs.has(d); d = path.dirname(d)) {
      this.snapshotDir(d);
      if (d === this.root) break;
    }
  }

  /** A failed sync of `fd`: its dirty bytes will never reach the disk unless written again. */
  poison(fd: number): void {
    const id = this.fds.get(fd)?.id;
    if (id === undefined) return;
    const f = this.fileOf(id);
    const current = readFd(fd);
    const from = commonPrefix(f.synced, current);
    if (from < current.length) f.poisoned.push([from, current.length]);
  }

  private fileOf(id: number): FileModel {
    return this.files.get(id) as FileModel;
  }

  /** Called at every call (tracing in tests). */
  onStep: ((step: number, op: string, arg: unknown) => void) | undefined;

  private step(op: string, arg: unknown): void {
    this.onStep?.(this.steps + 1, op, arg);
    if (this.image !== undefined) throw powerError();
    this.steps++;
    if (this.steps >= this.cutAt) {
      this.cutNow();
      throw powerError();
    }
  }

  private newFile(ino: number): number {
    const id = this.nextId++;
    this.files.set(id, {
      id,
      synced: Buffer.alloc(0),
      paths: new Set(),
      last: undefined,
      poisoned: [],
    });
    this.idByIno.set(ino, id);
    return id;
  }

  /** The disk content after a successful sync of `current` (poisoned ranges keep the disk's bytes). */
  private syncedAfter(f: FileModel, current: Buffer): Buffer {
    if (f.poisoned.length === 0) return current;
    const out = Buffer.from(current);
    for (const [a, b] of f.poisoned) {
      for (let i = a; i < Math.min(b, out.length); i++)
        out[i] = i < f.synced.length ? (f.synced[i] as number) : 0;
    }
    return out;
  }

  private snapshotDir(dir: string): void {
    const entries = new Map<string, DirEntry>();
    for (const name of fs.readdirSync(dir)) {
      const child = path.join(dir, name);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(child);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (this.dirs.has(child)) entries.set(name, { kind: "dir" });
      } else if (st.isFile()) {
        const id = this.idByIno.get(st.ino);
        // Files made behind the model's back (lock markers) are not modelled.
        if (id !== undefined) entries.set(name, { kind: "file", id });
      }
    }
    this.dirs.set(dir, entries);
  }

  private capture(): CrashImage {
    const dirs = new Map<string, Map<string, DirEntry>>();
    for (const [abs, entries] of this.dirs)
      dirs.set(path.relative(this.root, abs), new Map(entries));
    const files = new Map<number, { synced: Buffer; current: Buffer | undefined }>();
    for (const f of this.files.values()) {
      let current = f.last;
      for (const p of f.paths) {
        try {
          current = fs.readFileSync(p);
          break;
        } catch {
          // gone behind the model's back: keep looking
        }
      }
      files.set(f.id, { synced: f.synced, current });
    }
    return { dirs, files, step: this.steps };
  }

  private makeOps(): FsOps {
    const sync = async (fd: number) => {
      this.step("sync", fd);
      const info = this.fds.get(fd);
      await tick();
      // A sync that the cut interrupted made nothing durable.
      if (this.image !== undefined) throw powerError();
      if (info === undefined) throw Object.assign(new Error("EBADF"), { code: "EBADF" });
      if (info.id === undefined) {
        if (this.dirs.has(info.path)) this.snapshotDir(info.path);
        return;
      }
      const f = this.fileOf(info.id);
      f.synced = this.syncedAfter(f, readFd(fd));
    };
    return {
      open: async (p, flags, mode = 0o644) => {
        this.step("open", p);
        const abs = path.resolve(p);
        let existed = true;
        if (/[wax]/.test(flags)) {
          try {
            fs.lstatSync(abs);
          } catch {
            existed = false;
          }
        }
        const fd = fs.openSync(abs, flags, mode);
        const st = fs.fstatSync(fd);
        let id: number | undefined;
        if (st.isFile()) {
          id = this.idByIno.get(st.ino);
          if (!existed || id === undefined) id = this.newFile(st.ino);
          this.fileOf(id).paths.add(abs);
        }
        this.fds.set(fd, { path: abs, id });
        return fd;
      },
      close: async (fd) => {
        this.step("close", fd);
        this.fds.delete(fd);
        fs.closeSync(fd);
      },
      read: async (fd, buf, offset, length, position) => {
        this.step("read", fd);
        return fs.readSync(fd, buf, offset, length, position);
      },
      write: async (fd, buf, offset, length, position) => {
        this.step("write", fd);
        const n = fs.writeSync(fd, buf, offset, length, position);
        const id = this.fds.get(fd)?.id;
        // Written again: dirty again, so a later sync writes these bytes.
        if (id !== undefined) subtract(this.fileOf(id), position, position + n);
        return n;
      },
      fdatasync: sync,
      fsync: sync,
      ftruncate: async (fd, length) => {
        this.step("ftruncate", fd);
        fs.ftruncateSync(fd, length);
        const id = this.fds.get(fd)?.id;
        if (id !== undefined) subtract(this.fileOf(id), length, Number.MAX_SAFE_INTEGER);
      },
      fstat: async (fd) => {
        this.step("fstat", fd);
        return fs.fstatSync(fd);
      },
      stat: async (p) => {
        this.step("stat", p);
        return fs.statSync(p);
      },
      link: async (existing, target) => {
        this.step("link", existing);
        fs.linkSync(existing, target);
        const id = this.idByIno.get(fs.lstatSync(target).ino);
        if (id !== undefined) this.fileOf(id).paths.add(path.resolve(target));
      },
      unlink: async (p) => {
        this.step("unlink", p);
        const abs = path.resolve(p);
        const st = fs.lstatSync(abs);
        const id = this.idByIno.get(st.ino);
        const content = id !== undefined && st.nlink === 1 ? fs.readFileSync(abs) : undefined;
        fs.unlinkSync(abs);
        if (id === undefined) return;
        const f = this.fileOf(id);
        f.paths.delete(abs);
        if (st.nlink === 1) {
          f.last = content;
          this.idByIno.delete(st.ino);
        }
      },
      mkdir: async (p) => {
        this.step("mkdir", p);
        const abs = path.resolve(p);
        fs.mkdirSync(abs);
        this.dirs.set(abs, new Map());
      },
      readdir: async (p) => {
        this.step("readdir", p);
        return fs.readdirSync(p);
      },
    };
  }
}

/** The whole content of the file open as `fd`, also when `fd` is write-only (Linux). */
function readFd(fd: number): Buffer {
  return fs.readFileSync(`/proc/self/fd/${fd}`);
}

function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Removes [a, b) from the poisoned ranges of `f`. */
function subtract(f: FileModel, a: number, b: number): void {
  if (f.poisoned.length === 0) return;
  const out: [number, number][] = [];
  for (const [x, y] of f.poisoned) {
    if (y <= a || x >= b) out.push([x, y]);
    else {
      if (x < a) out.push([x, a]);
      if (y > b) out.push([b, y]);
    }
  }
  f.poisoned = out;
}

/**
 * Writes the crash image under `target` (which must not exist): the durable
 * directories and names only, each file with its synced content plus, when
 * the cache held more (unsynced bytes), one of: nothing, zeros, garbage, or
 * a prefix of the unsynced bytes; a pending truncation may or may not have
 * reached the disk. `noise: false` writes the synced content only.
 */
export function materialize(
  image: CrashImage,
  target: string,
  rng: Rng,
  o: { noise: boolean } = { noise: true },
): MaterializeStats {
  const stats: MaterializeStats = {
    files: 0,
    noise: { none: 0, zeros: 0, garbage: 0, prefix: 0, truncated: 0 },
  };
  const write = (rel: string, dest: string) => {
    fs.mkdirSync(dest, { recursive: true });
    for (const [name, e] of image.dirs.get(rel) ?? new Map<string, DirEntry>()) {
      const childRel = rel === "" ? name : path.join(rel, name);
      const childDest = path.join(dest, name);
      if (e.kind === "dir") {
        write(childRel, childDest);
        continue;
      }
      const f = image.files.get(e.id);
      if (f === undefined) continue;
      stats.files++;
      const [content, kind] = o.noise
        ? withNoise(f.synced, f.current, rng)
        : [f.synced, "none" as Noise];
      stats.noise[kind]++;
      fs.writeFileSync(childDest, content);
    }
  };
  write("", target);
  return stats;
}

function withNoise(synced: Buffer, current: Buffer | undefined, rng: Rng): [Buffer, Noise] {
  if (current === undefined || current.equals(synced)) return [synced, "none"];
  const common = commonPrefix(synced, current);
  if (common === synced.length && current.length > synced.length) {
    const unsynced = current.length - synced.length;
    const n = rng.int(1, unsynced);
    switch (rng.int(0, 3)) {
      case 0:
        return [synced, "none"];
      case 1:
        return [Buffer.concat([synced, Buffer.alloc(n)]), "zeros"];
      case 2:
        return [Buffer.concat([synced, garbage(rng, n)]), "garbage"];
      default:
        return [current.subarray(0, synced.length + n), "prefix"];
    }
  }
  // A pending truncation (or rewrite): the disk holds the old bytes, or the cut.
  if (common === current.length && rng.bool()) return [current, "truncated"];
  return [synced, "none"];
}

function garbage(rng: Rng, n: number): Buffer {
  const buf = Buffer.alloc(n);
  for (let i = 0; i < n; i++) buf[i] = rng.int(0, 255);
  return buf;
}
