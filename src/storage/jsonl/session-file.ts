import type { Stats } from "node:fs";
import { type Context, context } from "@opentelemetry/api";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { AppendPlan } from "../../core/append-plan.js";
import type { SessiondError } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { SessionLog } from "../../core/session-log.js";
import type { AppendResult, Planner, SessionKey } from "../engine.js";
import { inSpan, type StorageObserver } from "../observer.js";
import { FileState, type FileStateOptions } from "./file-state.js";
import { ioError } from "./fs-errors.js";
import { admitted } from "./inline-sync.js";
import { FileLease } from "./lock.js";
import { encodeRecords } from "./record.js";

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
  readonly observer: StorageObserver;
}

type AppendOp = {
  readonly kind: "append";
  readonly planner: Planner;
  /** The trace context of the caller: a batch's spans join its first append's trace. */
  readonly trace: Context;
  readonly resolve: (r: AppendResult) => void;
  readonly reject: (e: unknown) => void;
};
type DeleteOp = {
  readonly kind: "delete";
  /** Delete only when the head seq (read under the lock) is still this. */
  readonly ifHeadSeq: number | undefined;
  readonly resolve: (deleted: boolean) => void;
  readonly reject: (e: unknown) => void;
};

export class SessionFile {
  private readonly state: FileState;
  private readonly lease: FileLease;
  private readonly name: string;
  private readonly queue: (AppendOp | DeleteOp)[] = [];
  private draining: Promise<void> | undefined;
  private refreshing: Promise<SessionLog> | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  private turns = 0;

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
  seed(log: SessionLog, content: Buffer, st: Stats): void {
    this.state.seed(log, content, st);
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
      const answer = admitted(this.o.inlineSync, resolve, reject);
      this.enqueue({ kind: "append", planner, trace: context.active(), ...answer });
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

  /** Waits for queued work, then releases the lease and the handle. */
  async close(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
    await this.exclusive(async () => {
      await this.lease.release();
      await this.state.closeHandle();
    });
  }

  private enqueue(op: AppendOp | DeleteOp): void {
    this.queue.push(op);
    this.startDrain();
  }

  /**
   * Starts draining unless a drain runs. An op queued after the running
   * drain saw an empty queue but before its promise settled would
   * otherwise wait forever: the drain that ends checks the queue again.
   */
  private startDrain(): void {
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      if (this.queue.length > 0) this.startDrain();
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
      await context.with((first as AppendOp).trace, () => this.runBatch(batch));
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
    const start = performance.now();
    try {
      await inSpan("jsonl.lock", () => this.lease.acquire());
      this.o.observer.lockWaited((performance.now() - start) / 1000);
    } catch (err) {
      const error = this.error(err, "locking");
      for (const op of batch) op.reject(error);
      return;
    }
    await this.exclusive(() => this.commit(batch));
  }

  /** Catch up, plan every request, write once, fdatasync once, then acknowledge. */
  private async commit(batch: AppendOp[]): Promise<void> {
    let log: SessionLog;
    let writeAt: number;
    try {
      ({ log, writeAt } = await this.state.prepareWrite());
    } catch (err) {
      for (const op of batch) op.reject(this.error(err, "reading"));
      return;
    }
    const planned: { op: AppendOp; result: AppendResult }[] = [];
    const entries: Entry[] = [];
    const payloads: (string | undefined)[] = [];
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
      for (let i = 0; i < plan.write.length; i++) payloads.push(plan.json?.[i]);
      planned.push({ op, result: { ...plan, headSeq: log.headSeq, leafId: log.leafId } });
    }
    if (entries.length > 0) {
      try {
        this.checkLease();
        const bytes = encodeRecords(entries, payloads);
        await inSpan("jsonl.write", (span) => {
          span.setAttribute("sessiond.batch.appends", planned.length);
          span.setAttribute("sessiond.batch.entries", entries.length);
          return this.state.writeDurably(bytes, writeAt);
        });
        this.checkLease();
        this.o.observer.committed(planned.length, entries.length, bytes.length);
      } catch (err) {
        // Outcome unknown: the bytes may or may not be in the file, which is the truth.
        await this.state.reset();
        const error = this.error(err, "writing");
        for (const { op } of planned) op.reject(error);
        return;
      }
    }
    for (const { op, result } of planned) op.resolve(result);
    if (entries.length > 0) this.o.onAppended(log.headSeq);
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

  private error(err: unknown, doing: string): SessiondError {
    const note = doing === "writing" ? "outcome unknown" : undefined;
    return ioError(err, `${doing} ${this.name}`, this.o.dataDir, note);
  }
}
