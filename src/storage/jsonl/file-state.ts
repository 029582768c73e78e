import type { Stats } from "node:fs";
import * as path from "node:path";
import { dataLoss, notFound, type SessiondError, unavailable } from "../../core/errors.js";
import { SessionLog } from "../../core/session-log.js";
import type { SessionKey } from "../engine.js";
import { CheckpointOpener } from "./checkpoint.js";
import { makeNameDurable } from "./create-file.js";
import {
  closeQuietly,
  errnoCode,
  type FsOps,
  fsyncDir,
  readAt,
  SYNC_WRITE_MAX,
  type SyncFsOps,
  syncFsOps,
  writeAll,
} from "./fs-ops.js";
import type { InlineSync } from "./inline-sync.js";
import { type CorruptHandler, scan } from "./reader.js";
import { repairTail } from "./repair.js";
import type { SessionKeying } from "./session-keys.js";

/**
 * What this process knows about one session file, and how it catches up
 * with it: the parsed log, the offset where its last good record ends, the
 * last few bytes before that offset, and a remembered verdict for a torn
 * tail or a corruption (keyed by the file's stat signature, so an
 * unchanged file is not re-read and a changed one is).
 *
 * Catching up reads only the bytes beyond the known end. A writer (holding
 * the lock) refuses a file that shrank, is another inode, or no longer
 * holds the bytes it knows: it drops everything and fails with UNAVAILABLE,
 * so the request is retried against the reloaded file. A reader just
 * reloads. Only a writer repairs a torn tail; readers never modify the file.
 *
 * Not safe for concurrent use: SessionFile runs one operation at a time.
 */

export interface FileStateOptions {
  readonly ops: FsOps;
  readonly noFsync: boolean;
  readonly noTailRepair: boolean;
  /** Negative control: write at the end this process believes, without re-reading the file under the lock. */
  readonly noFencing?: boolean;
  /** The engine's choice of thread for a batch's flush (inline-sync.ts); absent: always the pool. */
  readonly inlineSync?: InlineSync;
  /** How the session at this path is sealed and opened (session-keys.ts); absent: never sealed. */
  readonly keysOf?: (key: SessionKey, logFile: string) => Promise<SessionKeying>;
}

