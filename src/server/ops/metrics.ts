import {
  type Counter,
  collectDefaultMetrics,
  Gauge,
  type Histogram,
  Counter as PromCounter,
  Histogram as PromHistogram,
  Registry,
} from "prom-client";
import type { EngineStats, StorageObserver } from "../../store/index.js";
import type { CallObserver } from "./call-log.js";

/** Where a scrape reads the gauges that are counted elsewhere (watch slots, the engine). */
export interface MetricSources {
  /** Open watch streams: WatchEntries and WatchSessions. */
  readonly watchStreams: () => number;
  /** Open WatchSessions streams. */
  readonly sessionWatchers: () => number;
  /** The largest numbers of WatchEntries streams on one session, largest first. */
  readonly topWatchers: (n: number) => number[];
  /** The engine's gauges (cache size, PostgreSQL pool). */
  readonly engine: () => EngineStats;
}

type MethodLabels = { readonly service: string; readonly method: string };
type CodeLabels = MethodLabels & { readonly code: string };

/** Ranks of the watchers-per-session gauge: its only label, so the series stay few. */
export const WATCHER_RANKS = 5;

const LATENCY = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DISK = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const BATCH = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/**
 * The server's Prometheus metrics (prom-client), in a registry of its own
 * so that two servers in one process do not share series. Labels are
 * bounded by construction: service and method come from the served
 * schema (anything else is "unknown"), code from the gRPC codes or HTTP
 * statuses; no session id is ever a label, a workspace only on the usage
 * counters (usage-metrics.ts, capped), and watchers per session are shown
 * as the top ranks only. The list with each metric's
 * meaning is in the README ("Operating sessiond").
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"service" | "method" | "code">;
  private readonly duration: Histogram<"service" | "method">;
  private readonly fsync: Histogram;
  private readonly lockWait: Histogram;
  private readonly batch: Histogram;
  private readonly entries: Counter;
  private readonly bytes: Counter;
  private readonly cache: Counter<"result">;
  private readonly notifyLag: Histogram;

  /**
   * `processMetrics` (default true): prom-client's CPU, memory, event-loop
   * and GC metrics, whose collectors stay installed for the life of the
   * process; one ServerMetrics per process should have them.
   */
  constructor(options: { readonly processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.requests = new PromCounter({
      name: "sessiond_requests_total",
      help: "Finished requests by service, method and status code (gRPC code name or HTTP status).",
      labelNames: ["service", "method", "code"],
      registers,
    });
    this.duration = new PromHistogram({
      name: "sessiond_request_duration_seconds",
      help: "Request duration from its arrival to its last byte (watch streams: their lifetime).",
      labelNames: ["service", "method"],
      buckets: LATENCY,
      registers,
    });
    this.entries = new PromCounter({
      name: "sessiond_appended_entries_total",
      help: "Entries written durably by the storage engine.",
      registers,
    });
    this.bytes = new PromCounter({
      name: "sessiond_appended_bytes_total",
      help: "Bytes of entries written durably by the storage engine.",
      registers,
    });
    this.fsync = new PromHistogram({
      name: "sessiond_fdatasync_duration_seconds",
      help: "Duration of each fdatasync / fsync of the JSONL engine (count: the number of syncs).",
      buckets: DISK,
      registers,
    });
    this.lockWait = new PromHistogram({
      name: "sessiond_lock_wait_seconds",
      help: "Time a group commit waited for its session's lock (the JSONL cross-process lease).",
      buckets: DISK,
      registers,
    });
    this.batch = new PromHistogram({
      name: "sessiond_group_commit_appends",
      help: "Appends written by one durable write (group commit).",
      buckets: BATCH,
      registers,
    });
    this.cache = new PromCounter({
      name: "sessiond_session_cache_lookups_total",
      help: "Lookups of a session in the engine's cache of parsed sessions, by result (hit, miss).",
      labelNames: ["result"],
      registers,
    });
    this.notifyLag = new PromHistogram({
      name: "sessiond_pg_notify_lag_seconds",
      help: "Time from a replica's NOTIFY to its arrival here (PostgreSQL; includes clock skew).",
      buckets: LATENCY,
      registers,
    });
    const fsync = new HistogramSeries(this.fsync, {});
    const lockWait = new HistogramSeries(this.lockWait, {});
    const batch = new HistogramSeries(this.batch, {});
    const entries = new CounterSeries(this.entries, {});
    const bytes = new CounterSeries(this.bytes, {});
    const hits = new CounterSeries(this.cache, { result: "hit" });
    const misses = new CounterSeries(this.cache, { result: "miss" });
    this.storage = {
      synced: (seconds) => fsync.observe(seconds),
      lockWaited: (seconds) => lockWait.observe(seconds),
      committed: (appends, n, size) => {
        batch.observe(appends);
        entries.inc(n);
        bytes.inc(size);
      },
      cacheLookup: (hit) => (hit ? hits : misses).inc(1),
      notified: (lag) => this.notifyLag.observe(Math.max(0, lag)),
    };
  }

  /** Maps the storage engine's reports to these metrics: pass it as the engine's `observer`. */
  readonly storage: StorageObserver;

  /** Counts a finished call: CallLog's observer. */
  readonly call: CallObserver = (method, code, seconds) => {
    const series = this.methodSeries(method);
    series.code(code).inc(1);
    series.duration.observe(seconds);
  };

  /** The series of each method (and of each of its codes), made on first use. */
  private readonly byMethodSeries = new Map<string | undefined, MethodSeries>();

  private methodSeries(method: string | undefined): MethodSeries {
    let series = this.byMethodSeries.get(method);
    if (series === undefined) {
      const labels = this.methodLabels(method);
      const codes = new Map<string, CounterSeries>();
      series = {
        duration: new HistogramSeries(this.duration, labels),
        code: (code) => {
          let c = codes.get(code);
          if (c === undefined) {
            c = new CounterSeries(this.requests, this.codeLabels(labels, code));
            codes.set(code, c);
          }
          return c;
        },
      };
      this.byMethodSeries.set(method, series);
    }
    return series;
  }

  /**
   * The label objects of each method and of each method and code, made once:
   * a call counts with objects it does not build. Both keys are bounded (the
   * served methods or "unknown", the status codes), like the series.
   */
  private readonly byMethod = new Map<string | undefined, MethodLabels>();
  private readonly byCode = new Map<MethodLabels, Map<string, CodeLabels>>();

  private methodLabels(method: string | undefined): MethodLabels {
    let labels = this.byMethod.get(method);
    if (labels === undefined) {
      const slash = method?.lastIndexOf("/") ?? -1;
      labels =
        method === undefined || slash < 0
          ? { service: "unknown", method: "unknown" }
          : { service: method.slice(0, slash), method: method.slice(slash + 1) };
      this.byMethod.set(method, labels);
    }
    return labels;
  }

  private codeLabels(labels: MethodLabels, code: string): CodeLabels {
    let codes = this.byCode.get(labels);
    if (codes === undefined) {
      codes = new Map();
      this.byCode.set(labels, codes);
    }
    let withCode = codes.get(code);
    if (withCode === undefined) {
      withCode = { ...labels, code };
      codes.set(code, withCode);
    }
    return withCode;
  }

  /** Registers the gauges read at scrape time from `sources`. */
  watch(sources: MetricSources): void {
    const registers = [this.registry];
    new Gauge({
      name: "sessiond_watch_streams",
      help: "Open watch streams (WatchEntries and WatchSessions); capped by --max-watchers.",
      registers,
      collect() {
        this.set(sources.watchStreams());
      },
    });
    new Gauge({
      name: "sessiond_watch_sessions_subscribers",
      help: "Open WatchSessions streams.",
      registers,
      collect() {
        this.set(sources.sessionWatchers());
      },
    });
    new Gauge({
      name: "sessiond_session_watchers_top",
      help: `WatchEntries streams of the sessions watched most, by rank (1 = the most watched; ranks 1-${WATCHER_RANKS}, 0 when fewer sessions are watched); capped by --max-watchers-per-session.`,
      labelNames: ["rank"],
      registers,
      collect() {
        const top = sources.topWatchers(WATCHER_RANKS);
        for (let rank = 1; rank <= WATCHER_RANKS; rank++) {
          this.set({ rank: String(rank) }, top[rank - 1] ?? 0);
        }
      },
    });
    new Gauge({
      name: "sessiond_session_cache_sessions",
      help: "Parsed sessions the engine holds in memory.",
      registers,
      collect() {
        this.set(sources.engine().cachedSessions ?? 0);
      },
    });
    new Gauge({
      name: "sessiond_pg_pool_connections",
      help: "PostgreSQL pool: statements running (in_use), waiting for a connection (waiting), and the pool size (size).",
      labelNames: ["state"],
      registers,
      collect() {
        const pool = sources.engine().pool;
        if (pool === undefined) return;
        this.set({ state: "in_use" }, pool.inUse);
        this.set({ state: "waiting" }, pool.waiting);
        this.set({ state: "size" }, pool.size);
      },
    });
  }
}

