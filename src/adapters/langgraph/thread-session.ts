import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Entry,
  type EntryInit,
  EntrySchema,
  type SessiondClient,
} from "../../client/index.js";
import type { ThreadEntry } from "./thread-entries.js";
import { ThreadLog } from "./thread-log.js";

/** An entry a write plans, with what it means to the saver. */
export interface PlannedEntry {
  init: EntryInit;
  meaning: ThreadEntry;
}

type RunOp = {
  kind: "run";
  work: () => Promise<unknown>;
  resolve(v: unknown): void;
  reject(e: unknown): void;
};
type WriteOp = {
  kind: "write";
  plan: (log: ThreadLog) => PlannedEntry[];
  after?: ((log: ThreadLog) => void) | undefined;
  resolve(v: unknown): void;
  reject(e: unknown): void;
};
type Op = RunOp | WriteOp;

/** Tag keys on a thread's session: find LangGraph threads, and a thread by its id. */
export const KIND_TAG = "langgraph.kind";
export const THREAD_TAG = "langgraph.thread";
/** The root's metadata key holding the thread id. */
const THREAD_KEY = "langgraph_thread";

/**
 * The session a thread is kept in: `lg-` and 40 hex digits of the
 * SHA-256 of the thread id. Any thread id fits, and no such id is a
 * prefix of another session's (the server resolves unique prefixes).
 */
export function threadSessionId(threadId: string): string {
  return `lg-${createHash("sha256").update(threadId).digest("hex").slice(0, 40)}`;
}

/**
 * The refusal of a write planned against a thread that another writer
 * (another process, another saver) has written since this saver last read
 * it: nothing was written. Two runs of one thread would otherwise both
 * "succeed" and fork its checkpoints silently. Read the thread again
 * (`getTuple`, `graph.getState`) and run again.
 */
export class CheckpointConflictError extends Error {
  override readonly name = "CheckpointConflictError";
  constructor(
    readonly threadId: string,
    readonly sessionId: string,
    readonly readAtSeq: number,
    detail: string,
  ) {
    super(
      `LangGraph thread ${JSON.stringify(threadId)} (sessiond session ${sessionId}) was written by another writer since this saver read it at seq ${readAtSeq}; nothing was written. Read the thread again (getTuple / getState) and run again. (${detail})`,
    );
  }
}

/**
 * One thread's session on the server and its mirror here. Writes go with
 * `expected_seq` = the head seq of the mirror, and the mirror moves only
 * by this saver's own writes and by reads (`read`): so a write fails with
 * CheckpointConflictError when another writer appended after the last
 * read, and after such a failure every write fails until the thread is
 * read again.
 */
export class ThreadSession {
  readonly sessionId: string;
  log = new ThreadLog();
  /** Whether the mirror has been read since it was made (or the session was deleted). */
  private known = false;
  private exists = false;
  private conflicted: CheckpointConflictError | undefined;
  private readonly ops: Op[] = [];
  private draining = false;

  constructor(
    private readonly client: SessiondClient,
    private readonly workspace: string,
    readonly threadId: string,
    private readonly cas = true,
  ) {
    this.sessionId = threadSessionId(threadId);
  }

  /** Catches the mirror up with the server; false when the thread has no session. */
  async read(): Promise<boolean> {
    this.conflicted = undefined;
    if (!this.known) this.log = new ThreadLog();
    for (;;) {
      let page: Awaited<ReturnType<SessiondClient["session"]["getEntries"]>>;
      try {
        page = await this.client.session.getEntries({
          workspace: this.workspace,
          session: this.sessionId,
          afterSeq: BigInt(this.log.headSeq),
        });
      } catch (err) {
        if (ConnectError.from(err).code !== Code.NotFound) throw err;
        this.forget(true);
        return false;
      }
      if (Number(page.headSeq) < this.log.headSeq) {
        this.log = new ThreadLog();
        continue;
      }
      if (this.log.headSeq === 0) this.checkRoot(page.entries[0]);
      this.log.applyAll(page.entries);
      this.known = true;
      this.exists = true;
      if (page.entries.length === 0 || this.log.headSeq >= Number(page.headSeq)) return true;
    }
  }

  /** The session exists (created here when it does not) and the mirror has been read. */
  private async ready(): Promise<void> {
    if (this.conflicted !== undefined) throw this.conflicted;
    if (!this.known) await this.read();
    if (this.exists) return;
    const title = `LangGraph thread ${this.threadId}`;
    const res = await this.client.store.createSession({
      workspace: this.workspace,
      sessionId: this.sessionId,
      title,
      tags: { [KIND_TAG]: "thread", [THREAD_TAG]: this.threadId },
      metadata: { [THREAD_KEY]: this.threadId },
    });
    await this.read();
    if (!res.created && this.log.headSeq > 1) {
      throw this.conflict(0, "the thread was created and written by another writer meanwhile");
    }
  }

