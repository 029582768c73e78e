import type { Stats } from "node:fs";
import * as path from "node:path";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { AppendPlan } from "../../core/append-plan.js";
import { dataLoss, notFound, type SessiondError, unavailable } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { SessionLog } from "../../core/session-log.js";
import type { AppendResult, Planner, SessionKey } from "../engine.js";
import {
  closeQuietly,
  errnoCode,
  type FsOps,
  fsyncDir,
  ioError,
  readAt,
  writeAll,
} from "./fs-ops.js";
import { FileLease } from "./lock.js";
import { scan } from "./reader.js";
import { encodeRecords } from "./record.js";
import { repairTail } from "./repair.js";

/**
 * One session file, as this process knows it: the parsed log (cached), the
 * byte offset where its last good record ends, and the write queue.
 *
 * Readers (`load`) stat the file and parse only the bytes beyond the known
 * end, so appends made by other processes are picked up cheaply; they never
 * modify the file. Writers (`append`, `remove`) queue up; the queue is
 * drained in batches (group commit) under the cross-process lease
 * (lock.ts): fence (re-check the file under the lock and read what others
 * appended), repair a torn tail, run every queued planner against the log,
 * write all planned records with one write, fdatasync once, and only then
 * acknowledge. Reads and batches of one session take turns (`exclusive`),
 * so a reader never sees entries that are not yet durable.
 */

export interface SessionFileOptions {
  readonly ops: FsOps;
  readonly staleMs: number;
  readonly leaseIdleMs: number;
  readonly lockEnabled: boolean;
  readonly noFsync: boolean;
  readonly noTailRepair: boolean;
  /** Called after a batch is durable, with the new head seq. */
  readonly onAppended: (headSeq: number) => void;
}

type AppendOp = {
  readonly kind: "append";
  readonly planner: Planner;
  readonly resolve: (r: AppendResult) => void;
  readonly reject: (e: unknown) => void;
};
type DeleteOp = {
  readonly kind: "delete";
  readonly resolve: (deleted: boolean) => void;
  readonly reject: (e: unknown) => void;
};

/** Bytes kept from just before the known end, to notice a file rewritten behind our back. */
const PROBE_BYTES = 32;
const EMPTY = Buffer.alloc(0);

export class SessionFile {
  private log: SessionLog | undefined;
  /** Offset just past the last good record this process knows. */
  private end = 0;
  private ino = -1;
  /** The last bytes before `end`, as this process last saw them. */
  private probe: Buffer = EMPTY;
  /** Stat signature of a torn tail readers already looked at (skip re-reading it). */
  private tornSig: string | undefined;
  private corrupt: { error: SessiondError; sig: string } | undefined;
  /** Torn bytes a writer found under the lock, to be saved aside by the repair. */
  private tornTail: Buffer | undefined;
  /** Writer's handle (opened "r+", positional writes) and the inode it belongs to. */
  private fd: number | undefined;
  private fdIno = -1;
  private readonly queue: (AppendOp | DeleteOp)[] = [];
  private draining: Promise<void> | undefined;
  private refreshing: Promise<SessionLog> | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  private turns = 0;
  private readonly lease: FileLease;
  private readonly name: string;

  constructor(
    readonly key: SessionKey,
    readonly path: string,
    private readonly o: SessionFileOptions,
  ) {
    this.lease = new FileLease(path, {
      staleMs: o.staleMs,
      idleMs: o.leaseIdleMs,
      enabled: o.lockEnabled,
    });
    this.name = `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}`;
  }

  /** True when nothing is queued, running or locked: the cache may drop this object. */
  get evictable(): boolean {
    return (
      this.queue.length === 0 && this.draining === undefined && this.turns === 0 && !this.lease.held
    );
  }

  /** The readable prefix after a DATA_LOSS (for listings); undefined when not loaded. */
  get prefix(): SessionLog | undefined {
    return this.log;
  }

  /** Installs the state of a file this process has just created with `content`. */
  seed(log: SessionLog, content: Buffer, st: Stats): void {
    this.log = log;
    this.end = content.length;
    this.ino = st.ino;
    this.probe = Buffer.from(content.subarray(Math.max(0, content.length - PROBE_BYTES)));
  }

