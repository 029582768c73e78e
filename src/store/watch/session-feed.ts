import { randomBytes } from "node:crypto";
import { invalidArgument } from "../../core/errors.js";
import type { StorageEngine, StorageEvent } from "../../storage/engine.js";

/** One numbered workspace event; `n` orders the events of every workspace together. */
export interface FeedEvent {
  readonly n: number;
  readonly event: StorageEvent;
}

/**
 * The recent session events of every workspace, numbered, so that a watch
 * of a workspace's sessions can resume. A cursor is `<epoch>.<n>`: the epoch
 * is new for every feed (every store, so every server start), and only the
 * last `capacity` events are kept. A cursor from another epoch or older than
 * the buffer cannot be resumed exactly; the watcher then gets a snapshot (an
 * "updated" event per existing session) before live events, which is the
 * documented "resync" contract. Consecutive "appended" events of one session
 * are coalesced (watchers want the latest state, not each entry).
 */
export class SessionFeed {
  readonly epoch = randomBytes(4).toString("hex");
  private readonly events: FeedEvent[] = [];
  private next = 1;
  private readonly listeners = new Set<() => void>();
  private readonly unsubscribe: () => void;

  constructor(
    engine: StorageEngine,
    private readonly capacity = 10_000,
  ) {
    this.unsubscribe = engine.subscribe((event) => this.push(event));
  }

  private push(event: StorageEvent): void {
    const last = this.events[this.events.length - 1];
    if (
      last !== undefined &&
      event.type === "appended" &&
      last.event.type === "appended" &&
      last.event.workspace === event.workspace &&
      last.event.sessionId === event.sessionId
    ) {
      // Renumbered, so a watcher that already saw the older one sees this one.
      this.events.pop();
    }
    this.events.push({ n: this.next++, event });
    if (this.events.length > this.capacity) this.events.shift();
    for (const l of this.listeners) l();
  }

  /** The cursor a watcher passes back to resume after event `n`. */
  cursor(n: number): string {
    return `${this.epoch}.${n}`;
  }

  /** The number of the newest event (0 when none yet). */
  get head(): number {
    return this.next - 1;
  }

  /**
   * Where a cursor resumes: the event number to continue after, or
   * undefined when it cannot be resumed exactly (snapshot needed).
   * A malformed cursor is INVALID_ARGUMENT.
   */
  resumePoint(cursor: string): number | undefined {
    const m = /^([0-9a-f]{8})\.(\d{1,15})$/.exec(cursor);
    if (m === null)
      throw invalidArgument("invalid after_cursor: pass a cursor from an event unchanged");
    const n = Number(m[2]);
    if (m[1] !== this.epoch || n > this.head) return undefined;
    const oldest = this.events[0]?.n ?? this.next;
    return n + 1 >= oldest ? n : undefined;
  }

  /** Events of a workspace numbered after `n`. */
  after(workspace: string, n: number): FeedEvent[] {
    return this.events.filter((e) => e.n > n && e.event.workspace === workspace);
  }

  /** Calls `listener` after every new event; returns the unsubscribe function. */
  onEvent(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops listening to the engine and drops the listeners. */
  close(): void {
    this.unsubscribe();
    this.listeners.clear();
  }
}
