import * as fs from "node:fs";
import { existsSync } from "node:fs";
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { lock } from "proper-lockfile";
import { notFound, type SessiondError, unavailable } from "../../core/errors.js";
import { errnoCode } from "./fs-ops.js";
import { breakIfOwnerDead, breakingFs } from "./lock-breaker.js";
import { ownerPathOf, ownerRecord } from "./lock-owner.js";

/**
 * The cross-process write lock of one session file, held as a short lease.
 *
 * The lock is proper-lockfile's: an atomic mkdir of `.<name>.lock` next to
 * the file, refreshed while held and considered stale (taken over) after
 * `staleMs`. Taking and dropping it costs about one fdatasync, so a busy
 * writer keeps it across consecutive batches and drops it after `idleMs`
 * without appends. The lease only saves the mkdir/rmdir: the writer still
 * re-checks the file under it before every write (fencing).
 *
 * Fairness: a process that finds the lock taken touches `.<name>.wait`
 * while it polls (short sleeps with jitter). A holder that has had the
 * lease for its fair share looks for that marker between batches and, when
 * someone waits, hands the lock over and stays away for a moment, so two
 * busy processes alternate instead of one starving the other.
 *
 * When proper-lockfile finds the lock compromised (the refresh failed, or
 * another process took it over after an event-loop stall longer than
 * `staleMs`), the lease is marked lost: the writer fails the batch in
 * flight with UNAVAILABLE instead of acknowledging it, and the process
 * keeps running (proper-lockfile's default would throw).
 */

export interface LeaseOptions {
  /** Age after which another process may break the lock; >= 10 s. */
  readonly staleMs: number;
  /** Idle time after which the lease is dropped; 0 drops it after every batch. */
  readonly idleMs: number;
  /** false only for the negative-control switch `debug.noCrossProcessLock`. */
  readonly enabled: boolean;
  /** The fs under proper-lockfile (tests slow it down to open race windows); node's by default. */
  readonly fs?: typeof fs;
}

const RETRY_MIN_MS = 1;
const RETRY_MAX_MS = 8;
/** Held at least this long before the holder looks for waiters. */
const FAIR_SHARE_MS = 50;
/**
 * How often a busy holder past its fair share looks for a waiter's marker
 * (a system call with a path lookup, ~5 us here): with many sessions
 * appended to at once, every batch of each would look at 5 ms. A waiter
 * waits up to FAIR_SHARE_MS + this for its turn.
 */
const MARKER_CHECK_EVERY_MS = FAIR_SHARE_MS;
/** How often an idle holder looks for a waiting process. */
const IDLE_POLL_MS = 10;
/** Longer than a waiter's longest poll interval, so the waiter wins the hand-over. */
const YIELD_MS = 3 * RETRY_MAX_MS;

/** Lock directory of a session file: `.<name>.lock` in the same directory. */
export function lockPathOf(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.lock`);
}

/** Marker touched by processes waiting for the lock. */
export function waitMarkerOf(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.wait`);
}

export class FileLease {
  private releaseFn: (() => Promise<void>) | undefined;
  private releasing: Promise<void> | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** The delay the idle timer was armed with. */
  private idleTimerMs = 0;
  /** When the holder last went idle (nothing queued); undefined while it works. */
  private idleSince: number | undefined;
  private acquiredAt = 0;
  private takes = 0;
  private lastMarkerCheck = 0;
  private yieldUntil = 0;
  private lostError: SessiondError | undefined;
  private readonly lockPath: string;
  private readonly marker: string;
  /** True from a successful acquire until the release has removed the lock dir. */
  private holding = false;
  /** The fs proper-lockfile uses: node's, with stale-lock breaking serialised (see `breakingFs`). */
  private readonly lockFs: typeof fs;

  constructor(
    readonly file: string,
    private readonly o: LeaseOptions,
  ) {
    this.lockPath = lockPathOf(file);
    this.marker = waitMarkerOf(file);
    this.lockFs = breakingFs(o.fs ?? fs, this.lockPath, o.staleMs, () => this.holding);
  }

