/**
 * Scenario 5: the first GetState after a server restart on the 100k-entry
 * (~90 MB) session of row 4 (nothing cached in the server; the file is in
 * the OS page cache, as it is for the floor).
 *
 * 5/time: time of that first call (client side, on a connection opened
 *   beforehand with a health check), plus any start-up excess of the server
 *   on this data dir over an empty one (CPU time used by "listening", see
 *   timedStart in bench/lib/floors.ts: work done before listening belongs to
 *   the restart), vs the parse floor: read + split +
 *   JSON.parse of the very same file in a fresh process. Target <= 1.5 ×.
 * 5/heap: peak server memory growth during the call (VmHWM after the call −
 *   VmRSS before it, the peak counter reset first) vs the file size.
 *   Target <= 2.5 ×.
 *
 * Each repetition restarts the server; medians over repetitions.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import { CALIBRATION_PAIRS, type FloorResult, RestartMeter } from "../lib/floors.js";
import { bigSession } from "../lib/generate.js";
import { memoryOf, resetPeak, runClient } from "../lib/procs.js";
import { atMost, type Row } from "../lib/row.js";
import { median } from "../lib/stats.js";

interface FirstCall {
  firstMs: number;
  responseBytes: number;
  count: number;
}

const MB = 1024 * 1024;

export const getStateCold: Scenario = {
  id: "5",
  title: "first GetState after a server restart on a 100k-entry (~90 MB) session",
  async run(ctx: BenchContext): Promise<Row[]> {
    const big = await bigSession(ctx.tmpDir, ctx.quick);
    const emptyDir = join(ctx.tmpDir, "s5-empty");
    mkdirSync(emptyDir, { recursive: true });
    const reps = ctx.quick ? 1 : 3;
    const firstMs: number[] = [];
    const growth: number[] = [];
    const rssBefore: number[] = [];
    const rssAfter: number[] = [];
    const floors: FloorResult[] = [];
    const restarts = new RestartMeter(big.dataDir, emptyDir);
    for (let r = 0; r < reps; r++) {
      ctx.log(`repetition ${r + 1}/${reps}: restart, first GetState, parse floor`);
      await restarts.restart(async (server) => {
        resetPeak(server.pid);
        const before = memoryOf(server.pid);
        const call = await runClient<FirstCall>("clients/data-first-call.ts", {
          url: server.url,
          call: "getState",
          sessionId: big.sessionId,
        });
        const after = memoryOf(server.pid);
        if (call.count !== big.pathLength - 1) {
          throw new Error(
            `GetState returned ${call.count} messages, expected ${big.pathLength - 1}`,
          );
        }
        firstMs.push(call.firstMs);
        growth.push(after.peak - before.rss);
        rssBefore.push(before.rss);
        rssAfter.push(after.rss);
      });
      const floor = await runClient<FloorResult>("clients/data-floor.ts", {
        kind: "parse",
        file: big.file,
      });
      if (floor.count !== big.entries) throw new Error(`parse floor saw ${floor.count} lines`);
      floors.push(floor);
    }
    await restarts.calibrate(ctx.quick ? 0 : CALIBRATION_PAIRS);
    const excess = restarts.excessMs;
    const floorMs = median(floors.map((f) => f.ms));
    return [
      atMost(
        {
          id: "5/time",
          scenario: `first GetState after restart, ${big.entries} entries (${(big.bytes / 1e6).toFixed(0)} MB)`,
          unit: "ms",
          sessiond: median(firstMs) + excess,
          baseline: floorMs,
          baselineName: "parse floor (read+split+JSON.parse, fresh process)",
          details: {
            firstCallMs: firstMs,
            ...restarts.details(),
            floorMs: floors.map((f) => f.ms),
            fileBytes: big.bytes,
          },
        },
        1.5,
      ),
      atMost(
        {
          id: "5/heap",
          scenario: "peak server memory growth during that first GetState",
          unit: "MB",
          sessiond: median(growth) / MB,
          baseline: big.bytes / MB,
          baselineName: "file size",
          details: {
            growthMB: growth.map((g) => g / MB),
            rssBeforeMB: rssBefore.map((g) => g / MB),
            rssAfterMB: rssAfter.map((g) => g / MB),
          },
        },
        2.5,
      ),
    ];
  },
};
