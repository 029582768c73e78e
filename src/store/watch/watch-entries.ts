import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { type EntriesLoop, EntryFollower, type EntrySink } from "./entry-follower.js";

export type { EntriesLoop };

/** What a watch of one session yields: its entries in seq order, and heartbeats. */
export type EntryWatchEvent =
  | { readonly type: "entry"; readonly entry: Entry }
  /** The watch is alive and caught up to `headSeq`, the session's head when it was sent. */
  | { readonly type: "heartbeat"; readonly headSeq: number }
  /** Entries already sent were redacted (at head `headSeq`): they now read as `entries`. */
  | { readonly type: "withheld"; readonly entries: readonly Entry[]; readonly headSeq: number };

/** How to watch one session; only the cursor and a way out matter to most callers. */
export interface EntryWatchOptions {
  /**
   * Replay the entries with seq > afterSeq first (default 0: the whole log).
   * Pass the seq of the last entry seen to resume with no gap and no
   * duplicate; beyond the head seq is INVALID_ARGUMENT.
   */
  afterSeq?: number | undefined;
  /** Ends the watch: the iterator then throws `signal.reason`. Leaving the loop (`break`) ends it too. */
  signal?: AbortSignal | undefined;
  /**
   * A heartbeat after this long without entries, ms (default
   * DEFAULT_HEARTBEAT_MS); up to 1/8 longer, as watches share one clock.
   */
  heartbeatMs?: number | undefined;
  /** Entries read from the log at a time while replaying (default: the store's page size). */
  pageSize?: number | undefined;
}

/**
 * A watch of one session as an async iterable: the EntryFollower (which
 * holds every rule: subscribe first, replay by seq, follow wake-ups, beat
 * and re-read when quiet, NOT_FOUND on delete) driven one event at a time.
 * The follower pauses after each event and goes on only when the next one
 * is pulled, so a slow consumer holds at most one page in memory and no
 * read is made ahead of demand. An abort of the loop's signal ends it by
 * throwing the signal's reason once it is caught up; leaving the loop
 * (`break`) ends it too.
 */
export async function* watchEntries(loop: EntriesLoop): AsyncGenerator<EntryWatchEvent> {
  const inbox = new Inbox();
  const follower = new EntryFollower(loop, inbox);
  follower.start();
  try {
    for (;;) {
      yield await inbox.take();
      follower.resume();
    }
  } finally {
    follower.close();
  }
}

/** Holds the one event the paused follower sent, or how it ended, until it is taken. */
class Inbox implements EntrySink {
  private event: EntryWatchEvent | undefined;
  private ended: { err: unknown } | undefined;
  private waiting:
    | { resolve: (e: EntryWatchEvent) => void; reject: (err: unknown) => void }
    | undefined;

  entry(entry: Entry): boolean {
    this.put({ type: "entry", entry });
    return false;
  }

  heartbeat(headSeq: number): boolean {
    this.put({ type: "heartbeat", headSeq });
    return false;
  }

  withheld(entries: readonly Entry[], headSeq: number): boolean {
    this.put({ type: "withheld", entries, headSeq });
    return false;
  }

  end(err: unknown): void {
    // Stryker disable next-line ObjectLiteral: the follower can only end while the generator waits in take() (it pauses after each event it sends), so that waiting take() gets the error and this stored copy is never what a take() throws
    this.ended = { err };
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(err);
  }

  take(): Promise<EntryWatchEvent> {
    const event = this.event;
    if (event !== undefined) {
      this.event = undefined;
      return Promise.resolve(event);
    }
    if (this.ended !== undefined) return Promise.reject(this.ended.err);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  private put(event: EntryWatchEvent): void {
    const w = this.waiting;
    if (w === undefined) {
      this.event = event;
      return;
    }
    this.waiting = undefined;
    w.resolve(event);
  }
}
