/**
 * Scenario 1: durable Append, one client, sequential, one ~500 B message per
 * call. Target: sessiond p50 <= 1.3 × (echo p50 + fdatasync p50), all three
 * measured in this run, interleaved, median over repetitions.
 *
 * Durability check, before measuring: the server's command line has no
 * switch that could turn fsync off (`serve` has none; `--storage memory`
 * would not be durable), strace (when installed) counts at least one
 * fdatasync per acknowledged append, and the measured append p50 is not
 * below the fdatasync floor p50 (a faster append cannot have synced).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import { countFdatasyncs, fsyncFloor } from "../lib/fsync-floor.js";
import { runClient, startEcho, startSessiond } from "../lib/procs.js";
import { atMost, type Row } from "../lib/row.js";
import { median, type Summary } from "../lib/stats.js";

interface Latency extends Summary {
  mean: number;
}

/** Arguments of a server process, read back from /proc. */
function argvOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
}

/** Switches that would make appends non-durable (none exists in `serve` today). */
export function nonDurableSwitches(argv: readonly string[]): string[] {
  const bad: string[] = [];
  for (const [i, a] of argv.entries()) {
    if (/fsync|sync=|debug|unsafe|durab/i.test(a)) bad.push(a);
    if (a === "--storage" && argv[i + 1] !== "jsonl") bad.push(`${a} ${argv[i + 1]}`);
    if (a.startsWith("--storage=") && a !== "--storage=jsonl") bad.push(a);
  }
  return bad;
}

export const appendSequential: Scenario = {
  id: "1",
  title: "durable Append, one client, sequential, 1 entry (~500 B)",
  async run(ctx: BenchContext): Promise<Row[]> {
    const reps = ctx.quick ? 1 : 3;
    const n = ctx.quick ? 200 : 2000;
    const warmup = ctx.quick ? 50 : 200;
    const dataDir = mkdtempSync(join(ctx.tmpDir, "s1-"));
    const sd = await startSessiond(["--data-dir", dataDir]);
    try {
      const echo = await startEcho();
      try {
        // 1. Durability: flags, then fdatasyncs per append under strace.
        const argv = argvOf(sd.pid);
        const badSwitches = nonDurableSwitches(argv);
        const traced = ctx.quick ? 20 : 100;
        ctx.log(`durability check: strace fdatasync over ${traced} sequential appends`);
        const strace = await countFdatasyncs(sd.pid, ctx.tmpDir, () =>
          runClient("clients/rpc-unary.ts", {
            target: "sessiond",
            url: sd.url,
            mode: "latency",
            warmup: 0,
            n: traced,
          }),
        );
        if (strace === undefined) ctx.log("strace not available: durability check without it");

        // 2. Measurement, interleaved: echo, sessiond, fdatasync floor.
        const echoRuns: Latency[] = [];
        const sdRuns: Latency[] = [];
        const floorRuns: Summary[] = [];
        const latency = (target: "echo" | "sessiond") =>
          runClient<Latency>("clients/rpc-unary.ts", {
            target,
            url: target === "echo" ? echo.url : sd.url,
            mode: "latency",
            warmup,
            n,
          });
        for (let r = 0; r < reps; r++) {
          // Alternate the order so that neither side always runs first.
          const echoFirst = r % 2 === 0;
          ctx.log(
            `repetition ${r + 1}/${reps}: ${echoFirst ? "echo, sessiond" : "sessiond, echo"}, fdatasync floor (${n} calls each)`,
          );
          if (echoFirst) echoRuns.push(await latency("echo"));
          sdRuns.push(await latency("sessiond"));
          if (!echoFirst) echoRuns.push(await latency("echo"));
          floorRuns.push(fsyncFloor(ctx.tmpDir, { n, warmup: 50, lineBytes: 600 }));
        }
        const med = (runs: readonly Summary[], k: "p50" | "p99") => median(runs.map((x) => x[k]));
        const sdP50 = med(sdRuns, "p50");
        const echoP50 = med(echoRuns, "p50");
        const floorP50 = med(floorRuns, "p50");

        const straceOk = strace === undefined || strace.calls >= traced;
        const floorOk = sdP50 >= floorP50;
        const durable = badSwitches.length === 0 && straceOk && floorOk;
        const durability = {
          ok: durable,
          serverArgs: argv.slice(1).join(" "),
          nonDurableSwitches: badSwitches,
          strace:
            strace === undefined
              ? "not available"
              : { appends: traced, fdatasyncCalls: strace.calls, ok: straceOk },
          appendP50AtLeastFdatasyncP50: floorOk,
        };
        ctx.log(`durability: ${JSON.stringify(durability)}`);
        const row = atMost(
          {
            id: "1",
            scenario: "durable Append, 1 client, sequential, ~500 B",
            unit: "p50 ms",
            sessiond: sdP50,
            baseline: echoP50 + floorP50,
            baselineName: "echo p50 + fdatasync p50",
            details: {
              durability,
              pairedRatios: sdRuns.map(
                (x, i) =>
                  x.p50 / ((echoRuns[i]?.p50 ?? Number.NaN) + (floorRuns[i]?.p50 ?? Number.NaN)),
              ),
              repetitions: reps,
              callsPerRepetition: n,
              warmup,
              sessiondP99: med(sdRuns, "p99"),
              echoP50,
              echoP99: med(echoRuns, "p99"),
              fdatasyncP50: floorP50,
              fdatasyncP99: med(floorRuns, "p99"),
              runs: { sessiond: sdRuns, echo: echoRuns, fdatasync: floorRuns },
            },
          },
          1.3,
        );
        return [durable ? row : { ...row, pass: false }];
      } finally {
        await echo.stop();
      }
    } finally {
      await sd.stop();
    }
  },
};
