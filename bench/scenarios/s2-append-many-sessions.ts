/**
 * Scenario 2: durable Append from 64 concurrent callers, each on its own
 * session (64 calls always in flight over one HTTP/2 connection, from one
 * client process). Target: throughput >= 0.7 × echo throughput at the same
 * 64 in flight, measured in this run, interleaved, median over repetitions.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import { runClient, startEcho, startSessiond } from "../lib/procs.js";
import { atLeast, type Row } from "../lib/row.js";
import { median } from "../lib/stats.js";
import { nonDurableSwitches } from "./s1-append-sequential.js";

export interface Throughput {
  ops: number;
  seconds: number;
  opsPerSec: number;
  p50: number;
  p99: number;
  check?: { dense: boolean; sessions: number; entries: number; problems: string[] };
}

export const IN_FLIGHT = 64;

/** sessiond / echo of each repetition (the two ran back to back): robust to drifting load. */
export function pairedRatios(sd: readonly Throughput[], echo: readonly Throughput[]): number[] {
  return sd.map((r, i) => r.opsPerSec / (echo[i]?.opsPerSec ?? Number.NaN));
}

/**
 * Runs `reps` × (echo at 64 in flight, then sessiond at 64 in flight over
 * `sessions` sessions) and returns both series.
 */
export async function measureThroughput(
  ctx: BenchContext,
  name: string,
  sessions: number,
): Promise<{
  sd: Throughput[];
  echo: Throughput[];
  durationMs: number;
  warmup: number;
  serverArgs: string[];
}> {
  const reps = ctx.quick ? 1 : 5;
  const durationMs = ctx.quick ? 1000 : 3000;
  const warmup = ctx.quick ? 256 : 1024;
  const serverArgs = ["--data-dir", mkdtempSync(join(ctx.tmpDir, `${name}-`))];
  const sd = await startSessiond(serverArgs);
  try {
    const echo = await startEcho();
    try {
      const sdRuns: Throughput[] = [];
      const echoRuns: Throughput[] = [];
      const common = { mode: "throughput", warmup, concurrency: IN_FLIGHT, durationMs };
      const runEcho = async () =>
        echoRuns.push(
          await runClient<Throughput>("clients/rpc-unary.ts", {
            ...common,
            target: "echo",
            url: echo.url,
          }),
        );
      const runSessiond = async () =>
        sdRuns.push(
          await runClient<Throughput>("clients/rpc-unary.ts", {
            ...common,
            target: "sessiond",
            url: sd.url,
            sessions,
            checkDense: sessions === 1,
          }),
        );
      for (let r = 0; r < reps; r++) {
        // Alternate the order so that neither side always runs first.
        const echoFirst = r % 2 === 0;
        ctx.log(
          `repetition ${r + 1}/${reps}: ${echoFirst ? "echo, then sessiond" : "sessiond, then echo"} (${sessions} sessions), ${IN_FLIGHT} in flight, ${durationMs} ms each`,
        );
        if (echoFirst) {
          await runEcho();
          await runSessiond();
        } else {
          await runSessiond();
          await runEcho();
        }
      }
      return { sd: sdRuns, echo: echoRuns, durationMs, warmup, serverArgs };
    } finally {
      await echo.stop();
    }
  } finally {
    await sd.stop();
  }
}

export const appendManySessions: Scenario = {
  id: "2",
  title: "durable Append, 64 clients on 64 sessions",
  async run(ctx: BenchContext): Promise<Row[]> {
    const m = await measureThroughput(ctx, "s2", IN_FLIGHT);
    const sd = median(m.sd.map((r) => r.opsPerSec));
    const echo = median(m.echo.map((r) => r.opsPerSec));
    const bad = nonDurableSwitches(m.serverArgs);
    const row = atLeast(
      {
        id: "2",
        scenario: "durable Append, 64 clients on 64 sessions",
        unit: "ops/s",
        sessiond: sd,
        baseline: echo,
        baselineName: "echo ops/s, 64 in flight",
        details: {
          durability: {
            ok: bad.length === 0,
            serverArgs: m.serverArgs.join(" "),
            nonDurableSwitches: bad,
          },
          medianOfPairedRatios: median(pairedRatios(m.sd, m.echo)),
          pairedRatios: pairedRatios(m.sd, m.echo),
          inFlight: IN_FLIGHT,
          sessions: IN_FLIGHT,
          connections: 1,
          durationMs: m.durationMs,
          warmup: m.warmup,
          sessiondLatencyP50: median(m.sd.map((r) => r.p50)),
          sessiondLatencyP99: median(m.sd.map((r) => r.p99)),
          echoLatencyP50: median(m.echo.map((r) => r.p50)),
          echoLatencyP99: median(m.echo.map((r) => r.p99)),
          runs: { sessiond: m.sd, echo: m.echo },
        },
      },
      0.7,
    );
    return [bad.length === 0 ? row : { ...row, pass: false }];
  },
};
