/**
 * T3 I/O errors (../../../shared/notes/durability.md): a small scenario
 * (a group-committed pair of appends, a create, a fork, an append that
 * must first repair a torn tail, a subagent create that makes the
 * subagents directory, a rewind) runs on a JsonlEngine whose file system
 * fails the k-th call, for EVERY k of the scenario, with EIO or ENOSPC
 * (once, or from then on), or with short writes (once, every write, or
 * short then ENOSPC). The file system below is the simulated disk of T2
 * (lib/power-fs.ts), where a failed fsync drops the dirty pages as Linux
 * does, so a sync retried after a failure would "succeed" without the data.
 *
 * Per run: every operation either succeeds or is refused with a
 * SessiondError (never a raw error); a sync is never retried on a handle
 * whose sync failed; once the disk is healthy again the store keeps
 * serving (an append to another session succeeds, and so does one to
 * every session of the scenario); then every acknowledged entry must be
 * found with no DATA_LOSS, both on the real files and in the crash image
 * of a power cut right after (what was acknowledged must also be durable:
 * a "false ack" otherwise).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { isSessiondError } from "../../src/core/errors.js";
import { JsonlEngine } from "../../src/storage/jsonl/jsonl-engine.js";
import { sessionPath } from "../../src/storage/jsonl/paths.js";
import { encodeRecord } from "../../src/storage/jsonl/record.js";
import { SessionStore } from "../../src/store/session-store.js";
import { isMain, main, type ReliabilityTest } from "./lib/battery.js";
import {
  Acks,
  addCheck,
  checkDataDir,
  emptyCheck,
  freshDir,
  message,
  removeDir,
  scratchBase,
  WS,
} from "./lib/fault-check.js";
import { type Fault, FaultFs, type FaultKind, faultName } from "./lib/fault-fs.js";
import { materialize, PowerFs } from "./lib/power-fs.js";
import { Rng } from "./lib/random.js";

interface RunResult {
  /** Operations refused with something other than a SessiondError. */
  raw: number;
  /** Appends after the faults (disk healthy again) that failed: to the other session / the rest. */
  otherFailed: number;
  stuck: number;
  syncRetries: number;
  fired: number;
  refused: number;
  details: string[];
}

/** Creates the sessions the scenario works on, with no fault; E ends in a torn tail. */
async function setup(dir: string, power: PowerFs, acks: Acks): Promise<void> {
  const engine = new JsonlEngine({ dataDir: dir, fs: power.ops, leaseIdleMs: 0 });
  const store = new SessionStore(engine);
  try {
    for (const [sid, n] of [
      ["A", 3],
      ["B", 1],
      ["E", 2],
    ] as const) {
      await store.create({ sessionId: sid, title: sid });
      acks.session(sid);
      const s = await store.open(WS, sid);
      for (let i = 1; i <= n; i++) {
        const r = await s.append(message(`${sid}${i}`));
        for (const e of r.entries) acks.entry(sid, e.id, Number(e.seq));
      }
    }
  } finally {
    await engine.close();
  }
  // A torn tail left by an earlier crash, on the disk: the next append to E repairs it.
  const file = sessionPath(dir, WS, "E", false);
  const next = message("E-torn");
  next.seq = 4n;
  next.parentId = "E2";
  const line = Buffer.from(encodeRecord(next));
  fs.appendFileSync(file, line.subarray(0, line.length - 9));
  power.syncPath(file);
}

/** The scenario under test; records what is acknowledged. */
async function scenario(store: SessionStore, acks: Acks, res: RunResult, tag: string) {
  const step = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      res.refused++;
      if (!isSessiondError(err)) {
        res.raw++;
        if (res.details.length < 5)
          res.details.push(`${tag} ${what}: raw error ${(err as Error).stack}`);
      }
    }
  };
  const append = (sid: string, id: string) =>
    step(`append ${id}`, async () => {
      const r = await (await store.open(WS, sid)).append(message(id));
      for (const e of r.entries) acks.entry(sid, e.id, Number(e.seq));
    });
  await Promise.all([append("A", "A4"), append("A", "A5")]);
  await step("create C", async () => {
    const r = await store.create({ sessionId: "C", title: "C" });
    acks.session("C", Number(r.session.headSeq));
  });
  await step("fork D", async () => {
    const m = await store.fork(WS, "A", { sessionId: "D", title: "D" });
    acks.session("D", Number(m.headSeq));
  });
  await append("E", "E3");
  await step("create subagent F", async () => {
    const r = await store.create({ sessionId: "F", parentSessionId: "A", agentType: "t" });
    acks.session("F", Number(r.session.headSeq));
  });
  await step("rewind A", async () => {
    const r = await (await store.open(WS, "A")).rewind("A2", { entryId: "A-leaf" });
    for (const e of r.entries) acks.entry("A", e.id, Number(e.seq));
  });
}

/** After the faults, with a healthy disk: the store must serve every session. */
async function afterwards(store: SessionStore, acks: Acks, res: RunResult, tag: string) {
  const ids = await store.engine.listIds(WS).catch(() => ["A", "B", "E"]);
  for (const sid of ["B", ...ids.filter((s) => s !== "B").sort()]) {
    try {
      const r = await (await store.open(WS, sid)).append(message(`${sid}-after`));
      for (const e of r.entries) acks.entry(sid, e.id, Number(e.seq));
    } catch (err) {
      if (sid === "B") res.otherFailed++;
      else res.stuck++;
      if (res.details.length < 5) {
        res.details.push(
          `${tag}: append to ${sid} after the fault failed: ${(err as Error).message}`,
        );
      }
    }
  }
}

