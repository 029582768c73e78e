/**
 * T5 reader fuzzing (durability.md): fast-check at a large size.
 *
 * 1. Random valid logs with random damage (lib/fuzz-reader.ts): truncation
 *    anywhere, zeros, garbage, bit flips, garbage and zeros mid-file, a
 *    missing newline, duplicated and swapped lines, invalid UTF-8, a huge
 *    line, a partial record, garbage followed by a valid record. The scan
 *    never throws or hangs, a tail damage reads as exactly the valid prefix,
 *    damage followed by a valid record is corruption naming the line, and no
 *    record is invented or joined from two. One case in eight also goes
 *    through the engine: load (prefix or DATA_LOSS naming the line), then an
 *    append and a reload by a fresh engine (the torn tail must have been
 *    repaired first).
 * 2. Model-based command sequences (lib/fuzz-model.ts) on the JSONL engine
 *    (with reopens and torn tails left by simulated crashes) and on the
 *    memory engine, against the naive model of test/support/store-model.ts.
 *
 * Violations are counted, never thrown: each chunk of runs is an fc.check
 * whose property records what went wrong and carries on; the first chunk
 * that found something is checked again with a failing property so that
 * fast-check shrinks it, and that counterexample goes into the details.
 *
 * Negative control: noTailRepair. Both parts append after a torn tail (the
 * engine check after a torn load, the model's tear command), and without the
 * repair the new record is glued onto the partial line: lost or DATA_LOSS.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import {
  isMain,
  main,
  type Outcome,
  type ReliabilityTest,
  type RunOptions,
} from "./lib/battery.js";
import { commandArbs, runSequence } from "./lib/fuzz-model.js";
import {
  build,
  checkEngine,
  checkScan,
  describeCase,
  expectedRead,
  type Kind,
  type ReaderCase,
  readerCaseArb,
} from "./lib/fuzz-reader.js";
import { Rng } from "./lib/random.js";

interface ReaderFigures {
  runs: number;
  kinds: Record<Kind, number>;
  engine: number;
  appended: number;
  wrong: number;
}

/** A case plus whether it also goes through the engine (part of the case, so shrinking replays it). */
type EngineCase = { c: ReaderCase; viaEngine: boolean };

async function checkCase(
  x: EngineCase,
  dataDir: string,
  debug: { noTailRepair?: boolean },
  f: ReaderFigures | undefined,
): Promise<string | undefined> {
  const b = build(x.c);
  const want = expectedRead(b);
  if (f !== undefined) f.kinds[want.kind]++;
  const scanned = checkScan(x.c, b, want);
  if (scanned !== undefined) return `scan: ${scanned}`;
  if (!x.viaEngine) return undefined;
  if (f !== undefined) f.engine++;
  const r = await checkEngine(dataDir, b, want, debug);
  if (f !== undefined && r.appended) f.appended++;
  return r.violation === undefined ? undefined : `engine: ${r.violation}`;
}

