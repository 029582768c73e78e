/**
 * Scenario 6: ListSessions, first page of 100 (newest first) among 10,000
 * top-level sessions of 10–30 entries (~600-byte lines), written directly
 * as files; the same conversations also in pi's format.
 *
 * 6/warm: p50 of repeated first-page calls after the first one; <= 10 ms.
 * 6/cold: the first call after a restart (client side, on a connection
 *   opened beforehand with a health check), plus any start-up excess of the
 *   server on this data dir over an empty one (CPU time used by "listening",
 *   see timedStart in bench/lib/floors.ts: an index built before listening
 *   belongs to the restart), vs the first-line floor
 *   (readdir + read and JSON.parse only the first line of each of the same
 *   files, fresh process). Target <= 1.5 ×.
 * 6/pi: the same sessiond figure vs pi's `SessionManager.list` over the same
 *   sessions in pi's format (fresh process). Target: sessiond ≥ 10 × faster
 *   (ratio <= 0.1).
 *
 * Each repetition restarts the server; medians over repetitions.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import { CALIBRATION_PAIRS, type FloorResult, RestartMeter } from "../lib/floors.js";
import {
  type Conversation,
  sessionsDirOf,
  smallConversations,
  writeSessiondFiles,
} from "../lib/generate.js";
import { writePiFiles } from "../lib/pi-data.js";
import { runClient } from "../lib/procs.js";
import { absoluteAtMost, atMost, type Row } from "../lib/row.js";
import { median, summarize } from "../lib/stats.js";

interface FirstCall {
  firstMs: number;
  warm: number[];
  responseBytes: number;
  count: number;
  firstId?: string;
}

interface PiRun {
  coldMs: number;
  importMs: number;
  count: number;
}

const PAGE = 100;

export const listSessions: Scenario = {
  id: "6",
  title: "ListSessions first page of 100 among 10,000 sessions",
  async run(ctx: BenchContext): Promise<Row[]> {
    const count = ctx.quick ? 500 : 10_000;
    const reps = ctx.quick ? 1 : 5;
    const t0 = performance.now();
    const cs: Conversation[] = smallConversations({
      count,
      minEntries: 10,
      maxEntries: 30,
      textBytes: 400,
      startMs: Date.UTC(2024, 0, 1),
    });
    const dataDir = join(ctx.tmpDir, "s6-sessiond");
    const sessiondBytes = writeSessiondFiles(dataDir, cs);
    const piDir = join(ctx.tmpDir, "s6-pi");
    const pi = writePiFiles(piDir, cs);
    const emptyDir = join(ctx.tmpDir, "s6-empty");
    mkdirSync(emptyDir, { recursive: true });
    const entries = cs.reduce((n, c) => n + c.entries.length + 1, 0);
    ctx.log(
      `${count} sessions, ${entries} entries: ${(sessiondBytes / 1e6).toFixed(0)} MB sessiond, ${(pi.bytes / 1e6).toFixed(0)} MB pi, written in ${(performance.now() - t0).toFixed(0)} ms`,
    );
    const newest = cs[cs.length - 1]?.sessionId;

    const firstMs: number[] = [];
    let warm: number[] = [];
    const floors: FloorResult[] = [];
    const piRuns: PiRun[] = [];
    const restarts = new RestartMeter(dataDir, emptyDir);
    for (let r = 0; r < reps; r++) {
      ctx.log(`repetition ${r + 1}/${reps}: restart + first page, first-line floor, pi list`);
      await restarts.restart(async (server) => {
        const call = await runClient<FirstCall>("clients/data-first-call.ts", {
          url: server.url,
          call: "list",
          pageSize: PAGE,
          warm: r === reps - 1 ? (ctx.quick ? 30 : 200) : 0,
        });
        if (call.count !== Math.min(PAGE, count) || call.firstId !== newest) {
          throw new Error(
            `first page has ${call.count} sessions starting at ${call.firstId}, expected ${Math.min(PAGE, count)} starting at ${newest}`,
          );
        }
        firstMs.push(call.firstMs);
        if (call.warm.length > 0) warm = call.warm;
      });

      const floor = await runClient<FloorResult>("clients/data-floor.ts", {
        kind: "first-line",
        dir: sessionsDirOf(dataDir),
      });
      if (floor.count !== count) throw new Error(`first-line floor read ${floor.count} files`);
      floors.push(floor);

      const piRun = await runClient<PiRun>("clients/data-pi.ts", { op: "list", dir: piDir });
      if (piRun.count !== count) throw new Error(`pi listed ${piRun.count} sessions of ${count}`);
      piRuns.push(piRun);
    }
    await restarts.calibrate(ctx.quick ? 0 : CALIBRATION_PAIRS);
    const cold = median(firstMs) + restarts.excessMs;
    const coldDetails = {
      firstCallMs: firstMs,
      ...restarts.details(),
      sessions: count,
      entries,
    };
    const w = summarize(warm);
    return [
      absoluteAtMost(
        {
          id: "6/warm",
          scenario: `ListSessions first page of ${PAGE} among ${count}, warm`,
          unit: "p50 ms",
          sessiond: w.p50,
          details: { p99: w.p99, calls: w.n },
        },
        10,
      ),
      atMost(
        {
          id: "6/cold",
          scenario: "first ListSessions after restart",
          unit: "ms",
          sessiond: cold,
          baseline: median(floors.map((f) => f.ms)),
          baselineName: "first-line floor (fresh process)",
          details: { ...coldDetails, floorMs: floors.map((f) => f.ms) },
        },
        1.5,
      ),
      atMost(
        {
          id: "6/pi",
          scenario: "first ListSessions after restart vs pi",
          unit: "ms",
          sessiond: cold,
          baseline: median(piRuns.map((p) => p.coldMs)),
          baselineName: "pi SessionManager.list (fresh process)",
          details: {
            ...coldDetails,
            piMs: piRuns.map((p) => p.coldMs),
            piBytes: pi.bytes,
            sessiondBytes,
          },
        },
        0.1,
      ),
    ];
  },
};
