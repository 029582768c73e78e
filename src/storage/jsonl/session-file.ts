import type { Stats } from "node:fs";
import { type Context, context } from "@opentelemetry/api";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { AppendPlan } from "../../core/append-plan.js";
import { seqPages } from "../../core/erase-plan.js";
import { failedPrecondition, isSessiondError, type SessiondError } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { SessionLog } from "../../core/session-log.js";
import type {
  AppendResult,
  Planner,
  SessionKey,
  WithholdPlanner,
  WithholdResult,
} from "../engine.js";
import { inSpan, type StorageObserver, tracingEnabled } from "../observer.js";
import type { SessionSealer } from "../seal/sealed-payload.js";
import { removeCheckpoint, writeCheckpoint } from "./checkpoint.js";
import { FileState, type FileStateOptions } from "./file-state.js";
import { ioError } from "./fs-errors.js";
import { admitted, type InlineSync } from "./inline-sync.js";
import { fenceKey } from "./key-fence.js";
import { FileLease } from "./lock.js";
import { encodeRecords } from "./record.js";
import { replaceFile, rewrittenContent } from "./redact-file.js";
import type { SessionKeying } from "./session-keys.js";
import { StoredPayloads } from "./stored-payloads.js";

/**
 * One open session: its file state (file-state.ts), its write queue and
 * its cross-process lease (lock.ts).
 *
 * Appends and deletes queue up; the queue is drained in batches (group
 * commit): under the lease, catch up with the file and repair a torn tail,
 * run every queued planner against the log (each sees the previous ones
 * applied), write all planned records with one write, fdatasync once, and
 * only then acknowledge and announce. Reads and batches take turns
 * (`exclusive`), so a reader never sees entries that are not yet durable.
 */

export interface SessionFileOptions extends FileStateOptions {
  /** The engine's data dir: error messages name paths relative to it. */
  readonly dataDir: string;
  readonly staleMs: number;
  readonly leaseIdleMs: number;
  readonly lockEnabled: boolean;
  /** Called after a batch is durable, with the new head seq. */
  readonly onAppended: (headSeq: number) => void;
  /**
   * Called when an append is refused because the file is gone (NOT_FOUND),
   * before the refusal: the engine forgets the session (its cache).
   */
  readonly onGone?: () => void;
  /** Called after a redaction's rewrite is durable, with the head seq and the rewritten seqs. */
  readonly onWithheld?: (headSeq: number, seqs: readonly number[]) => void;
  /**
   * A sealed session's checkpoint (checkpoint.ts) is written when it is
   * closed with at least this many entries not covered; absent or
   * Infinity: never.
   */
  readonly checkpointAfter?: number;
  /** Negative control ONLY (T13): redaction overwrites the file in place, not copy + rename. */
  readonly redactInPlace?: boolean;
  readonly observer: StorageObserver;
}

/**
 * One queued append: its planner and how to answer it. A class (one object
 * per append, no closures) that counts itself with the engine's InlineSync
 * from arrival to its one answer.
 */
class AppendOp {
  readonly kind = "append";
  private open = true;
  /** Its plan as the answer, once planned against the log (SessionFile.commit). */
  result: AppendResult | undefined = undefined;

  constructor(
    readonly planner: Planner,
    /** The caller's trace context when tracing: a batch's spans join its first append's trace. */
    readonly trace: Context | undefined,
    private readonly sync: InlineSync | undefined,
    private readonly onResolve: (r: AppendResult) => void,
    private readonly onReject: (e: unknown) => void,
    /** Told first when the append is refused as NOT_FOUND (SessionFileOptions.onGone). */
    private readonly onGone: (() => void) | undefined,
  ) {
    sync?.arrived();
  }

  resolve(r: AppendResult): void {
    if (this.answered()) this.onResolve(r);
  }

  reject(e: unknown): void {
    if (!this.answered()) return;
    if (this.onGone !== undefined && isSessiondError(e, "NOT_FOUND")) this.onGone();
    this.onReject(e);
  }

  private answered(): boolean {
    if (!this.open) return false;
    this.open = false;
    this.sync?.answered();
    return true;
  }
}
type DeleteOp = {
  readonly kind: "delete";
  /** Delete only when the head seq (read under the lock) is still this. */
  readonly ifHeadSeq: number | undefined;
  readonly resolve: (deleted: boolean) => void;
  readonly reject: (e: unknown) => void;
};