async function timeLeft<T>(p: Promise<T>, ms: number, what: string): Promise<T | string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<string>((done) => {
        timer = setTimeout(() => done(`${what}: no answer within ${ms} ms (hang)`), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const test: ReliabilityTest = {
  id: "T5",
  name: "fuzz",
  controls: ["noTailRepair"],
  budgetMs: { full: 200_000, quick: 35_000 },
  async run(o: RunOptions): Promise<Outcome> {
    const rng = new Rng(o.seed);
    const debug = { noTailRepair: o.control === "noTailRepair" };
    const details: string[] = [];
    const started = Date.now();
    const total = o.deadline - started;
    // Sizes; each part also stops at its share of the time budget.
    const target = o.quick
      ? { logs: 3_000, maxEntries: 30, sequences: 100, maxCommands: 50, chunk: 250 }
      : { logs: 20_000, maxEntries: 60, sequences: 500, maxCommands: 90, chunk: 500 };
    const readerEnds = started + total * 0.55;
    const modelEnds = started + total * 0.92;

    // ---- 1. The reader against damaged logs
    const f: ReaderFigures = {
      runs: 0,
      kinds: { ok: 0, torn: 0, corrupt: 0 },
      engine: 0,
      appended: 0,
      wrong: 0,
    };
    const dataDir = await mkdtemp(join(tmpdir(), "sessiond-t5-reader-"));
    const arb = fc.record({
      c: readerCaseArb(target.maxEntries, true),
      viaEngine: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
    });
    let shrunk = false;
    try {
      while (f.runs < target.logs && Date.now() < readerEnds) {
        const seed = rng.int(1, 2_000_000_000);
        const numRuns = Math.min(target.chunk, target.logs - f.runs);
        let found = 0;
        await fc.check(
          fc.asyncProperty(arb, async (x) => {
            f.runs++;
            const v = await checkCase(x, dataDir, debug, f);
            if (v !== undefined) {
              f.wrong++;
              found++;
              if (details.length < 8) details.push(`reader: ${v} — ${describeCase(x.c)}`);
            }
            return true;
          }),
          { seed, numRuns },
        );
        if (found > 0 && !shrunk) {
          shrunk = true;
          const limit = Math.max(2_000, Math.min(20_000, o.deadline - Date.now() - 30_000));
          const r = await fc.check(
            fc.asyncProperty(
              arb,
              async (x) => (await checkCase(x, dataDir, debug, undefined)) === undefined,
            ),
            { seed, numRuns, interruptAfterTimeLimit: limit },
          );
          if (r.failed && r.counterexample !== null) {
            const [x] = r.counterexample;
            const why = await checkCase(x, dataDir, debug, undefined);
            details.unshift(
              `reader counterexample (seed ${seed}, path ${r.counterexamplePath}): ${why} — ${describeCase(x.c)}: ${fc.stringify(x.c.damages)}`,
            );
          }
        }
        o.log(
          `reader: ${f.runs} logs (${f.kinds.ok} ok / ${f.kinds.torn} torn / ${f.kinds.corrupt} corrupt), ${f.engine} via the engine, ${f.wrong} wrong (${((Date.now() - started) / 1000).toFixed(1)} s)`,
        );
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }

    // ---- 2. Model-based command sequences (jsonl 3 of 5, memory 2 of 5)
    const m = { sequences: 0, jsonl: 0, divergences: 0 };
    let chunkNo = 0;
    const counts = { commands: 0, tears: 0, watched: 0 };
    let shrunkModel = false;
    const sequenceMs = 60_000;
    while (m.sequences < target.sequences && Date.now() < modelEnds) {
      const engine = chunkNo++ % 5 < 3 ? "jsonl" : "memory";
      const cmdsArb = fc.commands(commandArbs(engine === "jsonl"), {
        maxCommands: target.maxCommands,
        size: "max",
      });
      const seed = rng.int(1, 2_000_000_000);
      const numRuns = 5;
      let found = 0;
      await fc.check(
        fc.asyncProperty(cmdsArb, async (cmds) => {
          if (Date.now() >= modelEnds) return true;
          m.sequences++;
          if (engine === "jsonl") m.jsonl++;
          const v = await timeLeft(
            runSequence(engine, cmds, debug, counts),
            sequenceMs,
            "sequence",
          );
          if (v !== undefined) {
            m.divergences++;
            found++;
            if (details.length < 16)
              details.push(`model (${engine}): ${v} — after ${String(cmds)}`);
          }
          return true;
        }),
        { seed, numRuns },
      );
      if (found > 0 && !shrunkModel) {
        shrunkModel = true;
        const limit = Math.max(2_000, Math.min(25_000, o.deadline - Date.now() - 20_000));
        const scratch = { commands: 0, tears: 0, watched: 0 };
        const r = await fc.check(
          fc.asyncProperty(cmdsArb, async (cmds) => {
            const v = await timeLeft(
              runSequence(engine, cmds, debug, scratch),
              sequenceMs,
              "sequence",
            );
            return v === undefined;
          }),
          { seed, numRuns, interruptAfterTimeLimit: limit },
        );
        if (r.failed && r.counterexample !== null) {
          const [cmds] = r.counterexample;
          const v = await runSequence(engine, cmds, debug, scratch);
          details.unshift(
            `model counterexample (${engine}, seed ${seed}, path ${r.counterexamplePath}): ${v} — ${String(cmds)}`,
          );
        }
      }
      o.log(
        `model: ${m.sequences} sequences (${m.jsonl} jsonl), ${counts.commands} commands, ${counts.tears} tears, ${m.divergences} divergences (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
    }

    const figures =
      `${f.runs} damaged logs (${f.kinds.ok} ok / ${f.kinds.torn} torn / ${f.kinds.corrupt} corrupt; ` +
      `${f.engine} through the engine, ${f.appended} appended after), ${f.wrong} wrong; ` +
      `${m.sequences} model sequences (${m.jsonl} jsonl, ${m.sequences - m.jsonl} memory; ` +
      `${counts.commands} commands, ${counts.tears} torn tails, ${counts.watched} watchers), ` +
      `${m.divergences} divergences`;
    return { figures, violations: f.wrong + m.divergences, details };
  },
};

export default test;

if (isMain(import.meta)) await main(test);
