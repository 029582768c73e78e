import type { StorageEvent } from "../engine.js";
import type { PgContext } from "./context.js";
import { cacheKey, keyOfCacheKey } from "./session-cache.js";

/** How often the poll runs while hurried (HeadPoll `hurry`), ms. */
export const HURRIED_MS = 100;

/**
 * The safety net of cross-replica wake-ups. An optimistic append's NOTIFY
 * runs after its commit, in a statement of its own pipelined behind it by
 * the writing replica (notify.ts, `wakeAfter`): a
 * replica killed between its commit and its NOTIFY, or a NOTIFY whose
 * connection failed, or an append whose outcome was unknown to its own
 * replica, leaves a committed head that nobody was woken for. Every
 * replica that has subscribers therefore reads, every `intervalMs`, the
 * stored head of the sessions it follows (ONE query) and emits `appended`
 * for each whose head is past what its subscribers were last told.
 *
 * "Told" (`announced`) is per session: set when the session's log is first
 * loaded into this replica's cache (every read of a watcher goes through
 * that cache, so no watcher has seen an older state), raised by every
 * event emitted to this replica's subscribers (its own commits, NOTIFYs
 * from other replicas, this poll, the resync after a re-LISTEN), removed
 * by `deleted`. The sessions followed are those in the cache (watched
 * sessions are read on every event, so they are cached), plus those whose
 * append failed with an unknown outcome here (their log was dropped from
 * the cache) until the next poll has read them once.
 *
 * Hurried (`hurry`) right after this replica begins to LISTEN: a writing
 * replica NOTIFYs only once its peer check, every `intervalMs` (notify.ts,
 * Notifier), has seen a LISTEN; until then its commits reach this
 * replica's watchers by this poll alone, and the first entries of a new
 * watch would wait up to a whole interval. So for one interval (and a
 * hurried poll more) the poll runs every HURRIED_MS.
 */
export class HeadPoll {
  private readonly announced = new Map<string, number>();
  private readonly suspects = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private hurried: NodeJS.Timeout | undefined;
  /** When the hurried polls end (ms, Date.now()). */
  private hurriedUntil = 0;
  private running = false;

  constructor(
    private readonly ctx: PgContext,
    /** Emits to this replica's subscribers (and calls `announce`). */
    private readonly emit: (e: StorageEvent) => void,
    private readonly intervalMs: number,
  ) {}

  /** A session's log entered the cache at `head`. */
  loaded(k: string, head: number): void {
    if (!this.announced.has(k)) this.announced.set(k, head);
  }

  /** An event reached this replica's subscribers. */
  announce(e: StorageEvent): void {
    const k = cacheKey(e);
    if (e.type === "deleted") {
      this.announced.delete(k);
      return;
    }
    const told = this.announced.get(k);
    if (told !== undefined && e.headSeq > told) this.announced.set(k, e.headSeq);
  }

  /** An append to the session failed with an unknown outcome: follow it past its eviction. */
  suspect(k: string): void {
    this.suspects.add(k);
  }

  /** Starts polling (idempotent); the timer does not keep the process alive. */
  start(): void {
    if (this.timer !== undefined || this.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.poll().catch(() => {}), this.intervalMs);
    this.timer.unref();
  }

  /**
   * Polls every HURRIED_MS for the next `intervalMs` + HURRIED_MS (again
   * from now when already hurried): this replica has just begun to LISTEN.
   * Nothing when the poll is off or stopped.
   */
  hurry(): void {
    if (this.timer === undefined) return;
    this.hurriedUntil = Date.now() + this.intervalMs + HURRIED_MS;
    if (this.hurried !== undefined) return;
    this.hurried = setInterval(() => {
      if (Date.now() >= this.hurriedUntil) this.calm();
      void this.poll().catch(() => {});
    }, HURRIED_MS);
    this.hurried.unref();
  }

  private calm(): void {
    clearInterval(this.hurried);
    this.hurried = undefined;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.calm();
  }

  /** One poll: reads the followed heads, emits `appended` where a head moved unannounced. */
  async poll(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const k of this.announced.keys()) {
        if (this.ctx.cache.get(k) === undefined && !this.suspects.has(k)) {
          this.announced.delete(k);
        }
      }
      if (this.announced.size === 0) return;
      const suspects = [...this.suspects];
      const keys = [...this.announced.keys()].map((k) => {
        const { workspace, sessionId } = keyOfCacheKey(k);
        return { w: workspace, s: sessionId };
      });
      const rows = await this.ctx.db(
        "polling watched heads",
        () =>
          this.ctx.sql<{ workspace: string; session_id: string; head_seq: number }[]>`
          SELECT s.workspace, s.session_id, s.head_seq
          FROM json_to_recordset(${JSON.stringify(keys)}::text::json) AS k(w text, s text)
          JOIN sessiond_sessions s ON s.workspace = k.w AND s.session_id = k.s`,
      );
      for (const k of suspects) this.suspects.delete(k);
      for (const r of rows) {
        const key = { workspace: r.workspace, sessionId: r.session_id };
        const told = this.announced.get(cacheKey(key));
        if (told !== undefined && r.head_seq > told) {
          this.emit({ type: "appended", ...key, headSeq: r.head_seq });
        }
      }
    } finally {
      this.running = false;
    }
  }
}
