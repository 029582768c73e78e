/**
 * Scenario 7: WatchEntries fan-out on one session with 1, 100 and 1,000
 * watchers; one writer appends one entry at a time and waits until every
 * watcher has it; latency = append call start → receipt by the LAST
 * watcher (watchers and writer in one client process, one clock). Baseline:
 * the same number of Subscribe streams on the echo server, Publish → last
 * receipt. Targets: 1 watcher p50 <= 2 ms (absolute); 100 and 1,000
 * watchers p99 <= 1.5 × echo p99. Median of each statistic over repetitions.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import { runClient, startEcho, startSessiond } from "../lib/procs.js";
import { absoluteAtMost, atMost, type Row } from "../lib/row.js";
import { median, type Summary } from "../lib/stats.js";

interface Fanout extends Summary {
  mean: number;
  openMs: number;
  connections: number;
}

const WATCHERS = [1, 100, 1000] as const;
const PER_CONNECTION = 250;

export const watchFanout: Scenario = {
  id: "7",
  title: "WatchEntries fan-out: 1, 100, 1,000 watchers on one session; append → last receipt",
  async run(ctx: BenchContext): Promise<Row[]> {
    const reps = ctx.quick ? 1 : 3;
    // p99 of 100+ rounds is the 2nd largest or better; 1,000 watchers cost ~0.1 s a round.
    const roundsOf = (watchers: number) => (ctx.quick ? 20 : watchers >= 1000 ? 100 : 200);
    const warmup = ctx.quick ? 5 : 20;
    const sd = await startSessiond([
      "--data-dir",
      mkdtempSync(join(ctx.tmpDir, "s7-")),
      "--max-watchers-per-session",
      "2000",
    ]);
    const rows: Row[] = [];
    try {
      const echo = await startEcho();
      try {
        for (const watchers of WATCHERS) {
          const rounds = roundsOf(watchers);
          const sdRuns: Fanout[] = [];
          const echoRuns: Fanout[] = [];
          const common = { watchers, rounds, warmup, perConnection: PER_CONNECTION };
          const fanout = (target: "echo" | "sessiond") =>
            runClient<Fanout>("clients/rpc-watch-fanout.ts", {
              ...common,
              target,
              url: target === "echo" ? echo.url : sd.url,
            });
          for (let r = 0; r < reps; r++) {
            // Alternate the order so that neither side always runs first.
            const echoFirst = r % 2 === 0;
            ctx.log(
              `${watchers} watcher(s), repetition ${r + 1}/${reps}: ${echoFirst ? "echo, then sessiond" : "sessiond, then echo"} (${rounds} rounds)`,
            );
            if (echoFirst) echoRuns.push(await fanout("echo"));
            sdRuns.push(await fanout("sessiond"));
            if (!echoFirst) echoRuns.push(await fanout("echo"));
          }
          const med = (runs: readonly Fanout[], k: "p50" | "p99" | "openMs") =>
            median(runs.map((x) => x[k]));
          const details = {
            watchers,
            connections: sdRuns[0]?.connections,
            streamsPerConnection: Math.min(watchers, PER_CONNECTION),
            repetitions: reps,
            rounds,
            warmup,
            sessiondP50: med(sdRuns, "p50"),
            sessiondP99: med(sdRuns, "p99"),
            echoP50: med(echoRuns, "p50"),
            echoP99: med(echoRuns, "p99"),
            sessiondOpenMs: med(sdRuns, "openMs"),
            echoOpenMs: med(echoRuns, "openMs"),
            runs: { sessiond: sdRuns, echo: echoRuns },
          };
          if (watchers === 1) {
            rows.push(
              absoluteAtMost(
                {
                  id: "7/1",
                  scenario: "WatchEntries, 1 watcher: append → receipt",
                  unit: "p50 ms",
                  sessiond: details.sessiondP50,
                  details,
                },
                2,
              ),
            );
          } else {
            rows.push(
              atMost(
                {
                  id: `7/${watchers}`,
                  scenario: `WatchEntries, ${watchers} watchers: append → last receipt`,
                  unit: "p99 ms",
                  sessiond: details.sessiondP99,
                  baseline: details.echoP99,
                  baselineName: "echo fan-out p99 (Publish → last receipt)",
                  details,
                },
                1.5,
              ),
            );
          }
        }
      } finally {
        await echo.stop();
      }
    } finally {
      await sd.stop();
    }
    return rows;
  },
};
