/**
 * Scenario 4: GetState (CONTEXT), warm, of a 100k-entry bushy session whose
 * current path is 1,000 entries (~900-byte lines, ~90 MB; see
 * bench/lib/generate.ts), served by sessiond from its JSONL data dir.
 * Baseline (issue 40): the echo server answering the same bytes (the
 * serialized GetStateResponse, published to it once), decoded by the client
 * as a GetStateResponse exactly as sessiond's answer is. Until issue 40 it
 * answered as many opaque bytes, which the client decodes as one bytes
 * field: that figure stays in the details (echoOpaqueP50). One client
 * process calls them in alternating blocks after warming each; the median
 * over client runs of each p50 is compared. Target: p50 <= 1.5 × echo p50.
 */
import type { BenchContext, Scenario } from "../lib/context.js";
import { bigSession } from "../lib/generate.js";
import { runClient, startEcho, startSessiond } from "../lib/procs.js";
import { atMost, type Row } from "../lib/row.js";
import { median, summarize } from "../lib/stats.js";

interface GetStateRun {
  sessiond: number[];
  echo: number[];
  echoOpaque: number[];
  firstCallMs: number;
  responseBytes: number;
  messages: number;
  clientDecodeMs: number;
}

export const getStateWarm: Scenario = {
  id: "4",
  title: "GetState, warm, 100k-entry session whose current path is 1,000 entries",
  async run(ctx: BenchContext): Promise<Row[]> {
    const t0 = performance.now();
    const big = await bigSession(ctx.tmpDir, ctx.quick);
    ctx.log(
      `session of ${big.entries} entries (${(big.bytes / 1e6).toFixed(1)} MB, path ${big.pathLength}) ready in ${(performance.now() - t0).toFixed(0)} ms`,
    );
    const reps = ctx.quick ? 1 : 3;
    const sd = await startSessiond(["--data-dir", big.dataDir]);
    try {
      const echo = await startEcho();
      try {
        const runs: GetStateRun[] = [];
        for (let r = 0; r < reps; r++) {
          ctx.log(`client run ${r + 1}/${reps}: GetState and echo, alternating blocks`);
          const run = await runClient<GetStateRun>("clients/data-get-state.ts", {
            sessiondUrl: sd.url,
            echoUrl: echo.url,
            sessionId: big.sessionId,
            warmup: 3,
            rounds: ctx.quick ? 2 : 4,
            perRound: ctx.quick ? 15 : 40,
          });
          if (run.messages !== big.pathLength - 1) {
            throw new Error(
              `GetState returned ${run.messages} messages, expected ${big.pathLength - 1}`,
            );
          }
          runs.push(run);
        }
        const sdSum = runs.map((r) => summarize(r.sessiond));
        const echoSum = runs.map((r) => summarize(r.echo));
        const opaqueSum = runs.map((r) => summarize(r.echoOpaque));
        const bytes = runs[0]?.responseBytes ?? 0;
        return [
          atMost(
            {
              id: "4",
              scenario: `GetState warm, ${big.entries} entries, path ${big.pathLength}`,
              unit: "p50 ms",
              sessiond: median(sdSum.map((s) => s.p50)),
              baseline: median(echoSum.map((s) => s.p50)),
              baselineName: `echo of the same bytes (${(bytes / 1024).toFixed(0)} KB), decoded alike, p50`,
              details: {
                sessiondP99: median(sdSum.map((s) => s.p99)),
                echoP99: median(echoSum.map((s) => s.p99)),
                // The baseline before issue 40: the same number of bytes, not decoded as a state.
                echoOpaqueP50: median(opaqueSum.map((s) => s.p50)),
                ratioAgainstOpaqueEcho:
                  median(sdSum.map((s) => s.p50)) / median(opaqueSum.map((s) => s.p50)),
                callsPerRun: sdSum[0]?.n,
                runs: reps,
                responseBytes: bytes,
                fileBytes: big.bytes,
                firstCallMs: runs.map((r) => r.firstCallMs),
                clientDecodeMs: median(runs.map((r) => r.clientDecodeMs)),
              },
            },
            1.5,
          ),
        ];
      } finally {
        await echo.stop();
      }
    } finally {
      await sd.stop();
    }
  },
};
