/**
 * Scenario u: UsageReport (issue 42) for one day over 10,000 sessions /
 * ~200,000 entries (row 6's small linear sessions, all started that day,
 * assistant turns with usage; tagged team=t<i mod 5>): hour buckets, by
 * model, grouped by team, in one call.
 *
 * u/jsonl-cold: the first report after a restart (client side, plus any
 *   start-up excess over an empty data dir, as 6/cold) vs the listing's
 *   cold floor measured in the same run the way row 6 does (readdir + the
 *   first line of each file, fresh process). Target <= 1.5 ×. The first
 *   repetition finds no listing index (the bench wrote the files) and
 *   counts every log; the median is of the restarts that read the index.
 * u/jsonl-warm: p50 of the calls after the first, vs the same floor, <= 1.5 ×.
 * u/pg-warm: the same sessions loaded through the engine into a throwaway
 *   PostgreSQL cluster; p50 of warm reports against `sessiond serve
 *   --storage postgres://…` (the first call counts every session into the
 *   usage table and is reported in the details); <= 50 ms.
 *
 * --quick: 500 sessions, 1 repetition.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createDatabase } from "../../test/harness/postgres.js";
import type { BenchContext, Scenario } from "../lib/context.js";
import { CALIBRATION_PAIRS, type FloorResult, RestartMeter } from "../lib/floors.js";
import { sessionsDirOf, writeSessiondFiles } from "../lib/generate.js";
import { startPgSessiond, withPostgres } from "../lib/pg-common.js";
import { runClient } from "../lib/procs.js";
import { absoluteAtMost, atMost, type Row } from "../lib/row.js";
import { median, summarize } from "../lib/stats.js";
import { billedCount, dayConversations, USAGE_DAY_MS } from "../lib/usage-data.js";

interface Call {
  firstMs: number;
  warm: number[];
  messages: number;
  sessions: number;
  rows: number;
}

function check(call: Call, messages: number, sessions: number, where: string): void {
  if (call.messages !== messages || call.sessions !== sessions) {
    throw new Error(
      `${where}: the report summed ${call.messages} messages of ${call.sessions} sessions, expected ${messages} of ${sessions}`,
    );
  }
}

export const usageReport: Scenario = {
  id: "u",
  title: "UsageReport for a day over 10,000 sessions",
  async run(ctx: BenchContext): Promise<Row[]> {
    const count = ctx.quick ? 500 : 10_000;
    const reps = ctx.quick ? 1 : 5;
    const warmCalls = ctx.quick ? 10 : 50;
    const cs = dayConversations(count);
    const messages = billedCount(cs);
    const dataDir = join(ctx.tmpDir, "su-sessiond");
    const bytes = writeSessiondFiles(dataDir, cs);
    const emptyDir = join(ctx.tmpDir, "su-empty");
    mkdirSync(emptyDir, { recursive: true });
    const entries = cs.reduce((n, c) => n + c.entries.length + 1, 0);
    ctx.log(
      `${count} sessions, ${entries} entries (${messages} billed), ${(bytes / 1e6).toFixed(0)} MB`,
    );

    const firstMs: number[] = [];
    let warm: number[] = [];
    const floors: FloorResult[] = [];
    const restarts = new RestartMeter(dataDir, emptyDir);
    for (let r = 0; r < reps; r++) {
      ctx.log(`repetition ${r + 1}/${reps}: restart + report, first-line floor`);
      await restarts.restart(async (server) => {
        const call = await runClient<Call>("clients/usage-report.ts", {
          url: server.url,
          startMs: USAGE_DAY_MS,
          warm: r === reps - 1 ? warmCalls : 0,
        });
        check(call, messages, count, "JSONL");
        firstMs.push(call.firstMs);
        if (call.warm.length > 0) warm = call.warm;
      });
      const floor = await runClient<FloorResult>("clients/data-floor.ts", {
        kind: "first-line",
        dir: sessionsDirOf(dataDir),
      });
      if (floor.count !== count) throw new Error(`first-line floor read ${floor.count} files`);
      floors.push(floor);
    }
    await restarts.calibrate(ctx.quick ? 0 : CALIBRATION_PAIRS);
    const floorMs = median(floors.map((f) => f.ms));
    // The first restart rebuilds the index from the logs: not a cold start of a running store.
    const indexed = firstMs.length > 1 ? firstMs.slice(1) : firstMs;
    const w = summarize(warm);
    const pg = await withPostgres(ctx, "u/pg", async (serverUrl) => {
      const db = await createDatabase(serverUrl, "sessiond_bench_usage");
      try {
        await runClient("clients/usage-load.ts", { url: db.url, count });
        const pgWarm: number[] = [];
        const pgFirst: number[] = [];
        for (let r = 0; r < (ctx.quick ? 1 : 3); r++) {
          const sd = await startPgSessiond(db.url);
          try {
            const call = await runClient<Call>("clients/usage-report.ts", {
              url: sd.url,
              startMs: USAGE_DAY_MS,
              warm: warmCalls,
            });
            check(call, messages, count, "PostgreSQL");
            pgFirst.push(call.firstMs);
            pgWarm.push(median(call.warm));
          } finally {
            await sd.stop();
          }
        }
        return [
          absoluteAtMost(
            {
              id: "u/pg-warm",
              scenario: `UsageReport, a day over ${count} sessions, PostgreSQL, warm`,
              unit: "p50 ms",
              sessiond: median(pgWarm),
              details: { p50PerServer: pgWarm, firstCallMs: pgFirst, sessions: count, entries },
            },
            50,
          ),
        ];
      } finally {
        await db.drop();
      }
    });
    return [
      atMost(
        {
          id: "u/jsonl-cold",
          scenario: `first UsageReport of a day over ${count} sessions after restart`,
          unit: "ms",
          sessiond: median(indexed) + restarts.excessMs,
          baseline: floorMs,
          baselineName: "first-line floor (fresh process)",
          details: {
            firstCallMs: firstMs,
            ...restarts.details(),
            floorMs: floors.map((f) => f.ms),
            sessions: count,
            entries,
          },
        },
        1.5,
      ),
      atMost(
        {
          id: "u/jsonl-warm",
          scenario: `UsageReport of a day over ${count} sessions, JSONL, warm`,
          unit: "p50 ms",
          sessiond: w.p50,
          baseline: floorMs,
          baselineName: "first-line floor (fresh process)",
          details: { p99: w.p99, calls: w.n },
        },
        1.5,
      ),
      ...pg,
    ];
  },
};
