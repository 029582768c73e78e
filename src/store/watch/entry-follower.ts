import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { invalidArgument, notFound } from "../../core/errors.js";
import { checkSessionId, checkWorkspace, quote } from "../../core/ids.js";
import type { SessionKey, StorageEngine } from "../../storage/engine.js";
import type { EventHub } from "./event-hub.js";
import type { Quiet, QuietClock } from "./quiet-clock.js";
import type { SessionTail, WithheldNotice } from "./session-tail.js";

/** The entries loop's inputs, every default applied (see StoreWatch). */
export interface EntriesLoop {
  readonly engine: StorageEngine;
  readonly hub: EventHub;
  readonly key: SessionKey;
  readonly afterSeq: number;
  readonly signal: AbortSignal;
  readonly heartbeatMs: number;
  readonly pageSize: number;
  readonly noSubscribeFirst: boolean;
}

/** Where a watch of one session sends what it has, as soon as it has it (see EntryFollower). */
export interface EntrySink {
  /** The next entry: in seq order, each once. Returning false pauses the watch until `resume`. */
  entry(entry: Entry): boolean;
  /** Caught up to `headSeq`, the session's head when it was sent. False pauses it too. */
  heartbeat(headSeq: number): boolean;
  /**
   * Entries already sent were redacted: `entries` as they now read. Sent
   * after every entry up to `headSeq` (the head when they were redacted)
   * and before any later one. False pauses it too.
   */
  withheld(entries: readonly Entry[], headSeq: number): boolean;
  /** The watch ended with this error. Never called after `close`, nor twice. */
  end(err: unknown): void;
}

/**
 * A watch of one session that pushes to a sink instead of being pulled: an
 * idle watch is this one object, a place in its session's tail and in its
 * heartbeat clock, with no parked generator, promise or timer (a server
 * holds thousands). The rules are watchEntries' (watch-entries.ts), step
 * for step: subscribe FIRST, then replay from the log by seq, then follow
 * wake-ups from the hub's tail (one read per append for all watchers), with
 * a heartbeat after the replay and after every quiet interval, each of
 * which re-reads the log (appends by other processes). `last` drops
 * anything already sent, so each entry goes out exactly once, in order. A
 * sink that returns false holds the watch where it is, with at most the
 * rest of one page in memory, until `resume`. A deleted session ends it with
 * NOT_FOUND (thrown by the read), and so does one deleted and created again
 * between two reads (its head is then below `last`). A sink that throws
 * ends its own watch with that error. An abort (the loop's
 * signal, or `abort`) ends it with its reason once it is caught up, as
 * before each wait for a wake-up.
 */
export class EntryFollower implements Quiet {
  quietTicks = 0;
  idle = false;
  private last: number;
  private beat = true;
  /** A wake-up came while busy: look again before waiting (nothing falls between replay and live). */
  private notified = false;
  /** The sink said stop: `resume` goes on with the page, or waits when `page` is undefined. */
  // Stryker disable next-line BooleanLiteral: only resume() reads it before the first pause, and a resume then only re-enters wait(): deliveries stay once and in order (the seq guard in deliver)
  private paused = false;
  private page: Entry[] | undefined;
  private index = 0;
  private aborted = false;
  private reason: unknown;
  private ended = false;
  private key: SessionKey | undefined;
  private tail: SessionTail | undefined;
  private leave: (() => void) | undefined;
  private clock: QuietClock | undefined;
  /** Redactions told by the hub, in order, not sent yet (each goes once `last` reaches its head). */
  private readonly pending: WithheldNotice[] = [];

  constructor(
    private readonly loop: EntriesLoop,
    private readonly sink: EntrySink,
  ) {
    this.last = loop.afterSeq;
  }

  /** Starts the watch; every refusal (a malformed key included) reaches the sink's `end`. */
  start(): void {
    const { signal } = this.loop;
    if (signal.aborted) this.abort(signal.reason);
    else signal.addEventListener("abort", this.onAbort);
    this.begin().catch(this.fail);
  }

  /** Goes on after the sink returned false. */
  resume(): void {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: a resume outside a pause only re-enters wait() (ended: it returns; busy or idle: marked idle), which changes no delivery: entries go out once and in order either way
    if (!this.paused || this.ended) return;
    // Stryker disable next-line BooleanLiteral: a pause flag left set is only read by resume(), whose extra wait() changes no delivery (see above)
    this.paused = false;
    if (this.page !== undefined) this.deliver();
    else this.wait();
  }