/** One queued redaction (redact-file.ts): run alone, under the lock, like a delete. */
type WithholdOp = {
  readonly kind: "withhold";
  readonly planner: WithholdPlanner;
  /**
   * Erasure: a sealed session's data key is destroyed by this (the key
   * file replaced by a tombstone) instead of the log being rewritten.
   */
  readonly destroyKey?: () => Promise<unknown>;
  readonly resolve: (r: WithholdResult) => void;
  readonly reject: (e: unknown) => void;
};

/** The empty entries and payloads of a batch that writes nothing (never written to). */
const NO_ENTRIES: Entry[] = [];
const NO_PAYLOADS: readonly (string | undefined)[] = [];

export class SessionFile {
  private readonly state: FileState;
  private readonly lease: FileLease;
  private readonly name: string;
  private readonly queue: (AppendOp | DeleteOp | WithholdOp)[] = [];
  private draining: Promise<void> | undefined;
  /** The appended entries of the current log, kept as their payloads (stored-payloads.ts). */
  private payloads: StoredPayloads | undefined;
  private refreshing: Promise<SessionLog> | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  private turns = 0;
  /** The last seq of the checkpoint this object wrote (0: none). */
  private covered = 0;
  /** The lease's acquisitions when the key fence last passed under it (-1: not under a held lease). */
  private fencedUnder = -1;
  /** The sealer that fence was made for (a key loaded again is checked again). */
  private fencedSealer: SessionSealer | undefined;

  constructor(
    readonly key: SessionKey,
    readonly path: string,
    private readonly o: SessionFileOptions,
  ) {
    this.name = `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}`;
    this.state = new FileState(key, path, this.name, o);
    this.lease = new FileLease(path, {
      staleMs: o.staleMs,
      idleMs: o.leaseIdleMs,
      enabled: o.lockEnabled,
    });
  }

  /** True when nothing is queued, running or locked: the cache may drop this object. */
  get evictable(): boolean {
    return (
      this.queue.length === 0 && this.draining === undefined && this.turns === 0 && !this.lease.held
    );
  }

  /** The readable prefix after a DATA_LOSS (for listings). */
  get prefix(): SessionLog | undefined {
    return this.state.prefix;
  }

  /** The log if it is the whole of the file `st` describes (FileState.logOf); only once closed. */
  logOf(st: Stats): SessionLog | undefined {
    return this.draining === undefined && this.turns === 0 ? this.state.logOf(st) : undefined;
  }

  /** Installs the state of a file this process has just created with `content`. */
  seed(log: SessionLog, content: Buffer, st: Stats, keying?: SessionKeying): void {
    this.state.seed(log, content, st, keying);
  }