/** The stat signature of a file: a change of inode, size or mtime is a change. */
function sigOf(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** Bytes kept from just before the known end, to notice a file rewritten behind our back. */
const PROBE_BYTES = 32;
const EMPTY = Buffer.alloc(0);

export class FileState {
  private log: SessionLog | undefined;
  /** The session's keys, read with the file (forgotten with it). */
  private keying: SessionKeying | undefined;
  /** Offset just past the last good record this process knows. */
  private end = 0;
  private ino = -1;
  /** The last bytes before `end`, as this process last saw them. */
  private probe: Buffer = EMPTY;
  /** Stat signature of a torn tail already looked at (readers skip re-reading it). */
  private tornSig: string | undefined;
  /** Torn bytes a writer found under the lock, to be saved aside by the repair. */
  private tornTail: Buffer | undefined;
  private corrupt: { error: SessiondError; sig: string } | undefined;
  /** The stat of the file as the log was last caught up with it (its signature: `sigOf`). */
  private sigStat: Stats | undefined;
  /** The writer's handle (opened "r+", positional writes) and the inode it belongs to. */
  private fd: number | undefined;
  private fdIno = -1;
  /**
   * After a failed write or fdatasync: where the bytes of unknown
   * durability start, and the inode. Kept across `reset`. Linux marks the
   * dirty pages of a failed sync clean, so the cache may show records the
   * disk never got and that no later fdatasync writes: the next writer
   * writes them again and fdatasyncs before appending after them.
   */
  private unsynced: { from: number; ino: number } | undefined;

  /** The file system's synchronous calls, when it has them (nodeFs: see SyncFsOps). */
  private readonly sync: SyncFsOps | undefined;

  constructor(
    private readonly key: SessionKey,
    readonly path: string,
    private readonly name: string,
    private readonly o: FileStateOptions,
  ) {
    this.sync = syncFsOps(o.ops);
  }

  /** True while bytes of a failed write or sync wait to be written again (not evictable). */
  get suspect(): boolean {
    return this.unsynced !== undefined;
  }

  /**
   * The readable prefix after a DATA_LOSS (for listings); undefined when
   * not loaded, or when even its first or last entry does not decode.
   */
  get prefix(): SessionLog | undefined {
    const log = this.log;
    if (log === undefined) return undefined;
    try {
      void log.root;
      void log.last;
      return log;
    } catch {
      return undefined;
    }
  }

  /**
   * The log when it is the whole of the file `st` describes (same inode,
   * known end at its size, nothing corrupt or of unknown durability), as
   * it stands, without reading: a listing record made of it is true of
   * that stat. Undefined otherwise. Only while no write runs.
   */
  logOf(st: Stats): SessionLog | undefined {
    if (this.log === undefined || this.corrupt !== undefined || this.unsynced !== undefined) {
      return undefined;
    }
    return st.ino === this.ino && st.size === this.end ? this.log : undefined;
  }

  /** What seals the records written now (undefined: in clear); known once the file is read. */
  get sealer(): SessionKeying["sealer"] {
    return this.keying?.sealer;
  }

  /** The erasure's marker when the session was erased (its key destroyed); known once the file is read. */
  get erased(): SessionKeying["erased"] {
    return this.keying?.erased;
  }

  /** Installs the state of a file this process has just created with `content`. */
  seed(log: SessionLog, content: Buffer, st: Stats, keying?: SessionKeying): void {
    this.keying = keying;
    this.log = log;
    this.end = content.length;
    this.ino = st.ino;
    this.probe = Buffer.from(content.subarray(Math.max(0, content.length - PROBE_BYTES)));
  }

  /**
   * The log caught up with the file (reader). NOT_FOUND / DATA_LOSS. A
   * sealed session's checkpoint, read meanwhile, is ready for its entries
   * to be decoded from (checkpoint.ts).
   */
  async read(): Promise<SessionLog> {
    const log = await this.catchUp(await this.statFile(), false);
    const opener = this.keying?.opener;
    if (opener instanceof CheckpointOpener) await opener.ready;
    return log;
  }

  /** The last seq the checkpoint read with the log covers (0: none, or not sealed). */
  get checkpointed(): number {
    const opener = this.keying?.opener;
    return opener instanceof CheckpointOpener ? opener.covered : 0;
  }

  /** The log as this state holds it, if any (no read). */
  get loaded(): SessionLog | undefined {
    return this.log;
  }

  /**
   * Under the lock, before a write: the log caught up with the file, a torn
   * tail repaired, and where to write. With `debug.noTailRepair` the records
   * are glued onto the torn bytes, which is exactly the failure it proves.
   */
  async prepareWrite(): Promise<{ log: SessionLog; writeAt: number }> {
    const st = await this.statFile();
    if (this.unchanged(st)) {
      this.sigStat = st;
      return { log: this.log as SessionLog, writeAt: this.end };
    }
    const fd = await this.openForWrite(st);
    if (this.o.noFencing && this.log !== undefined) return { log: this.log, writeAt: this.end };
    const caught = await this.catchUp(st, true);
    const torn = this.tornTail;
    this.tornTail = undefined;
    try {
      await this.rewriteUnsynced(fd, st.ino);
      if (torn === undefined) return { log: caught, writeAt: this.end };
      if (this.o.noTailRepair) return { log: caught, writeAt: this.end + torn.length };
      await repairTail(this.o.ops, this.path, fd, this.end, torn, { noFsync: this.o.noFsync });
    } catch (err) {
      // A failed sync is fatal for the handle: never fdatasync it again.
      await this.reset();
      throw err;
    }
    this.tornSig = undefined;
    return { log: caught, writeAt: this.end };
  }

  /**
   * Under the lock, before redaction's rewrite (redact-file.ts): what
   * prepareWrite gives, and the file's bytes up to its last good record.
   */
  async prepareRewrite(): Promise<{ log: SessionLog; bytes: Buffer }> {
    const { log, writeAt } = await this.prepareWrite();
    return { log, bytes: await this.readRange(0, writeAt) };
  }

  /**
   * prepareWrite's usual case, synchronously (a file system with SyncFsOps):
   * the offset to write at, with `log` (the current log) as it is, when the
   * file is as this process left it; undefined otherwise, and on any
   * failure, for the general `prepareWrite` to find out and report.
   */
  writeOffsetNow(): number | undefined {
    const sync = this.sync;
    if (sync === undefined || this.log === undefined || this.fd === undefined) return undefined;
    let st: Stats;
    try {
      st = sync.stat(this.path);
    } catch {
      return undefined;
    }
    if (!this.unchanged(st)) return undefined;
    this.sigStat = st;
    return this.end;
  }

  /** The log this state holds (after a successful prepareWrite / writeOffsetNow). */
  get current(): SessionLog {
    return this.log as SessionLog;
  }

  /**
   * The file `st` describes is as this process left it (same inode, known
   * end at its size, the handle open on it, nothing corrupt, torn or of
   * unknown durability): nothing to read, repair or reopen. What catchUp
   * and openForWrite would conclude, without their awaits.
   */
  private unchanged(st: Stats): boolean {
    const log = this.log;
    return (
      log !== undefined &&
      this.fd !== undefined &&
      this.fdIno === st.ino &&
      st.ino === this.ino &&
      st.size === this.end &&
      this.corrupt === undefined &&
      this.unsynced === undefined &&
      log.headSeq > 0
    );
  }

  /** Writes the records after a failed write / sync again and fdatasyncs them (see `unsynced`). */
  private async rewriteUnsynced(fd: number, ino: number): Promise<void> {
    const u = this.unsynced;
    if (u === undefined) return;
    if (u.ino === ino && this.end > u.from) {
      const bytes = await this.readRange(u.from, this.end - u.from);
      await writeAll(this.o.ops, fd, bytes, u.from);
      if (!this.o.noFsync) await this.o.ops.fdatasync(fd);
    }
    this.unsynced = undefined;
  }

  /**
   * Writes `bytes` at `writeAt` (looping on short writes) and fdatasyncs
   * once. Undefined when that is done already, synchronously (a small
   * write on the real file system without a sync: no promise to wait for);
   * a failure is then thrown rather than a rejected promise.
   */
  writeDurably(bytes: Buffer, writeAt: number): Promise<void> | undefined {
    let done = 0;
    // A small write is synchronous on the real file system either way: without its promise.
    const sync = this.sync;
    if (sync !== undefined && bytes.length <= SYNC_WRITE_MAX) {
      try {
        done = sync.write(this.fd as number, bytes, 0, bytes.length, writeAt);
      } catch (err) {
        this.writeFailed(writeAt);
        throw err;
      }
      if (done === bytes.length) {
        if (!this.o.noFsync) return this.flushWritten(sync, bytes, writeAt);
        this.written(bytes, writeAt);
        return undefined;
      }
    }
    return this.writeRest(bytes, writeAt, done);
  }

  /**
   * writeDurably's usual case, once `bytes` are written: the fdatasync as
   * one promise (SyncFsOps' callback form) instead of writeRest's frame
   * and flush's chain, with the same steps: timed for `inlineSync`, a
   * failure counted as slow and the bytes of unknown durability.
   */
  private flushWritten(sync: SyncFsOps, bytes: Buffer, writeAt: number): Promise<void> {
    const fd = this.fd as number;
    const pick = this.o.inlineSync;
    const inline = pick?.inline === true;
    const start = pick === undefined ? 0 : pick.clock();
    return new Promise((resolve, reject) => {
      sync.fdatasync(fd, inline, (err) => {
        if (err !== null) {
          pick?.flushed(Number.POSITIVE_INFINITY);
          this.writeFailed(writeAt);
          reject(err);
          return;
        }
        pick?.flushed(pick.clock() - start);
        this.written(bytes, writeAt);
        resolve();
      });
    });
  }

  /** writeDurably from `done` bytes on: the rest written, then the fdatasync. */
  private async writeRest(bytes: Buffer, writeAt: number, done: number): Promise<void> {
    const fd = this.fd as number;
    const ops = this.o.ops;
    try {
      while (done < bytes.length) {
        const n = await ops.write(fd, bytes, done, bytes.length - done, writeAt + done);
        if (n <= 0) throw Object.assign(new Error("write made no progress"), { code: "EIO" });
        done += n;
      }
      if (!this.o.noFsync) await this.flush(fd);
    } catch (err) {
      this.writeFailed(writeAt);
      throw err;
    }
    this.written(bytes, writeAt);
  }

  /** A write or sync from `writeAt` on failed: those bytes are of unknown durability (`unsynced`). */
  private writeFailed(writeAt: number): void {
    const from = Math.min(this.unsynced?.from ?? writeAt, writeAt);
    this.unsynced = { from, ino: this.fdIno };
  }

  /** `bytes` are in the file at `writeAt` (and synced, unless noFsync): its known end moves past them. */
  private written(bytes: Buffer, writeAt: number): void {
    this.end = writeAt + bytes.length;
    this.keepProbe(bytes);
  }

  /** A batch's fdatasync, on the thread `inlineSync` picks, timed for its next pick. */
  private flush(fd: number): Promise<void> {
    const sync = this.o.inlineSync;
    if (sync === undefined) return this.o.ops.fdatasync(fd);
    const start = sync.clock();
    return this.o.ops.fdatasync(fd, sync.inline).then(
      () => sync.flushed(sync.clock() - start),
      (err: unknown) => {
        // A failed flush counts as slow: the disk is in trouble.
        sync.flushed(Number.POSITIVE_INFINITY);
        throw err;
      },
    );
  }

  /** Unlinks the file and fsyncs its directory; false when it was already gone. */
  async unlink(): Promise<boolean> {
    let removed = true;
    try {
      await this.o.ops.unlink(this.path);
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
      removed = false;
    }
    if (removed && !this.o.noFsync) await fsyncDir(this.o.ops, path.dirname(this.path));
    await this.reset();
    return removed;
  }

  /**
   * Forgets everything and closes the handle: after a failed write (whose
   * outcome is unknown, and whose handle must not be fsynced again) the
   * file is the truth and is read again from the start.
   */
  async reset(): Promise<void> {
    this.forget();
    await this.closeHandle();
  }

  async closeHandle(): Promise<void> {
    const fd = this.fd;
    this.fd = undefined;
    this.fdIno = -1;
    await closeQuietly(this.o.ops, fd);
  }

  private forget(): void {
    this.log = undefined;
    this.keying = undefined;
    this.end = 0;
    this.ino = -1;
    this.probe = EMPTY;
    this.tornSig = undefined;
    this.tornTail = undefined;
    this.corrupt = undefined;
  }

  private async statFile(): Promise<Stats> {
    try {
      return await this.o.ops.stat(this.path);
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
      await this.reset();
      throw notFound(`${this.name} not found`);
    }
  }

  /** Opens the writer's handle, or re-opens it when the name now points at another inode. */
  private async openForWrite(st: Stats): Promise<number> {
    if (this.fd !== undefined && this.fdIno === st.ino) return this.fd;
    await this.closeHandle();
    const fd = await this.open("r+");
    this.fd = fd;
    this.fdIno = (await this.o.ops.fstat(fd)).ino;
    if (this.fdIno !== st.ino) throw unavailable(`${this.name}: the file was replaced; retry`);
    // A name left by a create whose directory fsync failed is not durable yet.
    try {
      if (!this.o.noFsync) await makeNameDurable(this.o.ops, this.path);
    } catch (err) {
      await this.closeHandle();
      throw err;
    }
    return fd;
  }

  private async open(flags: string): Promise<number> {
    try {
      return await this.o.ops.open(this.path, flags);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") throw notFound(`${this.name} not found`);
      throw err;
    }
  }

  private async catchUp(st: Stats, writer: boolean): Promise<SessionLog> {
    // A handle on a file that no longer has the name (replaced by a
    // redaction's rename, or deleted and created again) is never read again.
    if (this.fd !== undefined && this.fdIno !== st.ino) await this.closeHandle();
    const sig = sigOf(st);
    this.sigStat = st;
    if (this.corrupt !== undefined) {
      if (this.corrupt.sig === sig) throw this.corrupt.error;
      this.forget();
    }
    if (this.log !== undefined && (st.ino !== this.ino || st.size < this.end)) {
      const why =
        st.ino !== this.ino ? "was replaced" : `shrank from ${this.end} to ${st.size} bytes`;
      this.forget();
      if (writer) throw unavailable(`${this.name}: the file ${why}; reloaded, retry`);
    }
    if (this.log === undefined) {
      if (this.o.keysOf !== undefined) this.keying = await this.o.keysOf(this.key, this.path);
      this.log = new SessionLog(this.key.sessionId);
      this.ino = st.ino;
    }
    if (st.size > this.end && (writer || this.tornSig !== sig)) {
      if (!(await this.readTail(st.size, sig, writer))) {
        if (writer) {
          throw unavailable(`${this.name}: the file changed unexpectedly; reloaded, retry`);
        }
        return this.catchUp(st, false);
      }
    }
    if (this.log.headSeq === 0) {
      this.markCorrupt(1, 0, st.size === 0 ? "the file is empty" : "no valid first record", sig);
    }
    return this.log;
  }

  /**
   * Parses the bytes from the known end to `size` into the log. Returns
   * false (after forgetting everything) when the bytes just before the
   * known end are not the ones this process saw: the file was rewritten.
   */
  private async readTail(size: number, sig: string, writer: boolean): Promise<boolean> {
    const log = this.log as SessionLog;
    const base = this.end;
    const from = base - this.probe.length;
    const bytes = await this.readRange(from, size - from);
    if (!bytes.subarray(0, this.probe.length).equals(this.probe)) {
      this.forget();
      return false;
    }
    const tail = bytes.subarray(this.probe.length);
    // A reader's checkpoint (checkpoint.ts), read meanwhile, is ready for the
    // scan to compare each record with it while its bytes are at hand.
    const opener = this.keying?.opener;
    if (!writer && opener instanceof CheckpointOpener) await opener.ready;
    let result: ReturnType<typeof scan>;
    try {
      result = scan(tail, base, log, this.corruptHandler(log), this.keying?.opener);
    } catch (err) {
      // No key to open a sealed record with: nothing is known of the file.
      this.forget();
      throw err;
    }
    const good = result.end - base;
    this.keepProbe(tail.subarray(0, good));
    this.end = result.end;
    this.tornSig = undefined;
    const v = result.verdict;
    if (v.kind === "corrupt") this.markCorrupt(v.line, v.offset, v.reason, sig);
    if (v.kind === "torn") {
      this.tornSig = sig;
      if (writer) this.tornTail = Buffer.from(tail.subarray(good));
    }
    return true;
  }

  private async readRange(position: number, length: number): Promise<Buffer> {
    if (this.fd !== undefined) return readAt(this.o.ops, this.fd, position, length);
    const fd = await this.open("r");
    try {
      return await readAt(this.o.ops, fd, position, length);
    } finally {
      await closeQuietly(this.o.ops, fd);
    }
  }

  /**
   * For entries of `log` found not to decode when first used (they are read
   * lazily, reader.ts): DATA_LOSS naming the line, remembered like a
   * corruption found by a scan while the file is unchanged, so that the
   * session then fails every load (and a listing that reads it shows it as
   * corrupt). A log this state has since dropped only throws.
   */
  private corruptHandler(log: SessionLog): CorruptHandler {
    return (line, offset, reason) => {
      const error = dataLoss(`${this.name} is corrupt at line ${line} (byte ${offset}): ${reason}`);
      if (this.log === log && this.corrupt === undefined)
        this.corrupt = { error, sig: this.sigStat === undefined ? "" : sigOf(this.sigStat) };
      throw error;
    };
  }

  private markCorrupt(line: number, offset: number, reason: string, sig: string): never {
    const error = dataLoss(`${this.name} is corrupt at line ${line} (byte ${offset}): ${reason}`);
    this.corrupt = { error, sig };
    throw error;
  }

  /** Keeps the last PROBE_BYTES of what the file holds up to `end`, `bytes` being its newest part. */
  private keepProbe(bytes: Buffer): void {
    if (bytes.length >= PROBE_BYTES) {
      // In place when the probe is one of our own full-size buffers (no allocation per write).
      if (this.probe.length !== PROBE_BYTES || this.probe === EMPTY) {
        this.probe = Buffer.allocUnsafeSlow(PROBE_BYTES);
      }
      bytes.copy(this.probe, 0, bytes.length - PROBE_BYTES);
      return;
    }
    const joined = Buffer.concat([this.probe, bytes]);
    this.probe = Buffer.from(joined.subarray(Math.max(0, joined.length - PROBE_BYTES)));
  }
}
