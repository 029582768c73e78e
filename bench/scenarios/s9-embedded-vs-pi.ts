/**
 * Scenario 9: sessiond embedded (the store in the client's process, no RPC)
 * vs pi's SessionManager, same machine, same conversations (~900-byte
 * lines), each in its own fresh process.
 *
 * 9/append: time per message of sequential appends of alternating user /
 *   assistant messages; sessiond with durability OFF (the JSONL engine's
 *   debug noFsync, this row only) like pi's appendFileSync. Target <= 2 ×.
 *   Its details carry the floor of the same appends (data-append-floor.ts:
 *   sessiond's record format and fencing stat, nothing else), measured in
 *   the same repetitions: how much of the ratio is the format.
 * 9/open-cold: open + CONTEXT state of a 10k-entry session (linear) in a
 *   fresh process vs pi's `SessionManager.open` + `buildSessionContext()`
 *   in a fresh process. Target <= 1 ×.
 * 9/open-warm: the same repeated in the same process: sessiond opens the
 *   session again and folds it (its cache holds the parsed log); pi keeps a
 *   session's entries in its SessionManager and has no cache across
 *   managers, so its warm case is `buildSessionContext()` again on the open
 *   manager (a full re-open is recorded in the details). Target: sessiond ≥
 *   10 × faster (ratio <= 0.1).
 *
 * Medians over fresh-process repetitions.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import { conversation, sessionIdAt, writeSessiondFile, writeText } from "../lib/generate.js";
import { piFileText } from "../lib/pi-data.js";
import { runClient } from "../lib/procs.js";
import { atMost, type Row } from "../lib/row.js";
import { median, percentile } from "../lib/stats.js";

interface AppendRun {
  ms: number[];
  totalMs: number;
  importMs: number;
  messages: number;
}

interface OpenRun {
  coldMs: number;
  ms: number[];
  reopenMs?: number[];
  importMs: number;
  messages: number;
}

export const embeddedVsPi: Scenario = {
  id: "9",
  title: "embedded (no RPC) vs pi, same machine, same data",
  async run(ctx: BenchContext): Promise<Row[]> {
    const reps = ctx.quick ? 1 : 5;
    const appendCount = ctx.quick ? 300 : 2000;
    const warmup = ctx.quick ? 50 : 200;
    const entries = ctx.quick ? 2_000 : 10_000;
    const textBytes = 700;

    // 9/append: fresh directories per run.
    const sdAppend: AppendRun[] = [];
    const piAppend: AppendRun[] = [];
    const floorAppend: AppendRun[] = [];
    /** One append run of `client` in a fresh process, in a fresh directory (its argument `dirArg`). */
    const appendRun = (client: string, dirArg: "dir" | "dataDir", name: string) =>
      runClient<AppendRun>(`clients/${client}`, {
        op: "append",
        [dirArg]: mkdtempSync(join(ctx.tmpDir, `s9-append-${name}-`)),
        count: appendCount,
        warmup,
        textBytes,
      });
    for (let r = 0; r < reps; r++) {
      ctx.log(
        `append repetition ${r + 1}/${reps}: ${appendCount} messages, sessiond, pi, then the floor`,
      );
      const sd = await appendRun("data-embedded.ts", "dataDir", "sd");
      const pi = await appendRun("data-pi.ts", "dir", "pi");
      const floor = await appendRun("data-append-floor.ts", "dir", "floor");
      for (const [name, run] of [
        ["sessiond", sd],
        ["pi", pi],
        ["the floor", floor],
      ] as const) {
        if (run.messages !== appendCount) {
          throw new Error(`${name} holds ${run.messages} messages after ${appendCount} appends`);
        }
      }
      sdAppend.push(sd);
      piAppend.push(pi);
      floorAppend.push(floor);
    }
    const perMsg = (runs: AppendRun[]) => median(runs.map((r) => r.totalMs / r.ms.length));
    const p50s = (runs: AppendRun[]) => runs.map((r) => percentile(r.ms, 50));
    ctx.log(
      `append per message: sessiond ${(1000 * perMsg(sdAppend)).toFixed(1)} us, pi ${(1000 * perMsg(piAppend)).toFixed(1)} us, floor ${(1000 * perMsg(floorAppend)).toFixed(1)} us (floor / pi ${(perMsg(floorAppend) / perMsg(piAppend)).toFixed(2)})`,
    );

    // 9/open: one linear session of `entries` entries in both formats.
    const createdMs = Date.UTC(2025, 1, 3, 14, 0, 0);
    const c = conversation({
      sessionId: sessionIdAt(createdMs, 9),
      createdMs,
      entries,
      pathLength: entries,
      textBytes,
    });
    const sdDir = join(ctx.tmpDir, "s9-open-sd");
    const sdFile = writeSessiondFile(sdDir, c);
    const piDir = join(ctx.tmpDir, "s9-open-pi");
    mkdirSync(piDir, { recursive: true });
    const { name, text } = piFileText(c, 0);
    const piFile = join(piDir, name);
    writeText(piFile, text);
    ctx.log(
      `open: ${entries}-entry session, ${(sdFile.bytes / 1e6).toFixed(1)} MB sessiond, ${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB pi`,
    );

    const warm = ctx.quick ? 20 : 50;
    const sdOpen: OpenRun[] = [];
    const piOpen: OpenRun[] = [];
    for (let r = 0; r < reps; r++) {
      ctx.log(`open repetition ${r + 1}/${reps}: sessiond then pi, fresh processes`);
      const sd = await runClient<OpenRun>("clients/data-embedded.ts", {
        op: "open",
        dataDir: sdDir,
        sessionId: c.sessionId,
        warm,
      });
      const pi = await runClient<OpenRun>("clients/data-pi.ts", {
        op: "open",
        file: piFile,
        dir: piDir,
        warm,
        reopen: 5,
      });
      if (sd.messages !== entries - 1 || pi.messages !== entries - 1) {
        throw new Error(
          `context has ${sd.messages} (sessiond) / ${pi.messages} (pi) messages, expected ${entries - 1}`,
        );
      }
      sdOpen.push(sd);
      piOpen.push(pi);
    }
    const warmP50 = (runs: OpenRun[]) => median(runs.map((r) => percentile(r.ms, 50)));

    return [
      atMost(
        {
          id: "9/append",
          scenario: `embedded append, no fsync, ${appendCount} messages`,
          unit: "ms/msg",
          sessiond: perMsg(sdAppend),
          baseline: perMsg(piAppend),
          baselineName: "pi appendMessage per message",
          details: {
            sessiondP50: p50s(sdAppend),
            piP50: p50s(piAppend),
            sessiondTotalMs: sdAppend.map((r) => r.totalMs),
            piTotalMs: piAppend.map((r) => r.totalMs),
            floorPerMsg: perMsg(floorAppend),
            floorOverPi: perMsg(floorAppend) / perMsg(piAppend),
            sessiondOverFloor: perMsg(sdAppend) / perMsg(floorAppend),
            floorP50: p50s(floorAppend),
            floorTotalMs: floorAppend.map((r) => r.totalMs),
          },
        },
        2,
      ),
      atMost(
        {
          id: "9/open-cold",
          scenario: `open + context, ${entries}-entry session, fresh process`,
          unit: "ms",
          sessiond: median(sdOpen.map((r) => r.coldMs)),
          baseline: median(piOpen.map((r) => r.coldMs)),
          baselineName: "pi open + buildSessionContext (fresh process)",
          details: {
            sessiondMs: sdOpen.map((r) => r.coldMs),
            piMs: piOpen.map((r) => r.coldMs),
            sessiondImportMs: median(sdOpen.map((r) => r.importMs)),
            piImportMs: median(piOpen.map((r) => r.importMs)),
            sessiondBytes: sdFile.bytes,
            piBytes: Buffer.byteLength(text),
          },
        },
        1,
      ),
      atMost(
        {
          id: "9/open-warm",
          scenario: `open + context again, same process`,
          unit: "p50 ms",
          sessiond: warmP50(sdOpen),
          baseline: warmP50(piOpen),
          baselineName: "pi buildSessionContext on the open manager p50",
          details: {
            calls: warm,
            piReopenP50Ms: median(piOpen.map((r) => percentile(r.reopenMs ?? [], 50))),
          },
        },
        0.1,
      ),
    ];
  },
};