  /** The log caught up with the file. NOT_FOUND / DATA_LOSS / UNAVAILABLE. */
  load(): Promise<SessionLog> {
    this.refreshing ??= this.exclusive(async () => {
      try {
        return await this.catchUp(await this.statFile(), false);
      } catch (err) {
        throw this.storageError(err, "reading");
      }
    }).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  append(planner: Planner): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.enqueue({ kind: "append", planner, resolve, reject });
    });
  }

  /** Deletes the file under the lock, after the appends queued before it. */
  remove(): Promise<boolean> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "delete", resolve, reject }));
  }

  /** Waits for queued work, then releases the lease and the handle. */
  async close(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
    await this.exclusive(async () => {
      await this.lease.release();
      await this.dropHandle();
    });
  }

  private enqueue(op: AppendOp | DeleteOp): void {
    this.queue.push(op);
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      await this.lease.handOverIfWanted().catch(() => undefined);
      const first = this.queue[0] as AppendOp | DeleteOp;
      if (first.kind === "delete") {
        this.queue.shift();
        await this.runDelete(first);
        continue;
      }
      const stop = this.queue.findIndex((op) => op.kind === "delete");
      const batch = this.queue.splice(0, stop < 0 ? this.queue.length : stop) as AppendOp[];
      await this.runBatch(batch);
    }
    this.lease.idle();
  }

  /** Runs `fn` when no other read or batch of this session runs. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.turns++;
    const run = this.turn.then(fn).finally(() => {
      this.turns--;
    });
    this.turn = run.catch(() => undefined);
    return run;
  }

  private async runBatch(batch: AppendOp[]): Promise<void> {
    try {
      await this.lease.acquire();
    } catch (err) {
      for (const op of batch) op.reject(err);
      return;
    }
    await this.exclusive(() => this.commit(batch));
  }

  /** Fence, plan every request, write once, fdatasync once, then acknowledge. */
  private async commit(batch: AppendOp[]): Promise<void> {
    let log: SessionLog;
    let writeAt: number;
    try {
      const st = await this.statFile();
      const fd = await this.openForWrite(st);
      log = await this.catchUp(st, true);
      writeAt = await this.repairIfTorn(fd);
    } catch (err) {
      for (const op of batch) op.reject(this.storageError(err, "reading"));
      return;
    }
    const planned: { op: AppendOp; result: AppendResult }[] = [];
    const entries: Entry[] = [];
    for (const op of batch) {
      let plan: AppendPlan;
      try {
        plan = op.planner(log);
        // All or nothing: a plan the log refuses (a planner bug) is rolled back.
        log.applyAll(plan.write);
      } catch (err) {
        op.reject(err);
        continue;
      }
      entries.push(...plan.write);
      planned.push({ op, result: { ...plan, headSeq: log.headSeq, leafId: log.leafId } });
    }
    if (entries.length > 0) {
      const bytes = encodeRecords(entries);
      try {
        await this.writeDurably(bytes, writeAt);
      } catch (err) {
        // Outcome unknown: the bytes may or may not be in the file. The file is the
        // truth, so forget everything and read it again next time.
        this.forgetState();
        await this.dropHandle();
        const error = this.storageError(err, "writing");
        for (const { op } of planned) op.reject(error);
        return;
      }
    }
    for (const { op, result } of planned) op.resolve(result);
    if (entries.length > 0) this.o.onAppended(log.headSeq);
  }

  private async writeDurably(bytes: Buffer, writeAt: number): Promise<void> {
    const fd = this.fd as number;
    this.checkLease();
    await writeAll(this.o.ops, fd, bytes, writeAt);
    if (!this.o.noFsync) await this.o.ops.fdatasync(fd);
    this.checkLease();
    this.end = writeAt + bytes.length;
    this.keepProbe(bytes);
    this.tornSig = undefined;
  }

  private checkLease(): void {
    const lost = this.lease.lost;
    if (lost !== undefined) throw lost;
  }

  private async runDelete(op: DeleteOp): Promise<void> {
    try {
      await this.lease.acquire();
      const removed = await this.exclusive(async () => {
        try {
          await this.o.ops.unlink(this.path);
        } catch (err) {
          if (errnoCode(err) === "ENOENT") return false;
          throw err;
        }
        if (!this.o.noFsync) await fsyncDir(this.o.ops, path.dirname(this.path));
        this.forgetState();
        await this.dropHandle();
        return true;
      });
      op.resolve(removed);
    } catch (err) {
      op.reject(this.storageError(err, "deleting"));
    } finally {
      await this.lease.release();
      await this.lease.forget();
    }
  }

  /** Opens the writer's handle, or re-opens it when the name now points at another inode. */
  private async openForWrite(st: Stats): Promise<number> {
    if (this.fd !== undefined && this.fdIno === st.ino) return this.fd;
    await this.dropHandle();
    let fd: number;
    try {
      fd = await this.o.ops.open(this.path, "r+");
    } catch (err) {
      if (errnoCode(err) === "ENOENT") throw notFound(`${this.name} not found`);
      throw err;
    }
    this.fd = fd;
    this.fdIno = (await this.o.ops.fstat(fd)).ino;
    if (this.fdIno !== st.ino) throw unavailable(`${this.name}: the file was replaced; retry`);
    return fd;
  }

  private async statFile(): Promise<Stats> {
    try {
      return await this.o.ops.stat(this.path);
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
      this.forgetState();
      await this.dropHandle();
      throw notFound(`${this.name} not found`);
    }
  }

  /**
   * Brings the log up to date with the file whose stat is `st`. A writer
   * (holding the lock) refuses a file that shrank, was replaced or no
   * longer holds the bytes it knows: it drops the cache and fails with
   * UNAVAILABLE, so that the request is retried against the reloaded file.
   * A reader just reloads. Readers never modify the file.
   */
  private async catchUp(st: Stats, writer: boolean): Promise<SessionLog> {
    const sig = `${st.ino}:${st.size}:${st.mtimeMs}`;
    if (this.corrupt !== undefined) {
      if (this.corrupt.sig === sig) throw this.corrupt.error;
      this.forgetState();
    }
    if (this.log !== undefined && (st.ino !== this.ino || st.size < this.end)) {
      const why =
        st.ino !== this.ino ? "was replaced" : `shrank from ${this.end} to ${st.size} bytes`;
      this.forgetState();
      if (writer) throw unavailable(`${this.name}: the file ${why}; reloaded, retry`);
    }
    if (this.log === undefined) {
      this.log = new SessionLog(this.key.sessionId);
      this.ino = st.ino;
    }
    if (st.size > this.end && (writer || this.tornSig !== sig)) {
      if (!(await this.readTail(st.size, sig, writer))) {
        if (writer)
          throw unavailable(`${this.name}: the file changed unexpectedly; reloaded, retry`);
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
   * false (after dropping the cache) when the bytes just before the known
   * end are not the ones this process saw: the file was rewritten.
   */
  private async readTail(size: number, sig: string, writer: boolean): Promise<boolean> {
    const log = this.log as SessionLog;
    const base = this.end;
    const from = base - this.probe.length;
    const bytes = await this.readRange(from, size - from);
    if (!bytes.subarray(0, this.probe.length).equals(this.probe)) {
      this.forgetState();
      return false;
    }
    const tail = bytes.subarray(this.probe.length);
    const result = scan(tail, base, log);
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

  /**
   * Before a write: cuts a torn tail found under the lock (repair.ts) and
   * returns the offset to write at. With `debug.noTailRepair` the records
   * are glued onto the torn bytes, which is exactly the failure it proves.
   */
  private async repairIfTorn(fd: number): Promise<number> {
    const torn = this.tornTail;
    this.tornTail = undefined;
    if (torn === undefined) return this.end;
    if (this.o.noTailRepair) return this.end + torn.length;
    await repairTail(this.o.ops, this.path, fd, this.end, torn, { noFsync: this.o.noFsync });
    this.tornSig = undefined;
    return this.end;
  }

  private async readRange(position: number, length: number): Promise<Buffer> {
    if (this.fd !== undefined) return readAt(this.o.ops, this.fd, position, length);
    let fd: number;
    try {
      fd = await this.o.ops.open(this.path, "r");
    } catch (err) {
      if (errnoCode(err) === "ENOENT") throw notFound(`${this.name} not found`);
      throw err;
    }
    try {
      return await readAt(this.o.ops, fd, position, length);
    } finally {
      await closeQuietly(this.o.ops, fd);
    }
  }

  private markCorrupt(line: number, offset: number, reason: string, sig: string): never {
    const error = dataLoss(`${this.name} is corrupt at line ${line} (byte ${offset}): ${reason}`);
    this.corrupt = { error, sig };
    throw error;
  }

  private keepProbe(bytes: Buffer): void {
    const joined = bytes.length >= PROBE_BYTES ? bytes : Buffer.concat([this.probe, bytes]);
    this.probe = Buffer.from(joined.subarray(Math.max(0, joined.length - PROBE_BYTES)));
  }

  /** Forgets the parsed state: the next read reloads the file from the start. */
  private forgetState(): void {
    this.log = undefined;
    this.end = 0;
    this.ino = -1;
    this.probe = EMPTY;
    this.tornSig = undefined;
    this.tornTail = undefined;
    this.corrupt = undefined;
  }

  private async dropHandle(): Promise<void> {
    const fd = this.fd;
    this.fd = undefined;
    this.fdIno = -1;
    await closeQuietly(this.o.ops, fd);
  }

  private storageError(err: unknown, doing: string): SessiondError {
    const unknown = doing === "writing" ? "; outcome unknown" : "";
    return ioError(err, `${doing} ${this.name}${unknown}`);
  }
}