  /** Runs `work` alone, after every operation submitted before it (a read, a delete). */
  run<T>(work: () => Promise<T>): Promise<T> {
    return this.submit({ kind: "run", work });
  }

  /**
   * Appends what `plan` makes of the log (as it will be after the writes
   * submitted before), after them. Writes submitted while an Append is in
   * flight (or in the same turn of the event loop) go out together in the
   * next one: a step's writes and the checkpoint after it, called at once
   * by LangGraph, cost one round trip.
   */
  write(plan: (log: ThreadLog) => PlannedEntry[], after?: (log: ThreadLog) => void): Promise<void> {
    return this.submit({ kind: "write", plan, after });
  }

  /** Whether operations are waiting or running (the saver keeps such a thread's mirror). */
  get busy(): boolean {
    return this.draining;
  }

  private submit<T>(
    op: Omit<RunOp, "resolve" | "reject"> | Omit<WriteOp, "resolve" | "reject">,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.ops.push({ ...op, resolve, reject } as Op);
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.ops.length > 0) {
      const head = this.ops[0] as Op;
      if (head.kind === "run") {
        this.ops.shift();
        await head.work().then(head.resolve, head.reject);
        continue;
      }
      const batch: WriteOp[] = [];
      while (this.ops[0]?.kind === "write") batch.push(this.ops.shift() as WriteOp);
      await this.writeBatch(batch);
    }
    this.draining = false;
  }

  private async writeBatch(batch: WriteOp[]): Promise<void> {
    try {
      await this.ready();
    } catch (err) {
      for (const op of batch) op.reject(err);
      return;
    }
    const planned: WriteOp[] = [];
    const made: { entry: Entry; meaning: ThreadEntry }[] = [];
    for (const op of batch) {
      try {
        for (const p of op.plan(this.log)) {
          const entry = create(EntrySchema, p.init);
          // The log answers later plans of the batch as if this one were stored.
          this.log.apply(entry, p.meaning);
          made.push({ entry, meaning: p.meaning });
        }
        op.after?.(this.log);
        planned.push(op);
      } catch (err) {
        op.reject(err);
      }
    }
    try {
      if (made.length > 0) await this.append(made.map((m) => m.entry));
      for (const op of planned) op.resolve(undefined);
    } catch (err) {
      for (const op of planned) op.reject(err);
    }
  }

  /** Appends entries the log already holds, with expected_seq = its head. */
  private async append(entries: Entry[]): Promise<void> {
    if (this.conflicted !== undefined) throw this.conflicted;
    const expected = this.log.headSeq;
    let res: Awaited<ReturnType<SessiondClient["session"]["append"]>>;
    try {
      res = await this.client.session.append({
        workspace: this.workspace,
        session: this.sessionId,
        entries,
        expectedSeq: this.cas ? BigInt(expected) : undefined,
      });
    } catch (err) {
      // The log holds entries that may not be stored: read it afresh before anything else.
      this.forget(false);
      if (ConnectError.from(err).code === Code.Aborted) {
        this.conflicted = this.conflict(expected, ConnectError.from(err).rawMessage);
        throw this.conflicted;
      }
      throw err;
    }
    if (res.deduplicated || Number(res.headSeq) !== expected + entries.length) {
      this.forget(false);
      await this.read();
      return;
    }
    this.log.headSeq = Number(res.headSeq);
  }

  /** Deletes the session (and whatever this mirror held). */
  async delete(): Promise<void> {
    try {
      await this.client.store.deleteSession({ workspace: this.workspace, session: this.sessionId });
    } catch (err) {
      if (ConnectError.from(err).code !== Code.NotFound) throw err;
    }
    this.forget(true);
  }

  private forget(known: boolean): void {
    this.log = new ThreadLog();
    this.known = known;
    this.exists = false;
  }

  private conflict(readAt: number, detail: string): CheckpointConflictError {
    return new CheckpointConflictError(this.threadId, this.sessionId, readAt, detail);
  }

  /** Refuses a session under the thread's id that is not this thread's. */
  private checkRoot(root: import("../../client/index.js").Entry | undefined): void {
    const info = root?.kind.case === "sessionInfo" ? root.kind.value : undefined;
    if (info?.sessionId === this.sessionId && info.metadata?.[THREAD_KEY] === this.threadId) return;
    throw new ConnectError(
      `sessiond session ${this.sessionId} exists and is not LangGraph thread ${JSON.stringify(this.threadId)}`,
      Code.FailedPrecondition,
    );
  }
}
