import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import type { SessionKey, StorageEngine, StorageEvent } from "../storage/engine.js";

/**
 * Fans the engine's events out to the watchers of each session, and reads a
 * session's new entries ONCE per append for all of them: the hub keeps a
 * short tail (the newest `capacity` entries) of every watched session,
 * refreshed from the engine when an append event arrives, and wakes the
 * watchers only after the refresh. A watcher that is caught up takes its
 * next entries from the tail; one that lags further reads the engine itself.
 * 1,000 watchers of a session thus cost one read per append, not 1,000, and
 * the data still comes from the log (events carry none). Watchers of other
 * sessions cost nothing.
 */
export class EventHub {
  private readonly tails = new Map<string, SessionTail>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly engine: StorageEngine,
    private readonly capacity = 256,
  ) {
    this.unsubscribe = engine.subscribe((event) => {
      this.tails.get(sessionKey(event.workspace, event.sessionId))?.onEvent(event);
    });
  }

  /** Registers a watcher of one session; `wake` runs after each change is in the tail. */
  watch(key: SessionKey, wake: () => void): { tail: SessionTail; stop: () => void } {
    const k = sessionKey(key.workspace, key.sessionId);
    let tail = this.tails.get(k);
    if (tail === undefined) {
      tail = new SessionTail(this.engine, key, this.capacity);
      this.tails.set(k, tail);
    }
    const t = tail;
    t.watchers.add(wake);
    return {
      tail: t,
      stop: () => {
        t.watchers.delete(wake);
        if (t.watchers.size === 0 && this.tails.get(k) === t) this.tails.delete(k);
      },
    };
  }

  close(): void {
    this.unsubscribe();
    this.tails.clear();
  }
}

/** The newest entries of one watched session, consecutive by seq. */
export class SessionTail {
  readonly watchers = new Set<() => void>();
  private entries: Entry[] = [];
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: StorageEngine,
    private readonly key: SessionKey,
    private readonly capacity: number,
  ) {}

  private get lastSeq(): number {
    const last = this.entries[this.entries.length - 1];
    return last === undefined ? 0 : Number(last.seq);
  }

  onEvent(event: StorageEvent): void {
    this.chain = this.chain.then(async () => {
      if (event.type === "appended") {
        try {
          await this.load(event.headSeq);
        } catch {
          this.entries = []; // e.g. deleted meanwhile: watchers read the engine and see why
        }
      } else {
        this.entries = [];
      }
      for (const wake of this.watchers) wake();
    });
  }

  private async load(headSeq: number): Promise<void> {
    let after = this.entries.length > 0 ? this.lastSeq : Math.max(0, headSeq - this.capacity);
    while (after < headSeq) {
      const page = await this.engine.read(this.key, after, this.capacity);
      if (page.entries.length === 0) break;
      this.entries.push(...page.entries);
      after = this.lastSeq;
    }
    if (this.entries.length > this.capacity) this.entries = this.entries.slice(-this.capacity);
  }

  /**
   * Entries with seq > afterSeq (at most `limit`), or undefined when the
   * tail does not reach back that far (the caller reads the engine).
   */
  slice(afterSeq: number, limit: number): { entries: Entry[]; headSeq: number } | undefined {
    const first = this.entries[0];
    if (first === undefined || afterSeq < Number(first.seq) - 1) return undefined;
    const start = afterSeq - (Number(first.seq) - 1);
    return { entries: this.entries.slice(start, start + limit), headSeq: this.lastSeq };
  }
}

/** Map key of a session (workspace names cannot contain "/"). */
export function sessionKey(workspace: string, sessionId: string): string {
  return `${workspace}/${sessionId}`;
}
