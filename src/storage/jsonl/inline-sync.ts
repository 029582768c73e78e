/**
 * Whether a batch's fdatasync runs on the main thread (`fdatasyncSync`)
 * rather than through libuv's thread pool. One object per engine.
 *
 * Why: a lone append waits for its fdatasync anyway, and the pool's
 * hand-off and wake-up cost it ~80 µs on a 2-core box (medians inside the
 * server: 270–294 µs through the pool, 192–208 µs on the main thread, for
 * the same disk), a tenth of a sequential durable append. But a sync call
 * stops the event loop for the disk's flush, so it is worth it only when
 * nobody else is waiting for the loop and the flush is short:
 *
 * - quiet: for `QUIET_MS`, no append or delete has arrived while another
 *   was still unanswered (a busy server keeps its flushes in the pool,
 *   where they overlap with each other and with the work of other
 *   requests; a quiet one has nothing else in flight);
 * - fast: the running average of recent flushes (each weighing `WEIGHT`
 *   when it comes in) is under `FAST_MS`. A disk that turns slow sends
 *   flushes back to the pool within a flush or two; an occasional slow
 *   flush among fast ones sends at most the next few (here ~6 % of
 *   back-to-back flushes take 1–8 ms, the median 0.3 ms). A new engine
 *   starts from `START_MS`, so its first dozen flushes go through the pool
 *   whatever the disk.
 *
 * The flush itself is the same system call either way; only the thread
 * that waits for it differs, so the durability rules do not change.
 */

/** How long after two writes overlapped the engine counts as busy. */
export const QUIET_MS = 100;
/** Flushes may run on the main thread while their running average (ms) is under this. */
export const FAST_MS = 1;
/** The weight of the newest flush in the running average. */
export const WEIGHT = 1 / 8;
/** The running average a new engine starts from (ms). */
export const START_MS = 4 * FAST_MS;
/** What a failed flush counts as (ms): the disk is in trouble. */
export const FAILED_MS = 100;

export class InlineSync {
  /** Appends and deletes accepted and not yet answered, in every session. */
  private pending = 0;
  private busyAt = Number.NEGATIVE_INFINITY;
  private averageMs = START_MS;

  /** `clock`: ms, for the quiet window and for timing flushes (tests pass their own). */
  constructor(readonly clock: () => number = () => performance.now()) {}

  /** An append or delete was accepted; if another is unanswered, the engine is busy. */
  arrived(): void {
    if (this.pending > 0) this.busyAt = this.clock();
    this.pending++;
  }

  /** An accepted append or delete was answered (either way). */
  answered(): void {
    this.pending--;
  }

  /** Whether the flush about to run should block the main thread. */
  get inline(): boolean {
    return this.averageMs < FAST_MS && this.clock() - this.busyAt >= QUIET_MS;
  }

  /** A flush took `ms` (either way; a failed one: Infinity). */
  flushed(ms: number): void {
    this.averageMs += (Math.min(ms, FAILED_MS) - this.averageMs) * WEIGHT;
  }
}

/**
 * The settle callbacks of an append or delete, counted by `sync` (when
 * there is one): `arrived` now, `answered` when the first of them is called
 * (a promise settles once; the count must not drift either).
 */
export function admitted<T>(
  sync: InlineSync | undefined,
  resolve: (value: T) => void,
  reject: (err: unknown) => void,
): { resolve: (value: T) => void; reject: (err: unknown) => void } {
  if (sync === undefined) return { resolve, reject };
  sync.arrived();
  let open = true;
  const answered = () => {
    if (open) sync.answered();
    open = false;
  };
  return {
    resolve: (value) => {
      answered();
      resolve(value);
    },
    reject: (err) => {
      answered();
      reject(err);
    },
  };
}