  /** The log caught up with the file; concurrent callers share one catch-up. */
  load(): Promise<SessionLog> {
    this.refreshing ??= this.exclusive(() =>
      this.state.read().catch((err: unknown) => {
        throw this.error(err, "reading");
      }),
    ).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  append(planner: Planner): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      const trace = tracingEnabled() ? context.active() : undefined;
      this.enqueue(new AppendOp(planner, trace, this.o.inlineSync, resolve, reject, this.o.onGone));
    });
  }

  /**
   * Deletes the file under the lock, after the appends queued before it;
   * with `ifHeadSeq`, only when the log (caught up under the lock) still
   * ends there.
   */
  remove(ifHeadSeq?: number): Promise<boolean> {
    return new Promise((resolve, reject) =>
      this.enqueue({ kind: "delete", ifHeadSeq, ...admitted(this.o.inlineSync, resolve, reject) }),
    );
  }

  /**
   * Waits for queued work, writes a sealed session's checkpoint when due,
   * then releases the lease and the handle.
   */
  async close(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
    await this.exclusive(async () => {
      await this.checkpoint();
      await this.lease.release();
      await this.state.closeHandle();
    });
  }

  /**
   * On close (engine close, eviction): the checkpoint of a sealed session
   * (checkpoint.ts) written again when at least `checkpointAfter` entries
   * of its log are not covered by the one read or written. Under the
   * session's turn and lease (taken without waiting for another process:
   * then no checkpoint), after the key fence (an erased session gets none).
   * A cache: a failure is only a slower cold read, never the close's.
   */
  private async checkpoint(): Promise<void> {
    const sealer = this.state.sealer;
    const log = this.state.loaded;
    const after = this.o.checkpointAfter;
    if (sealer === undefined || log === undefined || after === undefined) return;
    if (!Number.isFinite(after)) return;
    const covered = Math.max(this.covered, this.state.checkpointed);
    if (log.headSeq - covered < Math.max(1, after)) return;
    try {
      await this.lease.acquire(0);
      await fenceKey(this.o.ops, sealer, this.name);
      this.checkLease();
      this.covered = (await writeCheckpoint(this.o.ops, this.path, this.key, sealer)).covered;
    } catch {
      // No checkpoint this time: cold reads open entry by entry.
    }
  }

  /**
   * Redaction: after the appends queued before it, under the lock, the
   * planned entries' records are replaced by a rewrite of the file
   * (redact-file.ts); the cached log follows (SessionLog.replaceAll: every
   * holder of it reads the new form) and the state is dropped, so the
   * file is read again from its new inode.
   */
  withhold(planner: WithholdPlanner): Promise<WithholdResult> {
    return new Promise((resolve, reject) =>
      this.enqueue({ kind: "withhold", planner, ...admitted(this.o.inlineSync, resolve, reject) }),
    );
  }

  /**
   * Erasure (core/erase-plan.ts): like `withhold` with `planner`, except
   * that a sealed session is not rewritten: `destroyKey` replaces its key
   * file by a tombstone, the state is read again (its sealed records now
   * read as erased), and the cached log takes that form.
   */
  erase(planner: WithholdPlanner, destroyKey: () => Promise<unknown>): Promise<WithholdResult> {
    return new Promise((resolve, reject) =>
      this.enqueue({
        kind: "withhold",
        planner,
        destroyKey,
        ...admitted(this.o.inlineSync, resolve, reject),
      }),
    );
  }

  private enqueue(op: AppendOp | DeleteOp | WithholdOp): void {
    this.queue.push(op);
    this.startDrain();
  }

  /**
   * Starts draining unless a drain runs. The drain gives up `draining` in
   * the same synchronous step in which it finds the queue empty, so an op
   * queued after that starts a drain of its own and never waits unseen.
   */
  private startDrain(): void {
    if (this.draining === undefined) this.draining = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      // One turn first: the appends of the same burst (say, the requests of
      // one socket read) are queued by then and go out in one write.
      await undefined;
      while (this.queue.length > 0) {
        if (this.lease.handOverDue()) await this.lease.handOverIfWanted().catch(() => undefined);
        const first = this.queue[0] as AppendOp | DeleteOp | WithholdOp;
        if (first.kind === "delete") {
          this.queue.shift();
          await this.runDelete(first);
          continue;
        }
        if (first.kind === "withhold") {
          this.queue.shift();
          await this.runWithhold(first);
          continue;
        }
        const stop = this.queue.findIndex((op) => op.kind !== "append");
        const batch = (stop < 0 ? this.queue.splice(0) : this.queue.splice(0, stop)) as AppendOp[];
        const trace = (first as AppendOp).trace;
        await (trace === undefined
          ? this.runBatch(batch)
          : context.with(trace, () => this.runBatch(batch)));
      }
    } finally {
      this.draining = undefined;
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

  private runBatch(batch: AppendOp[]): Promise<void> {
    // A lease held from the previous batch and nothing else running: the
    // batch takes its turn at once (no wait, no span for the lock), and a
    // read that comes meanwhile waits for it (`turn`).
    if (this.turns === 0 && this.lease.ready()) {
      this.o.observer.lockWaited(0);
      this.turns++;
      const run = this.commit(batch, true);
      this.turn = run;
      return run;
    }
    return this.runBatchSlow(batch);
  }

  private async runBatchSlow(batch: AppendOp[]): Promise<void> {
    const lease = this.lease;
    if (lease.ready()) this.o.observer.lockWaited(0);
    else {
      const start = performance.now();
      try {
        await inSpan("jsonl.lock", () => lease.acquire());
        this.o.observer.lockWaited((performance.now() - start) / 1000);
      } catch (err) {
        const error = this.error(err, "locking");
        for (const op of batch) op.reject(error);
        return;
      }
    }
    await this.exclusive(() => this.commit(batch, false));
  }

  /**
   * Whether the last key fence (key-fence.ts) still holds: it passed under
   * this very holding of the lock, which an erasure by another process
   * would have had to take from us. A lock taken again (after an idle
   * release, a wait, a lost lease) is checked again.
   */
  private fenceHolds(): boolean {
    return (
      this.fencedUnder >= 0 &&
      this.fencedSealer === this.state.sealer &&
      this.lease.held &&
      this.lease.lost === undefined &&
      this.lease.acquisitions === this.fencedUnder
    );
  }

  /**
   * Catch up, plan every request, write once, fdatasync once, then
   * acknowledge. Never rejects: each op is answered, one way or the other
   * (AppendOp answers once). `ownTurn`: the batch took its turn itself
   * (runBatch) and gives it back here.
   */
  private async commit(batch: AppendOp[], ownTurn: boolean): Promise<void> {
    try {
      let log: SessionLog;
      let writeAt: number | undefined = this.state.writeOffsetNow();
      if (writeAt !== undefined) log = this.state.current;
      else {
        try {
          ({ log, writeAt } = await this.state.prepareWrite());
        } catch (err) {
          for (const op of batch) op.reject(this.error(err, "reading"));
          return;
        }
      }
      if (this.state.erased !== undefined) {
        // Its data key is destroyed: a record written now could be neither sealed nor read as it was.
        const err = failedPrecondition(
          `session ${quote(this.key.sessionId)} in workspace ${quote(this.key.workspace)} was erased: it takes no more entries`,
        );
        for (const op of batch) op.reject(err);
        return;
      }
      if (this.state.sealer !== undefined && !this.fenceHolds()) {
        // Another process may have erased it (its key file replaced by a
        // tombstone) since this one loaded the key: one stat, under the lease
        // an erasure also takes (key-fence.ts).
        try {
          await fenceKey(this.o.ops, this.state.sealer, this.name);
          this.fencedUnder = this.lease.held ? this.lease.acquisitions : -1;
          this.fencedSealer = this.state.sealer;
        } catch (err) {
          await this.state.reset();
          for (const op of batch) op.reject(err);
          return;
        }
      }
      // The entries to write and their payloads: the first plan's own
      // arrays while it is the only one with entries (the usual batch of
      // one append), copies once a second one has some too.
      let entries: Entry[] = NO_ENTRIES;
      let payloads: readonly (string | undefined)[] = NO_PAYLOADS;
      let own = false;
      let planned = 0;
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
        const write = plan.write;
        if (write.length > 0 && entries.length === 0) {
          entries = write;
          payloads = plan.json ?? NO_PAYLOADS;
        } else if (write.length > 0) {
          if (!own) {
            const first = payloads;
            entries = entries.slice();
            payloads = entries.map((_, i) => first[i]);
            own = true;
          }
          for (let i = 0; i < write.length; i++) {
            entries.push(write[i] as Entry);
            (payloads as (string | undefined)[]).push(plan.json?.[i]);
          }
        }
        // The plan becomes the result: it is this append's own object.
        const result = plan as AppendResult;
        result.headSeq = log.headSeq;
        result.leafId = log.leafId;
        op.result = result;
        planned++;
      }
      const texts: string[] = new Array(entries.length);
      if (entries.length > 0) {
        try {
          this.checkLease();
          const bytes = encodeRecords(entries, payloads, texts, this.state.sealer);
          if (tracingEnabled()) {
            await inSpan("jsonl.write", async (span) => {
              span.setAttribute("sessiond.batch.appends", planned);
              span.setAttribute("sessiond.batch.entries", entries.length);
              await this.state.writeDurably(bytes, writeAt as number);
            });
          } else {
            // Nothing to wait for when the write is done already (no sync).
            const writing = this.state.writeDurably(bytes, writeAt);
            if (writing !== undefined) await writing;
          }
          this.checkLease();
          this.o.observer.committed(planned, entries.length, bytes.length);
          // Durable: the log keeps the entries as their payloads from here on.
          if (this.payloads?.log !== log) this.payloads = new StoredPayloads(log, this.name);
          const first = Number((entries[0] as Entry).seq);
          for (let i = 0; i < entries.length; i++) {
            this.payloads.keep(first + i, texts[i] as string);
          }
        } catch (err) {
          // Outcome unknown: the bytes may or may not be in the file, which is the truth.
          await this.state.reset();
          const error = this.error(err, "writing");
          for (const op of batch) if (op.result !== undefined) op.reject(error);
          return;
        }
      }
      for (const op of batch) if (op.result !== undefined) op.resolve(op.result);
      if (entries.length > 0) this.o.onAppended(log.headSeq);
    } catch (err) {
      // Not reached (every op is answered above); should it be, no op waits forever.
      for (const op of batch) op.reject(err);
    } finally {
      if (ownTurn) this.turns--;
    }
  }

  /** A lease lost while writing means another process may have written too. */
  private checkLease(): void {
    const lost = this.lease.lost;
    if (lost !== undefined) throw lost;
  }

  private async runDelete(op: DeleteOp): Promise<void> {
    try {
      await this.lease.acquire();
      op.resolve(
        await this.exclusive(async () => {
          if (op.ifHeadSeq !== undefined && (await this.state.read()).headSeq !== op.ifHeadSeq) {
            return false;
          }
          return this.state.unlink();
        }),
      );
    } catch (err) {
      op.reject(this.error(err, "deleting"));
    } finally {
      await this.lease.release();
      await this.lease.forget();
    }
  }

  private async runWithhold(op: WithholdOp): Promise<void> {
    try {
      await this.lease.acquire();
    } catch (err) {
      op.reject(this.error(err, "locking"));
      return;
    }
    try {
      op.resolve(await this.exclusive(() => this.rewrite(op.planner, op.destroyKey)));
    } catch (err) {
      op.reject(this.error(err, "redacting"));
    }
  }

  private async rewrite(
    planner: WithholdPlanner,
    destroyKey?: () => Promise<unknown>,
  ): Promise<WithholdResult> {
    const { log, bytes } = await this.state.prepareRewrite();
    if (destroyKey !== undefined && this.state.sealer !== undefined) {
      return this.destroyKey(log, destroyKey);
    }
    const plan = planner(log);
    const result = { ...plan, headSeq: log.headSeq };
    if (plan.changed.length === 0) return result;
    const content = rewrittenContent(
      bytes,
      new Map(plan.changed.map((e) => [Number(e.seq), e])),
      this.name,
      this.state.sealer,
    );
    this.checkLease();
    // No copy of what is purged may stay: the checkpoint goes first (durably).
    if (this.state.sealer !== undefined) await this.dropCheckpoint();
    try {
      await replaceFile(this.o.ops, this.path, content, {
        sessionId: this.key.sessionId,
        noFsync: this.o.noFsync,
        inPlace: this.o.redactInPlace,
      });
      this.checkLease();
    } finally {
      // Whatever happened, the file is the truth: read it again from its (new) inode.
      await this.state.reset();
      this.payloads = undefined;
    }
    // Holders of the log (readers, the store's caches) see the new form at once.
    log.replaceAll(plan.changed);
    // In pages (an erasure of a large session changes every entry): each a watch event of its own.
    for (const page of seqPages(plan.changed.map((e) => Number(e.seq)))) {
      this.o.onWithheld?.(log.headSeq, page);
    }
    return result;
  }

  /** Erasure of a sealed session: the key destroyed, then every holder of the log sees what the file now reads as. */
  private async destroyKey(
    log: SessionLog,
    destroyKey: () => Promise<unknown>,
  ): Promise<WithholdResult> {
    this.checkLease();
    await this.dropCheckpoint();
    try {
      await destroyKey();
    } finally {
      await this.state.reset();
      this.payloads = undefined;
    }
    const now = (await this.state.prepareRewrite()).log;
    const changed: Entry[] = [];
    const entries: Entry[] = [];
    for (const e of now.slice(0)) {
      if (e.withheld === undefined) continue;
      entries.push(e);
      if (log.get(e.id)?.withheld === undefined) changed.push(e);
    }
    if (now !== log) log.replaceAll(changed);
    const seqs = changed.map((e) => Number(e.seq));
    for (const page of seqPages(seqs)) this.o.onWithheld?.(log.headSeq, page);
    return { entries, changed, headSeq: log.headSeq };
  }

  /** The session's checkpoint deleted, durably, before its content is purged. */
  private async dropCheckpoint(): Promise<void> {
    await removeCheckpoint(this.o.ops, this.path, this.key.sessionId, this.o.noFsync);
    this.covered = 0;
  }

  private error(err: unknown, doing: string): SessiondError {
    const note = doing === "writing" ? "outcome unknown" : undefined;
    return ioError(err, `${doing} ${this.name}`, this.o.dataDir, note);
  }
}