/** A method's request series: its duration histogram and its counter per code. */
interface MethodSeries {
  readonly duration: HistogramSeries;
  code(code: string): CounterSeries;
}

/**
 * prom-client keeps a metric's series in `hashMap`, by a string it builds
 * from the labels on EVERY call (hashObject), with an object or two per
 * call: ~1 us and ~150 bytes each, eight times per append. A series object
 * finds its label set's entry there once and updates it in place, as
 * prom-client's own inc / observe would (metrics.test.ts checks the text
 * and JSON exposition against theirs); the first update of a series, or
 * one after a reset (a new hashMap), goes through prom-client's API, which
 * makes the entry. The shapes read here are prom-client 15.1's (pinned).
 */
interface Internals<E> {
  readonly hashMap: Record<string, E & { readonly labels: Record<string, string | number> }>;
}

/** An entry of a counter's hashMap. */
interface CounterEntry {
  value: number;
}

/** An entry of a histogram's hashMap. */
interface HistogramEntry {
  sum: number;
  count: number;
  bucketValues: Record<string, number>;
}

/** The entry of `labels` in `map`, if there is one. */
function entryOf<E>(
  map: Internals<E>["hashMap"],
  labels: Record<string, string | number>,
): E | undefined {
  const keys = Object.keys(labels);
  for (const entry of Object.values(map)) {
    const l = entry.labels;
    if (Object.keys(l).length === keys.length && keys.every((k) => l[k] === labels[k])) {
      return entry;
    }
  }
  return undefined;
}

