import fc from "fast-check";
import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ServerMetrics } from "./metrics.js";

/**
 * ServerMetrics updates its per-call series in place (CounterSeries,
 * HistogramSeries) instead of through prom-client's inc / observe: a scrape
 * must read exactly what prom-client's own API would have recorded.
 */

const LATENCY = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DISK = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const BATCH = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/** The same metrics fed through prom-client's API, as ServerMetrics did before. */
function reference() {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: "sessiond_requests_total",
    help: "x",
    labelNames: ["service", "method", "code"],
    registers,
  });
  const duration = new Histogram({
    name: "sessiond_request_duration_seconds",
    help: "x",
    labelNames: ["service", "method"],
    buckets: LATENCY,
    registers,
  });
  const entries = new Counter({ name: "sessiond_appended_entries_total", help: "x", registers });
  const bytes = new Counter({ name: "sessiond_appended_bytes_total", help: "x", registers });
  const fsync = new Histogram({
    name: "sessiond_fdatasync_duration_seconds",
    help: "x",
    buckets: DISK,
    registers,
  });
  const lockWait = new Histogram({
    name: "sessiond_lock_wait_seconds",
    help: "x",
    buckets: DISK,
    registers,
  });
  const batch = new Histogram({
    name: "sessiond_group_commit_appends",
    help: "x",
    buckets: BATCH,
    registers,
  });
  const cache = new Counter({
    name: "sessiond_session_cache_lookups_total",
    help: "x",
    labelNames: ["result"],
    registers,
  });
  return {
    registry,
    call(method: string | undefined, code: string, seconds: number) {
      const slash = method?.lastIndexOf("/") ?? -1;
      const labels =
        method === undefined || slash < 0
          ? { service: "unknown", method: "unknown" }
          : { service: method.slice(0, slash), method: method.slice(slash + 1) };
      requests.inc({ ...labels, code });
      duration.observe(labels, seconds);
    },
    synced: (s: number) => fsync.observe(s),
    lockWaited: (s: number) => lockWait.observe(s),
    committed(a: number, n: number, size: number) {
      batch.observe(a);
      entries.inc(n);
      bytes.inc(size);
    },
    cacheLookup: (hit: boolean) => cache.inc({ result: hit ? "hit" : "miss" }),
  };
}

/** Each metric's samples, HELP lines aside (the reference's help texts are placeholders). */
async function samples(registry: Registry, names: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const name of names) {
    const text = await registry.getSingleMetricAsString(name);
    out.push(...text.split("\n").filter((l) => !l.startsWith("# HELP")));
  }
  return out;
}

const NAMES = [
  "sessiond_requests_total",
  "sessiond_request_duration_seconds",
  "sessiond_appended_entries_total",
  "sessiond_appended_bytes_total",
  "sessiond_fdatasync_duration_seconds",
  "sessiond_lock_wait_seconds",
  "sessiond_group_commit_appends",
  "sessiond_session_cache_lookups_total",
];

const step = fc.oneof(
  fc.record({
    kind: fc.constant("call" as const),
    method: fc.constantFrom(
      "sessiond.v1.SessionService/Append",
      "sessiond.v1.StoreService/GetSession",
      undefined,
    ),
    code: fc.constantFrom("ok", "NotFound", "Canceled"),
    seconds: fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(0, 0.001, 10)),
  }),
  fc.record({
    kind: fc.constant("storage" as const),
    synced: fc.double({ min: 0, max: 2, noNaN: true }),
    appends: fc.integer({ min: 1, max: 300 }),
    entries: fc.integer({ min: 1, max: 1000 }),
    bytes: fc.integer({ min: 1, max: 10_000_000 }),
    hit: fc.boolean(),
  }),
  fc.constant({ kind: "reset" as const }),
);

describe("ServerMetrics: series updated in place", () => {
  it("expose what prom-client's own inc and observe record, resets included", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const fast = new ServerMetrics({ processMetrics: false });
        const ref = reference();
        for (const s of steps) {
          if (s.kind === "call") {
            fast.call(s.method, s.code, s.seconds);
            ref.call(s.method, s.code, s.seconds);
          } else if (s.kind === "storage") {
            for (const m of [fast.storage, ref]) {
              m.synced(s.synced);
              m.lockWaited(s.synced / 2);
              m.committed(s.appends, s.entries, s.bytes);
              m.cacheLookup(s.hit);
            }
          } else {
            fast.registry.resetMetrics();
            ref.registry.resetMetrics();
          }
        }
        expect(await samples(fast.registry, NAMES)).toEqual(await samples(ref.registry, NAMES));
        expect(
          (await fast.registry.getMetricsAsJSON()).filter((m) => NAMES.includes(m.name)),
        ).toEqual(
          (await ref.registry.getMetricsAsJSON())
            .filter((m) => NAMES.includes(m.name))
            .map((m) => ({
              ...m,
              help: expect.any(String),
            })),
        );
      }),
      { numRuns: 300 },
    );
  });
});
