import type { SessionStore } from "../../store/index.js";

/** A background job of the server (the retention sweep, blob collection). */
export interface PeriodicJob {
  /** One run now (tests; the timer calls it too); a call while one runs joins it. */
  run(): Promise<void>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
  /** True once stopped: a long run checks it between steps. */
  readonly stopped: boolean;
}

export interface PeriodicJobOptions {
  /** Its engine's `exclusive` makes replicas of one storage take turns. */
  readonly store: SessionStore;
  /** The name under which they take turns. */
  readonly name: string;
  readonly intervalMs: number;
  /** Delay of the first run after start. */
  readonly firstAfterMs: number;
  readonly job: () => Promise<void>;
  /** Another replica was running it. */
  readonly onSkipped?: () => void;
  /** A failed run (retried at the next interval; it never stops the server). */
  readonly onError: (err: unknown) => void;
}

/** Runs `job` every `intervalMs`, one run at a time, the first after `firstAfterMs`. */
export function startPeriodicJob(o: PeriodicJobOptions): PeriodicJob {
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    running ??= (async () => {
      try {
        // Replicas of one database take turns; a storage one process serves just runs it.
        const engine = o.store.engine;
        const exclusive = engine.exclusive?.bind(engine);
        const outcome = exclusive
          ? await exclusive(o.name, o.job)
          : { ran: true, value: await o.job() };
        if (!outcome.ran) o.onSkipped?.();
      } catch (err) {
        o.onError(err);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void run(), o.intervalMs);
  timer.unref();
  const first = setTimeout(() => void run(), o.firstAfterMs);
  first.unref();
  return {
    run,
    get stopped() {
      return stopped;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(first);
      await running;
    },
  };
}

/** An error as a log line's text. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