/** One label set of a counter, incremented in place. */
export class CounterSeries {
  private entry: CounterEntry | undefined;
  private map: object | undefined;

  constructor(
    private readonly counter: Counter<string>,
    private readonly labels: Record<string, string>,
  ) {}

  inc(n: number): void {
    const internals = this.counter as unknown as Internals<CounterEntry>;
    const entry = this.entry;
    if (entry !== undefined && this.map === internals.hashMap) {
      entry.value += n;
      return;
    }
    this.counter.inc(this.labels, n);
    this.map = internals.hashMap;
    this.entry = entryOf(internals.hashMap, this.labels);
  }
}

/** One label set of a histogram, observed in place. */
export class HistogramSeries {
  private entry: HistogramEntry | undefined;
  private map: object | undefined;
  private readonly bounds: readonly number[];

  constructor(
    private readonly histogram: Histogram<string>,
    private readonly labels: Record<string, string>,
  ) {
    this.bounds = (histogram as unknown as { upperBounds: readonly number[] }).upperBounds;
    this.keys = this.bounds.map(String);
  }

  /** The bounds as the keys of `bucketValues` (a number key is made a string on every use). */
  private readonly keys: readonly string[];

  observe(v: number): void {
    const internals = this.histogram as unknown as Internals<HistogramEntry>;
    const entry = this.entry;
    // prom-client refuses a value that is not a finite number: left to it.
    if (entry !== undefined && this.map === internals.hashMap && Number.isFinite(v)) {
      entry.sum += v;
      entry.count += 1;
      const bounds = this.bounds;
      for (let i = 0; i < bounds.length; i++) {
        if (v <= (bounds[i] as number)) {
          const key = this.keys[i] as string;
          entry.bucketValues[key] = (entry.bucketValues[key] as number) + 1;
          break;
        }
      }
      return;
    }
    this.histogram.observe(this.labels, v);
    this.map = internals.hashMap;
    this.entry = entryOf(internals.hashMap, this.labels);
  }
}
