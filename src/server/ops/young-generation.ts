import { constants, PerformanceObserver, type PerformanceObserverEntryList } from "node:perf_hooks";
import v8 from "node:v8";

/**
 * The largest semi-space `sessiond serve` lets V8 grow its young generation
 * to, MB: what a fresh server already has once it has started (two
 * semi-spaces of 8 MB), half of V8's own limit on 64-bit machines (16 MB).
 */
export const SERVE_SEMI_SPACE_MB = 8;

/**
 * Under sustained load the young generation may grow further, to this many
 * MB per semi-space (V8's own limit on 64-bit machines): see `BusyLoad`.
 */
export const BUSY_SEMI_SPACE_MB = 16;

/**
 * When a server counts as busy: its minor garbage collections (scavenges)
 * have come at most `gapMs` apart for at least `afterMs`. Busy, the young
 * generation may grow to `semiSpaceMb`; once the scavenges stop, the cap
 * is the small one again (V8 keeps what it has grown to until it shrinks
 * the young generation itself).
 *
 * Why: with 64 durable appends in flight (each waits ~20 ms for its
 * fdatasync) the objects of the calls in flight survive every scavenge,
 * and with 8 MB semi-spaces those come twice as often as with 16: ~0.004
 * scavenges per append against ~0.002, each copying the same in-flight set
 * (2026-12-06, `--trace-gc`, bench g2's load; the durable Append echo grows
 * to 16 MB). A burst that opens 1,000 idle streams (bench g8, the reason
 * for the cap) scavenges for well under a second, then the server is idle.
 */
export interface BusyLoad {
  readonly semiSpaceMb: number;
  readonly afterMs: number;
  readonly gapMs: number;
}

export const SERVE_BUSY_LOAD: BusyLoad = {
  semiSpaceMb: BUSY_SEMI_SPACE_MB,
  afterMs: 3000,
  gapMs: 1000,
};

/**
 * Tells from the times of the minor collections whether the load is
 * sustained (`BusyLoad`): `minor(at)` for each, in order; true while the
 * run of collections at most `gapMs` apart has lasted `afterMs`.
 */
export class BusyClock {
  private runStart = Number.NEGATIVE_INFINITY;
  private last = Number.NEGATIVE_INFINITY;

  constructor(private readonly load: BusyLoad) {}

  minor(at: number): void {
    if (at - this.last > this.load.gapMs) this.runStart = at;
    this.last = at;
  }

  /** Busy at time `now`: a run of `afterMs` or more whose last collection is at most `gapMs` old. */
  busyAt(now: number): boolean {
    return this.last - this.runStart >= this.load.afterMs && now - this.last <= this.load.gapMs;
  }
}

/**
 * Keeps V8's young generation at `semiSpaceMb` per semi-space at most, for
 * the life of the process (with `busy`: at `busy.semiSpaceMb` while the
 * load is sustained, see `BusyLoad`).
 *
 * Why: V8 doubles its young generation once more objects have survived its
 * scavenges than it holds, and never gives the pages back while the process
 * is idle. A burst that leaves many small objects behind (1,000 watch
 * streams opened at once keep ~10 MB) makes a fresh server grow from 8 to
 * 16 MB semi-spaces: +16 MB of resident memory, more than the streams
 * themselves (bench g8: 32 KB per idle stream, 17 KB with the cap). The
 * larger young generation buys no measurable CPU for this server's calls,
 * whose garbage is short-lived (bench g3 and g7 A/B, docs/performance-history.md "Native gRPC").
 *
 * How: V8 reads `--max-semi-space-size` only when the heap is set up, but
 * reads `--semi-space-growth-factor` at every growth (Node documents flags
 * changed after start as unsupported: young-generation.test.ts checks the
 * effect on the Node it runs on, so an upgrade that loses it fails there). After each garbage
 * collection the factor is set so that one growth cannot pass the cap (1
 * at the cap). Two growths between collections observed here (possible
 * only right after V8 shrank the young generation, a rare memory-reducing
 * collection) could pass it once, up to V8's own limit.
 *
 * Does nothing when the process was started with its own
 * `--max-semi-space-size` (an operator's choice wins). Process-wide: the
 * CLI calls it, an embedding process decides for itself. Returns a stop
 * function that ends the watching (the last factor stays).
 */
export function capYoungGeneration(
  semiSpaceMb: number,
  nodeOptions: readonly string[] = [...process.execArgv, process.env.NODE_OPTIONS ?? ""],
  busy?: BusyLoad,
): () => void {
  if (nodeOptions.some((o) => /--max[-_]semi[-_]space[-_]size/.test(o))) return () => {};
  const cap = semiSpaceMb * 2 ** 20;
  const busyCap = (busy?.semiSpaceMb ?? semiSpaceMb) * 2 ** 20;
  const clock = busy === undefined ? undefined : new BusyClock(busy);
  let factor = 0;
  // While busy, a look after the load may have stopped: the small cap again before the next burst.
  let recheck: NodeJS.Timeout | undefined;
  const adjust = (list?: PerformanceObserverEntryList) => {
    if (clock !== undefined && list !== undefined) {
      for (const e of list.getEntries()) {
        const kind = (e as { detail?: { kind?: number } }).detail?.kind;
        if (kind === constants.NODE_PERFORMANCE_GC_MINOR) clock.minor(e.startTime);
      }
    }
    const busyNow = clock?.busyAt(performance.now()) === true;
    if (busyNow && recheck === undefined && busy !== undefined) {
      recheck = setTimeout(() => {
        recheck = undefined;
        adjust();
      }, busy.gapMs + 1);
      recheck.unref();
    }
    const next = growthFactor(busyNow ? busyCap : cap);
    if (next === factor) return;
    factor = next;
    v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
  };
  adjust();
  const observer = new PerformanceObserver((list) => adjust(list));
  observer.observe({ entryTypes: ["gc"] });
  return () => {
    observer.disconnect();
    if (recheck !== undefined) clearTimeout(recheck);
  };
}

/** The growth factor that keeps one growth of the young generation within `cap` bytes. */
export function growthFactor(cap: number, semiSpace = currentSemiSpace()): number {
  return Math.max(1, Math.floor(cap / Math.max(1, semiSpace)));
}

/** The size of one semi-space now, bytes (the new space holds two). */
export function currentSemiSpace(): number {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return (space?.space_size ?? 0) / 2;
}
