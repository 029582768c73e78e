import type { SessionKey, StorageEngine } from "../../storage/engine.js";
import { QuietClock } from "./quiet-clock.js";
import { SessionTail, type WithheldNotice } from "./session-tail.js";

/** Entries kept per watched session by default: a burst of this many appends is still served from memory. */
export const DEFAULT_TAIL_CAPACITY = 256;

/**
 * Fans the engine's events out to the watchers of each session, so that a
 * session's new entries are read ONCE per append for all of them: each
 * watched session has one shared tail (see SessionTail). A watcher that is
 * caught up takes its next entries from the tail; one that lags further
 * reads the engine itself. 1,000 watchers of a session thus cost one read
 * per append, not 1,000, and watchers of other sessions cost nothing. The
 * watchers' heartbeats share one clock per interval (see QuietClock).
 */
export class EventHub {
  private readonly tails = new Map<string, SessionTail>();
  private readonly clocks = new Map<number, QuietClock>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly engine: StorageEngine,
    private readonly capacity = DEFAULT_TAIL_CAPACITY,
  ) {
    this.unsubscribe = engine.subscribe((event) => {
      this.tails.get(sessionKey(event))?.onEvent(event);
    });
  }

  /**
   * Registers a watcher of one session; `wake` runs after each change is in
   * the tail. `stop` unregisters it, and drops the tail with its last watcher.
   */
  watch(
    key: SessionKey,
    wake: () => void,
    withheld?: (notice: WithheldNotice) => void,
  ): { tail: SessionTail; stop: () => void } {
    const k = sessionKey(key);
    let tail = this.tails.get(k);
    if (tail === undefined) {
      tail = new SessionTail(this.engine, key, this.capacity);
      this.tails.set(k, tail);
    }
    const t = tail;
    t.watchers.add(wake);
    if (withheld !== undefined) t.withheldWatchers.add(withheld);
    return {
      tail: t,
      stop: () => {
        t.watchers.delete(wake);
        // Stryker disable next-line ConditionalExpression: deleting undefined from the set deletes nothing (it never holds undefined)
        if (withheld !== undefined) t.withheldWatchers.delete(withheld);
        if (t.watchers.size === 0 && this.tails.get(k) === t) this.tails.delete(k);
      },
    };
  }

  /** The heartbeat clock of watchers with this interval, ms (made on first use). */
  clock(intervalMs: number): QuietClock {
    let clock = this.clocks.get(intervalMs);
    // Stryker disable next-line ConditionalExpression: cost only: a clock per watcher ticks its watchers the same as a shared one
    if (clock === undefined) {
      clock = new QuietClock(intervalMs);
      this.clocks.set(intervalMs, clock);
    }
    return clock;
  }

  /** Stops listening to the engine; registered watchers are woken no more. */
  close(): void {
    this.unsubscribe();
    this.tails.clear();
    for (const clock of this.clocks.values()) clock.stop();
  }
}

/** Map key of a session (workspace names cannot contain "/"). */
function sessionKey(key: SessionKey): string {
  return `${key.workspace}/${key.sessionId}`;
}