const KINDS: { kind: FaultKind; persistent: boolean; writesOnly: boolean }[] = [
  { kind: "EIO", persistent: false, writesOnly: false },
  { kind: "EIO", persistent: true, writesOnly: false },
  { kind: "ENOSPC", persistent: false, writesOnly: false },
  { kind: "ENOSPC", persistent: true, writesOnly: false },
  { kind: "short", persistent: false, writesOnly: true },
  { kind: "short", persistent: true, writesOnly: true },
  { kind: "short+ENOSPC", persistent: true, writesOnly: true },
];

const test: ReliabilityTest = {
  id: "T3",
  name: "io-errors",
  controls: [],
  budgetMs: { full: 150_000, quick: 40_000 },
  async run(o) {
    const rng = new Rng(o.seed);
    const base = scratchBase("sessiond-t3-");
    const total = emptyCheck();
    const realTotal = emptyCheck();
    const sum: RunResult = {
      raw: 0,
      otherFailed: 0,
      stuck: 0,
      syncRetries: 0,
      fired: 0,
      refused: 0,
      details: [],
    };
    let injected = 0;
    let runs = 0;
    let acked = 0;
    let steps = 0;
    const one = async (fault: Fault | undefined, trace: boolean) => {
      const tag = fault === undefined ? "dry run" : `${faultName(fault)} at call ${fault.at}`;
      const dir = freshDir(base, "run");
      const power = new PowerFs(dir);
      const acks = new Acks();
      await setup(dir, power, acks);
      const faults = new FaultFs(power.ops, (fd) => power.poison(fd));
      const engine = new JsonlEngine({ dataDir: dir, fs: faults.ops, leaseIdleMs: 0 });
      const store = new SessionStore(engine);
      const res: RunResult = { ...sum, details: [] };
      for (const k of Object.keys(res) as (keyof RunResult)[]) if (k !== "details") res[k] = 0;
      faults.tracing = trace;
      faults.arm(fault);
      await scenario(store, acks, res, tag);
      const trail = [...faults.trace];
      const scenarioSteps = faults.steps;
      res.fired = faults.fired;
      faults.fault = undefined;
      await afterwards(store, acks, res, tag);
      res.syncRetries = faults.syncRetries;
      for (const n of faults.retryNotes.slice(0, 2))
        if (res.details.length < 5) res.details.push(`${tag}: ${n}`);
      await engine.close().catch(() => undefined);
      // The real files (the page cache survives: no power cut).
      addCheck(
        realTotal,
        await checkDataDir(dir, acks, { tag: `${tag} (real files)`, appendAfter: false }),
      );
      // A power cut right after: what was acknowledged must be on the disk.
      const img = path.join(base, "image");
      removeDir(img);
      materialize(power.cutNow(), img, rng);
      addCheck(
        total,
        await checkDataDir(img, acks, { tag: `${tag} (crash image)`, appendAfter: true }),
      );
      for (const k of Object.keys(sum) as (keyof RunResult)[]) {
        if (k === "details")
          sum.details.push(...res.details.slice(0, Math.max(0, 10 - sum.details.length)));
        else sum[k] += res[k];
      }
      acked += acks.count;
      runs++;
      return { trail, scenarioSteps, fired: res.fired };
    };
    try {
      const dry = await one(undefined, true);
      steps = dry.scenarioSteps;
      o.log(`dry run: ${steps} fs calls in the scenario`);
      const kinds = o.quick ? KINDS.filter((_, i) => i % 2 === 0 || i === 3) : KINDS;
      outer: for (let k = 1; k <= steps; k++) {
        for (const kind of kinds) {
          if (Date.now() > o.deadline - 3_000) break outer;
          if (kind.writesOnly && dry.trail[k - 1] !== "write") continue;
          const r = await one({ kind: kind.kind, persistent: kind.persistent, at: k }, false);
          if (r.fired > 0) injected++;
        }
        if (k % 50 === 0) o.log(`${k}/${steps} steps, ${injected} faults injected`);
      }
    } finally {
      removeDir(base);
    }
    const corrupt =
      total.corrupt +
      total.falseDataLoss +
      total.corruptAfter +
      realTotal.corrupt +
      realTotal.falseDataLoss;
    const violations =
      sum.raw +
      sum.otherFailed +
      sum.stuck +
      sum.syncRetries +
      total.lost +
      total.lostAfter +
      realTotal.lost +
      corrupt +
      total.errors +
      realTotal.errors;
    const figures = [
      `${injected} injected faults (EIO/ENOSPC/short, once/persistent) at ${steps} steps`,
      `${runs} runs`,
      `${acked} acked`,
      `${sum.refused} refused`,
      `${total.lost + total.lostAfter} false acks (acked, not durable)`,
      `${realTotal.lost} lost`,
      `${corrupt} corrupt`,
      `${sum.raw} raw errors`,
      `${sum.syncRetries} syncs retried after a failure`,
      sum.otherFailed === 0 ? "other sessions ok" : `${sum.otherFailed} other-session failures`,
      `${sum.stuck} sessions stuck after the fault`,
    ].join(", ");
    return {
      figures,
      violations,
      details: [...sum.details, ...realTotal.details, ...total.details],
    };
  },
};

export default test;

if (isMain(import.meta)) await main(test);
