/**
 * Scenario 3: durable Append from 64 concurrent callers on ONE session (group
 * commit territory: one writer, many queued appends). Target: throughput
 * >= 0.5 × echo throughput at 64 in flight, and the log must read back with
 * seqs dense 1..head and every acknowledged entry present exactly once.
 */
import type { BenchContext, Scenario } from "../lib/context.js";
import { atLeast, type Row } from "../lib/row.js";
import { median } from "../lib/stats.js";
import { nonDurableSwitches } from "./s1-append-sequential.js";
import { IN_FLIGHT, measureThroughput, pairedRatios } from "./s2-append-many-sessions.js";

export const appendOneSession: Scenario = {
  id: "3",
  title: "durable Append, 64 clients on ONE session (group commit)",
  async run(ctx: BenchContext): Promise<Row[]> {
    const m = await measureThroughput(ctx, "s3", 1);
    const sd = median(m.sd.map((r) => r.opsPerSec));
    const echo = median(m.echo.map((r) => r.opsPerSec));
    const checks = m.sd.map((r) => r.check);
    const dense = checks.every((c) => c?.dense === true);
    const bad = nonDurableSwitches(m.serverArgs);
    ctx.log(`seqs dense: ${dense} (${checks.map((c) => c?.entries).join(", ")} entries read back)`);
    const row = atLeast(
      {
        id: "3",
        scenario: "durable Append, 64 clients on ONE session",
        unit: "ops/s",
        sessiond: sd,
        baseline: echo,
        baselineName: "echo ops/s, 64 in flight",
        details: {
          seqsDense: dense,
          denseChecks: checks,
          durability: {
            ok: bad.length === 0,
            serverArgs: m.serverArgs.join(" "),
            nonDurableSwitches: bad,
          },
          medianOfPairedRatios: median(pairedRatios(m.sd, m.echo)),
          pairedRatios: pairedRatios(m.sd, m.echo),
          inFlight: IN_FLIGHT,
          sessions: 1,
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
      0.5,
    );
    return [dense && bad.length === 0 ? row : { ...row, pass: false }];
  },
};