  /**
   * How many times this lease took the lock: a caller that checked
   * something under the lock (key-fence.ts) knows the check still holds
   * while the lock is held and this count has not moved since.
   */
  get acquisitions(): number {
    return this.takes;
  }

  /** True while this process holds the lock. */
  get held(): boolean {
    return this.releaseFn !== undefined;
  }

  /** Set when the lock was compromised while held: the batch in flight must fail. */
  get lost(): SessiondError | undefined {
    return this.lostError;
  }

  /**
   * True when the lease is held and usable at once (or the lock is off):
   * the next batch may write without `acquire`. The holder is busy from
   * here until its next `idle`.
   */
  ready(): boolean {
    if (this.releasing !== undefined || (this.o.enabled && this.releaseFn === undefined)) {
      return false;
    }
    this.idleSince = undefined;
    return true;
  }

  /**
   * Takes the lock unless the lease is still held: NOT_FOUND when the file
   * is gone, UNAVAILABLE when another process keeps it, the raw fs error
   * otherwise. `maxWaitMs`: how long to wait for another process's lock
   * (default: max(30 s, 2 × stale)).
   */
  async acquire(maxWaitMs?: number): Promise<void> {
    this.cancelIdle();
    this.idleSince = undefined;
    if (this.releasing !== undefined) await this.releasing;
    if (!this.o.enabled || this.releaseFn !== undefined) return;
    this.lostError = undefined;
    const pause = this.yieldUntil - Date.now();
    if (pause > 0) await sleep(pause);
    const deadline = Date.now() + (maxWaitMs ?? Math.max(30_000, 2 * this.o.staleMs));
    let waited = false;
    for (;;) {
      try {
        this.releaseFn = await lock(this.file, {
          lockfilePath: this.lockPath,
          realpath: false,
          stale: this.o.staleMs,
          retries: 0,
          onCompromised: (err) => this.compromised(err),
          fs: this.lockFs,
        });
        this.holding = true;
        this.writeOwner();
        break;
      } catch (err) {
        const code = errnoCode(err);
        if (code === "ENOENT") throw notFound(`${path.basename(this.file)} not found`);
        // The caller codes other fs errors (a read-only or full disk is not worth a retry).
        if (code !== "ELOCKED") throw err;
        if (Date.now() > deadline) {
          throw unavailable(`${path.basename(this.file)} stays locked by another process`);
        }
        // A holder that died on this machine (kill -9, then a restart): take over now.
        if (await this.breakIfOwnerDead()) continue;
        waited = true;
        await this.touchMarker();
        await sleep(RETRY_MIN_MS + Math.random() * (RETRY_MAX_MS - RETRY_MIN_MS));
      }
    }
    this.acquiredAt = Date.now();
    this.lastMarkerCheck = this.acquiredAt;
    this.takes++;
    if (waited) await fsp.rm(this.marker, { force: true }).catch(() => undefined);
  }

  /**
   * Whether `handOverIfWanted` would look for a waiting process now: the
   * lease held for its fair share, and not looked at in the last
   * MARKER_CHECK_EVERY_MS. A sync check, so a batch that need not look
   * costs no promise.
   */
  handOverDue(): boolean {
    if (!this.held) return false;
    const now = Date.now();
    return (
      now - this.acquiredAt >= FAIR_SHARE_MS && now - this.lastMarkerCheck >= MARKER_CHECK_EVERY_MS
    );
  }

  /**
   * Called between two batches of a busy writer: hands the lock over when
   * another process has been waiting and this one has had its fair share.
   */
  async handOverIfWanted(): Promise<void> {
    if (!this.handOverDue()) return;
    this.lastMarkerCheck = Date.now();
    // A sync existence check: microseconds, where an async stat is a thread-pool round trip.
    const someoneWaits = existsSync(this.marker);
    if (!someoneWaits) return;
    await this.release();
    this.yieldUntil = Date.now() + YIELD_MS;
  }

