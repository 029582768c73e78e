import * as fs from "node:fs";

/**
 * The file-system calls the JSONL engine makes, as one replaceable object.
 * Everything durable goes through here (no `fs.promises` elsewhere in the
 * engine), so tests can count fdatasyncs, fail the k-th call with EIO or
 * ENOSPC, return short writes, or simulate a power cut by remembering what
 * was synced. File descriptors are plain numbers to keep wrappers trivial.
 */
export interface FsOps {
  open(path: string, flags: string, mode?: number): Promise<number>;
  close(fd: number): Promise<void>;
  /** Reads at `position`; returns the bytes read (may be fewer than asked). */
  read(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number>;
  /** Writes at `position`; returns the bytes written (may be fewer than asked). */
  write(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number>;
  /**
   * With `inline`, the flush may block the calling thread instead of going
   * through a worker (see inline-sync.ts); wrappers may ignore the hint.
   */
  fdatasync(fd: number, inline?: boolean): Promise<void>;
  fsync(fd: number): Promise<void>;
  ftruncate(fd: number, length: number): Promise<void>;
  fstat(fd: number): Promise<fs.Stats>;
  stat(path: string): Promise<fs.Stats>;
  link(existing: string, target: string): Promise<void>;
  /** Optional: only redaction's rewrite of a log renames (a file system without it cannot redact). */
  rename?(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Non-recursive on purpose: the caller fsyncs the parent of every directory it creates. */
  mkdir(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
}

function cb<T>(run: (done: (err: NodeJS.ErrnoException | null, value: T) => void) => void) {
  return new Promise<T>((resolve, reject) => {
    run((err, value) => (err ? reject(err) : resolve(value)));
  });
}

function cbVoid(run: (done: (err: NodeJS.ErrnoException | null) => void) => void) {
  return new Promise<void>((resolve, reject) => {
    run((err) => (err ? reject(err) : resolve()));
  });
}

/** Runs a synchronous call and reports its outcome as a promise, like the async calls. */
function now<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * Reads and writes up to this size are done synchronously: they only touch
 * the page cache and take microseconds, while a round trip through libuv's
 * thread pool costs tens of microseconds on a busy 2-core box and was most
 * of an append's latency (with fdatasync off, bench row 9). Larger transfers
 * and everything that waits on the disk (fdatasync, fsync) stay async so the
 * event loop does not block on them, except a flush the engine asks to run
 * inline (inline-sync.ts: a lone append on a fast disk).
 */
const SYNC_IO_MAX = 64 * 1024;

/**
 * The synchronous forms of `stat` and of a small `write` (at most
 * SYNC_IO_MAX bytes), which the real file system's asynchronous ones run
 * anyway: the writer's hot path (file-state.ts) calls them directly and
 * saves a promise and a microtask turn for each. Only nodeFs has them (and
 * observedFs, which passes them on), as a property a spread or a copy of
 * nodeFs's methods does not carry: behind a test's wrapper (faults, counts,
 * a power cut) the writer takes the asynchronous calls, where the wrapper
 * sees everything. Either way a failure takes the same path: the writer
 * falls back to its general, asynchronous steps.
 */
export interface SyncFsOps {
  stat(path: string): fs.Stats;
  write(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  /**
   * FsOps.fdatasync with a callback instead of a promise (the writer's
   * flush of a batch: one promise of its own instead of one per layer).
   * `inline`: on the calling thread, `done` called before it returns.
   */
  fdatasync(fd: number, inline: boolean, done: (err: NodeJS.ErrnoException | null) => void): void;
}

const SYNC_OPS = Symbol("sessiond.syncFsOps");

/** The synchronous calls `ops` carries (see SyncFsOps), if any. */
export function syncFsOps(ops: FsOps): SyncFsOps | undefined {
  return (ops as { [SYNC_OPS]?: SyncFsOps })[SYNC_OPS];
}

/** `ops` with `sync` attached (not enumerable: wrappers that copy `ops` do not carry it). */
export function withSyncFsOps<T extends FsOps>(ops: T, sync: SyncFsOps | undefined): T {
  if (sync !== undefined) Object.defineProperty(ops, SYNC_OPS, { value: sync, enumerable: false });
  return ops;
}

/** Writes up to this many bytes go through SyncFsOps.write (as nodeFs.write does them). */
export const SYNC_WRITE_MAX = SYNC_IO_MAX;

/**
 * The real file system. Callback APIs rather than `fs.promises` because
 * they are the cheapest path to the thread pool (no FileHandle objects on
 * the append path); metadata calls (open, close, stat, fstat) and small
 * reads / writes are synchronous, see SYNC_IO_MAX.
 */
export const nodeFs: FsOps = {
  open: (path, flags, mode = 0o644) => now(() => fs.openSync(path, flags, mode)),
  close: (fd) => now(() => fs.closeSync(fd)),
  read: (fd, buf, offset, length, position) =>
    length <= SYNC_IO_MAX
      ? now(() => fs.readSync(fd, buf, offset, length, position))
      : cb<number>((d) => fs.read(fd, buf, offset, length, position, d)),
  write: (fd, buf, offset, length, position) =>
    length <= SYNC_IO_MAX
      ? now(() => fs.writeSync(fd, buf, offset, length, position))
      : cb<number>((d) => fs.write(fd, buf, offset, length, position, d)),
  fdatasync: (fd, inline) =>
    inline ? now(() => fs.fdatasyncSync(fd)) : cbVoid((d) => fs.fdatasync(fd, d)),
  fsync: (fd) => cbVoid((d) => fs.fsync(fd, d)),
  ftruncate: (fd, length) => cbVoid((d) => fs.ftruncate(fd, length, d)),
  fstat: (fd) => now(() => fs.fstatSync(fd)),
  stat: (path) => now(() => fs.statSync(path)),
  link: (existing, target) => cbVoid((d) => fs.link(existing, target, d)),
  rename: (from, to) => cbVoid((d) => fs.rename(from, to, d)),
  unlink: (path) => cbVoid((d) => fs.unlink(path, d)),
  mkdir: (path) => cbVoid((d) => fs.mkdir(path, d)),
  readdir: (path) => cb<string[]>((d) => fs.readdir(path, d)),
};

withSyncFsOps(nodeFs, {
  stat: (path) => fs.statSync(path),
  write: (fd, buf, offset, length, position) => fs.writeSync(fd, buf, offset, length, position),
  fdatasync: (fd, inline, done) => {
    if (!inline) {
      fs.fdatasync(fd, done);
      return;
    }
    try {
      fs.fdatasyncSync(fd);
    } catch (err) {
      done(err as NodeJS.ErrnoException);
      return;
    }
    done(null);
  },
});

/** The errno code of an fs error ("ENOENT"), or undefined. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Writes all of `buf` at `position`, looping on short writes. */
export async function writeAll(ops: FsOps, fd: number, buf: Buffer, position: number) {
  let done = 0;
  while (done < buf.length) {
    const n = await ops.write(fd, buf, done, buf.length - done, position + done);
    if (n <= 0) throw Object.assign(new Error("write made no progress"), { code: "EIO" });
    done += n;
  }
}

/** Bytes a read buffer starts past its allocation (readBuffer). */
const SKEW = 64;

/**
 * A buffer of `size` bytes for file reads that does not start on a page
 * boundary. Why: a large Buffer's memory is page-aligned, and so is the
 * page cache a read copies from, at the same offsets for reads at equal
 * file and buffer positions; on AMD EPYC (Zen) the kernel's copy into user
 * memory is about three times slower when source and destination share
 * their offset within a 4 KiB page (measured here: 4,000 session files
 * read in 319 ms into a page-aligned buffer, 98-133 ms at any other
 * offset from 16 to 4,080 bytes; a text search of 10,000 sessions went
 * from ~1,000 to ~500 ms, bench row 11/search).
 */
export function readBuffer(size: number): Buffer {
  return Buffer.allocUnsafe(size + SKEW).subarray(SKEW);
}

/**
 * Reads exactly `length` bytes at `position` (fewer only if the file ends
 * first), looping on short reads; returns the filled part of the buffer.
 */
export async function readAt(ops: FsOps, fd: number, position: number, length: number) {
  const buf = readBuffer(length);
  let done = 0;
  while (done < length) {
    const n = await ops.read(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done === length ? buf : buf.subarray(0, done);
}

/** A file's whole bytes (key files, the erasure audit, a log to seal), or undefined when it does not exist. */
export async function readWholeBytes(ops: FsOps, file: string): Promise<Buffer | undefined> {
  let fd: number;
  try {
    fd = await ops.open(file, "r");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
  try {
    const size = (await ops.fstat(fd)).size;
    return await readAt(ops, fd, 0, size);
  } finally {
    await ops.close(fd);
  }
}

/** A small file's whole text, or undefined when it does not exist. */
export async function readWholeText(ops: FsOps, file: string): Promise<string | undefined> {
  return (await readWholeBytes(ops, file))?.toString("utf8");
}

/** Makes a directory's entries (created, linked, unlinked files) durable. */
export async function fsyncDir(ops: FsOps, dir: string): Promise<void> {
  const fd = await ops.open(dir, "r");
  try {
    await ops.fsync(fd);
  } finally {
    await ops.close(fd);
  }
}

/** Closes `fd`, ignoring errors: used on paths that are already failing. */
export async function closeQuietly(ops: FsOps, fd: number | undefined): Promise<void> {
  if (fd === undefined) return;
  try {
    await ops.close(fd);
  } catch {
    // The handle is being abandoned; there is nothing useful to do with the error.
  }
}
