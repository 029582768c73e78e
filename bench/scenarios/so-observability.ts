/**
 * Scenario o: what metrics cost on the workloads of rows 1 and 2. Two
 * servers run side by side on data dirs of the same disk, one with
 * metrics (the default) and one with `--metrics off`; tracing is disabled
 * in both (no OpenTelemetry SDK: the API's no-op, which is always on the
 * path). The metrics server is scraped once a second while it is measured,
 * far more often than Prometheus would. Runs alternate between the two,
 * the order flipping each repetition; the ratios are metrics-on over
 * metrics-off, and "within noise" is the target: p50 latency at most 5 %
 * higher, throughput at least 95 %.
 *
 * `npm run bench -- --only o` (about 2 minutes; on a quiet box).
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import { runClient, startSessiond } from "../lib/procs.js";
import { atLeast, atMost, type Row } from "../lib/row.js";
import { median, type Summary } from "../lib/stats.js";
import { IN_FLIGHT, type Throughput } from "./s2-append-many-sessions.js";

type Side = "on" | "off";

/** Runs `measure` with /metrics of `url` scraped every second meanwhile. */
async function scraped<T>(url: string, measure: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => {
    void fetch(`${url}/metrics`)
      .then((r) => r.text())
      .catch(() => undefined);
  }, 1000);
  try {
    return await measure();
  } finally {
    clearInterval(timer);
  }
}

/** Each repetition measures both sides back to back, the order flipping. */
async function alternate<T>(
  ctx: BenchContext,
  reps: number,
  what: string,
  measure: (side: Side) => Promise<T>,
): Promise<Record<Side, T[]>> {
  const runs: Record<Side, T[]> = { on: [], off: [] };
  for (let r = 0; r < reps; r++) {
    const order: Side[] = r % 2 === 0 ? ["on", "off"] : ["off", "on"];
    ctx.log(`repetition ${r + 1}/${reps}: ${what}, metrics ${order.join(" then ")}`);
    for (const side of order) runs[side].push(await measure(side));
  }
  return runs;
}

const paired = (a: readonly number[], b: readonly number[]) => a.map((x, i) => x / (b[i] ?? NaN));

export const observabilityCost: Scenario = {
  id: "o",
  title: "metrics on vs off (tracing disabled) on the workloads of rows 1 and 2",
  async run(ctx: BenchContext): Promise<Row[]> {
    const servers = {
      on: await startSessiond(["--data-dir", mkdtempSync(join(ctx.tmpDir, "so-on-"))]),
      off: await startSessiond([
        "--data-dir",
        mkdtempSync(join(ctx.tmpDir, "so-off-")),
        "--metrics",
        "off",
      ]),
    };
    try {
      const within = (side: Side, measure: () => Promise<unknown>) =>
        side === "on" ? scraped(servers.on.url, measure) : measure();

      const n = ctx.quick ? 200 : 2000;
      const warmup = ctx.quick ? 50 : 200;
      const latency = await alternate(
        ctx,
        ctx.quick ? 1 : 4,
        `${n} sequential appends`,
        (side) =>
          within(side, () =>
            runClient<Summary>("clients/rpc-unary.ts", {
              target: "sessiond",
              url: servers[side].url,
              mode: "latency",
              warmup,
              n,
            }),
          ) as Promise<Summary>,
      );

      const durationMs = ctx.quick ? 1000 : 3000;
      const throughput = await alternate(
        ctx,
        ctx.quick ? 1 : 6,
        `${IN_FLIGHT} in flight on ${IN_FLIGHT} sessions, ${durationMs} ms`,
        (side) =>
          within(side, () =>
            runClient<Throughput>("clients/rpc-unary.ts", {
              target: "sessiond",
              url: servers[side].url,
              mode: "throughput",
              warmup: ctx.quick ? 256 : 1024,
              concurrency: IN_FLIGHT,
              durationMs,
              sessions: IN_FLIGHT,
            }),
          ) as Promise<Throughput>,
      );

      const p50 = (side: Side) => latency[side].map((r) => r.p50);
      const ops = (side: Side) => throughput[side].map((r) => r.opsPerSec);
      return [
        atMost(
          {
            id: "o1",
            scenario: "row 1 workload (sequential Append), metrics on vs off",
            unit: "p50 ms",
            sessiond: median(p50("on")),
            baseline: median(p50("off")),
            baselineName: "same with --metrics off",
            details: {
              pairedRatios: paired(p50("on"), p50("off")),
              p99: {
                on: median(latency.on.map((r) => r.p99)),
                off: median(latency.off.map((r) => r.p99)),
              },
              callsPerRepetition: n,
              runs: latency,
            },
          },
          1.05,
        ),
        atLeast(
          {
            id: "o2",
            scenario: "row 2 workload (64 clients, 64 sessions), metrics on vs off",
            unit: "ops/s",
            sessiond: median(ops("on")),
            baseline: median(ops("off")),
            baselineName: "same with --metrics off",
            details: {
              pairedRatios: paired(ops("on"), ops("off")),
              inFlight: IN_FLIGHT,
              durationMs,
              runs: throughput,
            },
          },
          0.95,
        ),
      ];
    } finally {
      await servers.on.stop();
      await servers.off.stop();
    }
  },
};
