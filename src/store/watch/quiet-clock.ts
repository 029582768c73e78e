/** Ticks per interval: a heartbeat goes out at most 1/STEPS of the interval late. */
export const QUIET_STEPS = 8;

/**
 * Something the clock counts quiet time for (see QuietClock): a watch sets
 * `quietTicks` to 0 whenever it starts waiting, and is `idle` while it waits.
 */
export interface Quiet {
  quietTicks: number;
  readonly idle: boolean;
  /** A whole interval passed while idle, with no activity. */
  quietFor(): void;
}

/**
 * One timer for every watch with the same heartbeat interval, instead of a
 * timer per watch re-armed on every message: a watch keeps its own count of
 * quiet ticks (reset to zero by its activity, for free), and the clock,
 * ticking STEPS times per interval while it has members, tells each one
 * whose count passed STEPS. A heartbeat thus goes out after between 1 and
 * 1 + 1/STEPS intervals of quiet, never earlier. An idle watch costs a Set
 * entry here, not a Timeout, a closure and a promise.
 */
export class QuietClock {
  private readonly members = new Set<Quiet>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly intervalMs: number) {}

  /** Starts counting for `member`. */
  add(member: Quiet): void {
    member.quietTicks = 0;
    this.members.add(member);
    this.timer ??= setInterval(() => this.tick(), Math.max(1, this.intervalMs / QUIET_STEPS));
  }

  delete(member: Quiet): void {
    this.members.delete(member);
    if (this.members.size === 0) this.stop();
  }

  get size(): number {
    return this.members.size;
  }

  /** Stops the timer; members are told nothing more. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    for (const m of this.members) {
      // More than STEPS ticks: at least one whole interval since the reset.
      if (m.idle && ++m.quietTicks > QUIET_STEPS) {
        m.quietTicks = 0;
        m.quietFor();
      }
    }
  }
}