  /**
   * Called when the writer has nothing queued: keep the lease for up to
   * `idleMs`, so a session appended to every few hundred ms does not pay a
   * mkdir + rmdir per append, but let go when another process waits (its
   * marker is polled every IDLE_POLL_MS with a cheap stat). The first look
   * comes after FAIR_SHARE_MS, as long as a busy holder makes a waiter wait:
   * a server appending to many sessions pauses briefly between the appends
   * of each, and polling each of them every IDLE_POLL_MS in those pauses
   * costs a system call and a timer callback per session per tick.
   */
  idle(): void {
    if (!this.held) return;
    if (this.o.idleMs <= 0) {
      void this.release();
      return;
    }
    this.idleSince = Date.now();
    // One timer for a run of batches, not one per batch: it looks at the
    // time idle when it fires (`onIdleTimer`) and is armed again from there.
    if (this.idleTimer === undefined) this.armIdle(Math.min(FAIR_SHARE_MS, this.o.idleMs));
  }

  private armIdle(ms: number): void {
    this.idleTimer = setTimeout(this.onIdleTimer, ms);
    this.idleTimer.unref();
    this.idleTimerMs = ms;
  }

  /**
   * Idle for idleMs: release. Idle for at least FAIR_SHARE_MS: release
   * when another process waits (its marker), else look again in
   * IDLE_POLL_MS. Idle for less, or busy (a batch running): look again
   * after the timer's own delay (`refresh`: the same timer object, so a
   * busy session's lease costs no timer per batch).
   */
  private readonly onIdleTimer = (): void => {
    const timer = this.idleTimer;
    const since = this.idleSince;
    if (timer === undefined || !this.held) {
      this.idleTimer = undefined;
      return;
    }
    const fairShare = Math.min(FAIR_SHARE_MS, this.o.idleMs);
    const idleFor = since === undefined ? 0 : Date.now() - since;
    if (since === undefined || idleFor < fairShare) {
      if (this.idleTimerMs === fairShare) timer.refresh();
      else this.armIdle(fairShare);
      return;
    }
    if (idleFor >= this.o.idleMs || existsSync(this.marker)) {
      this.idleTimer = undefined;
      void this.release();
      return;
    }
    this.armIdle(Math.min(IDLE_POLL_MS, this.o.idleMs - idleFor));
  };

  /** Drops the lock (idempotent). Errors are ignored: a leftover lock goes stale. */
  release(): Promise<void> {
    this.cancelIdle();
    if (this.releasing !== undefined) return this.releasing;
    const fn = this.releaseFn;
    if (fn === undefined) return Promise.resolve();
    this.releaseFn = undefined;
    this.releasing = fn()
      .catch(() => undefined)
      .finally(() => {
        this.holding = false;
        this.releasing = undefined;
      });
    return this.releasing;
  }

  /** Records this process as the holder (best effort: without it, waiters fall back to the mtime). */
  private writeOwner(): void {
    const record = ownerRecord();
    if (record === undefined) return;
    try {
      fs.writeFileSync(ownerPathOf(this.lockPath), record);
    } catch {
      // The lock is held all the same; a dead holder is then found by its mtime only.
    }
  }

  /** Breaks the lock when its recorded owner is dead (lock-breaker.ts); true when it is gone. */
  private breakIfOwnerDead(): Promise<boolean> {
    return breakIfOwnerDead(this.o.fs ?? fs, this.lockPath, this.o.staleMs);
  }

  /** Removes the wait marker of a deleted file (best effort; a waiter recreates it). */
  async forget(): Promise<void> {
    await fsp.rm(this.marker, { force: true }).catch(() => undefined);
  }

  /** Creates the wait marker if missing (best effort: without it the holder still idles out). */
  private async touchMarker(): Promise<void> {
    try {
      await (await fsp.open(this.marker, "a")).close();
    } catch {
      // The directory may be gone with the session; acquiring will report that.
    }
  }

  private compromised(err: Error): void {
    this.cancelIdle();
    this.releaseFn = undefined;
    this.holding = false;
    this.lostError = unavailable(
      `lost the lock on ${path.basename(this.file)} (${err.message}); outcome unknown`,
      err,
    );
  }

  private cancelIdle(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.idleSince = undefined;
  }
}