  /** Ends the watch with `reason` once it is caught up (at once when it is waiting). */
  abort(reason: unknown): void {
    if (this.ended || this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    if (this.idle) this.fail(reason);
  }

  /** Ends the watch silently: it leaves its tail and clock, and the sink hears nothing more. */
  close(): void {
    // Stryker disable next-line ConditionalExpression: a second close repeats steps that are idempotent (flags, removing the listener, leaving the tail: a Set delete, removing the clock entry)
    if (this.ended) return;
    this.ended = true;
    // Stryker disable next-line BooleanLiteral: an ended watch ignores wake-ups and aborts (the ended guards), idle or not
    this.idle = false;
    this.page = undefined;
    // Stryker disable next-line StringLiteral: a listener left on the signal finds the watch ended and does nothing; removing it frees memory only
    this.loop.signal.removeEventListener("abort", this.onAbort);
    this.leave?.();
    this.clock?.delete(this);
  }

  /** The hub's wake-up: the tail holds the session's newest entries. */
  readonly notify = (): void => {
    // Busy (reading, sending, paused) or closed: looked at when it next waits.
    if (!this.idle) {
      this.notified = true;
      return;
    }
    this.idle = false;
    this.beat = false;
    this.fetch(true);
  };

  /** The hub's word of a redaction: sent in order with the entries (see EntrySink.withheld). */
  readonly onWithheld = (notice: WithheldNotice): void => {
    // Stryker disable next-line ConditionalExpression: close() clears idle, so an ended watch returns at the idle test below all the same, and nothing reads its pending list again
    if (this.ended) return;
    this.pending.push(notice);
    if (!this.idle) return; // busy: sent as it delivers or before it next waits
    // Stryker disable next-line BooleanLiteral: a watch left marked idle during this read may start a second read on a wake-up; deliver's seq guard and the pending list's shift send each entry and each redaction once and in order either way (cost only)
    this.idle = false;
    if (this.last < notice.headSeq) this.fetch(false);
    else this.wait();
  };

  /**
   * Sends the pending redactions whose head `last` has reached; false when
   * the sink said stop (paused) or the watch ended. Nothing pending: true at
   * once (called before each entry, so kept to one test then).
   */
  private flushWithheld(): boolean {
    while (this.pending.length > 0) {
      const n = this.pending[0] as WithheldNotice;
      if (n.headSeq > this.last) return true;
      this.pending.shift();
      let more: boolean;
      try {
        more = this.sink.withheld(n.entries, n.headSeq);
      } catch (err) {
        this.fail(err);
        return false;
      }
      if (this.ended) return false;
      if (!more) {
        this.paused = true;
        return false;
      }
    }
    return true;
  }

  /** The clock's: a quiet interval passed while waiting. */
  quietFor(): void {
    // Stryker disable next-line BooleanLiteral: a watch left marked idle during its quiet re-read may start a second read on a wake-up; deliver's seq guard sends each entry once and in order either way (cost only)
    this.idle = false;
    // The negative control never re-reads: it only says it is alive.
    if (this.loop.noSubscribeFirst) {
      this.beatThenWait();
      return;
    }
    this.beat = true;
    this.fetch(false);
  }

  private readonly onAbort = (): void => this.abort(this.loop.signal.reason);

  private readonly fail = (err: unknown): void => {
    if (this.ended) return;
    this.close();
    this.sink.end(err);
  };

  private async begin(): Promise<void> {
    const { engine, hub, pageSize } = this.loop;
    // Checked here, so a malformed key ends the watch rather than the call that made it.
    const key = {
      workspace: checkWorkspace(this.loop.key.workspace),
      sessionId: checkSessionId(this.loop.key.sessionId),
    };
    const after = this.loop.afterSeq;
    if (after < 0 || !Number.isSafeInteger(after)) {
      throw invalidArgument(`after_seq ${after} is out of range`);
    }
    this.key = key;
    const replayed = this.loop.noSubscribeFirst
      ? await engine.read(key, after, pageSize)
      : undefined;
    // Stryker disable next-line ConditionalExpression: the negative control's path only (noSubscribeFirst), closed during its replay read; the read after it is guarded the same way and tested
    if (this.ended) return;
    const { tail, stop } = hub.watch(key, this.notify, this.onWithheld);
    this.tail = tail;
    this.leave = stop;
    this.clock = hub.clock(this.loop.heartbeatMs);
    this.clock.add(this);
    // The first read (subscribed already, unless late) checks the caller's cursor.
    const page = replayed ?? (await engine.read(key, after, pageSize));
    if (this.ended) return;
    if (after > page.headSeq) {
      throw invalidArgument(
        `after_seq ${after} is beyond the head seq ${page.headSeq} of session ${quote(key.sessionId)}`,
      );
    }
    this.startPage(page.entries);
  }

  /**
   * The next page: after a wake-up, from the hub's tail when it reaches back
   * to `last`; otherwise (a full page before, a quiet interval, a tail that
   * does not reach back) from the log.
   */
  private fetch(fromTail: boolean): void {
    const key = this.key as SessionKey;
    // Stryker disable next-line OptionalChaining: a wake-up reaches the follower only through the tail it was given with it, so the tail is always set here
    const sliced = fromTail ? this.tail?.slice(this.last, this.loop.pageSize) : undefined;
    if (sliced !== undefined) {
      this.startPage(sliced.entries);
      return;
    }
    const sent = this.last;
    this.loop.engine.read(key, sent, this.loop.pageSize).then((page) => {
      if (this.ended) return;
      // The log's head below what was sent: the session was deleted and made
      // again with the same id between two reads (no event told of it, or the
      // wake-up came late). Its entries are not the ones watched; a tail slice
      // is only behind, not another log, so it is not asked.
      if (page.headSeq < sent) {
        this.fail(
          notFound(
            `session ${quote(key.sessionId)} was deleted and created again while watched (head seq ${page.headSeq}, ${sent} sent); watch it anew from 0`,
          ),
        );
        return;
      }
      this.startPage(page.entries);
    }, this.fail);
  }

  private startPage(entries: Entry[]): void {
    this.page = entries;
    this.index = 0;
    this.deliver();
  }

  /** Sends the rest of the page, then reads on (a full page) or waits (caught up). */
  private deliver(): void {
    const entries = this.page as Entry[];
    while (this.index < entries.length) {
      // A redaction at a head before this entry goes out first.
      if (!this.flushWithheld()) return;
      const entry = entries[this.index++] as Entry;
      const seq = Number(entry.seq);
      // Stryker disable next-line ConditionalExpression,EqualityOperator: every page starts after `last` (engine.read and tail.slice both take it), so no entry is ever at or below it; the guard only protects "exactly once" from a misbehaving engine
      if (seq <= this.last) continue;
      this.last = seq;
      let more: boolean;
      try {
        more = this.sink.entry(entry);
      } catch (err) {
        // This watch's failure, not its session's: the tail goes on waking the others.
        this.fail(err);
        return;
      }
      if (this.ended) return;
      if (!more) {
        this.paused = true;
        return;
      }
    }
    this.page = undefined;
    if (entries.length >= this.loop.pageSize) {
      this.fetch(false);
      return;
    }
    // A page short of pageSize ends at the head its read saw: `last` is that
    // head. A redaction up to it goes before the heartbeat.
    if (!this.flushWithheld()) return;
    if (this.beat) this.beatThenWait();
    else this.wait();
  }

  /** Sends a heartbeat at `last`, then waits, unless the sink said stop. */
  private beatThenWait(): void {
    let more: boolean;
    try {
      more = this.sink.heartbeat(this.last);
    } catch (err) {
      this.fail(err);
      return;
    }
    // Stryker disable next-line ConditionalExpression: a sink that ended the watch in its heartbeat leaves nothing to do: wait() and resume() both stop at an ended watch
    if (this.ended) return;
    if (more) this.wait();
    else this.paused = true;
  }

  private wait(): void {
    // Stryker disable next-line ConditionalExpression: every caller of wait() has checked ended already, or is resume(), which has
    if (this.ended) return;
    if (this.aborted) {
      this.fail(this.reason);
      return;
    }
    if (!this.flushWithheld()) return;
    if (this.notified) {
      this.notified = false;
      this.beat = false;
      // Stryker disable next-line BooleanLiteral: the log has every entry the tail has: reading it instead costs a read, delivers the same
      this.fetch(true);
      return;
    }
    this.quietTicks = 0;
    this.idle = true;
  }
}
