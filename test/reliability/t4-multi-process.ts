/**
 * T4 concurrent writers across processes (see ../../../shared/notes/durability.md).
 *
 * Four processes append to the SAME few sessions of one data directory at
 * once:
 *
 *   A, B  two `sessiond serve` processes on the one data dir, each fed by
 *         writers of this test over the wire (lib/kill-writers.ts: batches
 *         of 1–5 entries, ids chosen by the writer, acked only on OK, an op
 *         of unknown outcome re-sent identically until answered);
 *   C, D  embedded-engine worker processes (workers/w-append.ts). They
 *         stand in for `sessiond append`: that command only talks to a
 *         server (it has no embedded mode), so a CLI append would just be
 *         a third client of A or B, not a third process on the files.
 *
 * Now and then one of the four gets SIGKILL and is restarted (a server on
 * the same data dir, with its writers re-sending what was in flight; a
 * worker as a new incarnation). A killed lock holder leaves its lock
 * directory behind: the others wait for it to go stale (10 s) on that
 * session; the test never ages a lock here, since the other processes are
 * alive and aging a live holder's lock would break the lock, not test it.
 *
 * At the end (everything stopped) the files are audited
 * (lib/jsonl-check.ts): every line intact (frame + CRC), seq = line number
 * (dense 1..n), unique ids, parents earlier in the file, no mid-file
 * damage, the engine reader (fsck) happy; every acknowledged entry exactly
 * once at its acknowledged seq; entries of unknown outcome at most once.
 * The line-to-line changes of writing process ("hand-overs") are counted:
 * without them the test would not exercise the lock and fencing at all.
 *
 * Negative controls (each must find violations): `noCrossProcessLock` (all
 * four processes write without the lock: their writes land on the same
 * offsets) and `noFencing` (the lock is kept but a process writes at the
 * end it remembers, over what another process appended meanwhile; this
 * needs the processes to take turns on a session, which they do: the
 * lease is handed over to a waiting process after 50 ms).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSessiondClient } from "../../src/client/index.js";
import { REPO, type SessiondProcess } from "../harness/server.js";
import { isMain, main, type ReliabilityTest, type RunOptions } from "./lib/battery.js";
import { auditDataDir, checkLedger, fsck } from "./lib/jsonl-check.js";
import { startWithRetry } from "./lib/kill-server.js";
import { Ledger, WORKSPACE, Writer } from "./lib/kill-writers.js";
import { Rng } from "./lib/random.js";

const WORKER = join(import.meta.dirname, "workers", "w-append.ts");

interface WorkerProc {
  readonly tag: string;
  readonly proc: ChildProcess;
  readonly exited: Promise<void>;
  stderr: string;
}

/** Line → process slot ("A".."D"): the first character of every entry id this test writes. */
const slotOf = (id: string) => id.charAt(0);

async function run(o: RunOptions) {
  const rng = new Rng(o.seed);
  const control = o.control;
  const env = control === undefined ? undefined : { SESSIOND_DEBUG: control };
  const serverArgs = ["--storage", "jsonl"];
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-t4-"));
  const ledger = new Ledger();
  const details: string[] = [];
  const problem = (d: string) => {
    if (details.length < 40) details.push(d);
  };
  /** Traffic phase length; the rest of the budget is for start-up, the final flush and the audit. */
  const trafficMs = o.quick ? 22_000 : 110_000;
  const sessionsN = o.quick ? 2 : 3;
  const sessions = Array.from({ length: sessionsN }, (_, i) => `t4s${i}`);
  const servers = new Map<string, SessiondProcess>();
  const workers = new Map<string, WorkerProc>();
  const incarnation = new Map<string, number>();
  let workerUnknown = 0;
  let workerRefused = 0;
  let kills = 0;
  const killed: string[] = [];
  const starts = { failedStarts: 0 };

  const startServer = async (slot: string) => {
    const s = await startWithRetry(
      { dataDir, env, args: serverArgs, timeoutMs: 60_000 },
      starts,
      o.log,
    );
    servers.set(slot, s);
    return s;
  };

  const startWorker = (slot: string, until: number): WorkerProc => {
    const n = (incarnation.get(slot) ?? 0) + 1;
    incarnation.set(slot, n);
    const tag = `${slot}${n}w`;
    const args = {
      dataDir,
      sessions,
      tag,
      streams: 3,
      seed: rng.int(1, 2 ** 31 - 1),
      until,
      control,
    };
    const proc = spawn(process.execPath, ["--import", "tsx", WORKER, JSON.stringify(args)], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const w: WorkerProc = {
      tag,
      proc,
      stderr: "",
      exited: new Promise((resolve) => proc.once("exit", () => resolve())),
    };
    let buf = "";
    proc.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
        const [kind, session, rest] = line.split(" ", 3) as [string, string, string];
        if (kind === "try") {
          for (const id of rest.split(",")) ledger.attempt(session, id);
        } else if (kind === "ack") {
          for (const pair of rest.split(",")) {
            const [id, seq] = pair.split(":") as [string, string];
            ledger.ack(session, id, Number(seq));
          }
        } else if (kind === "err") {
          // UNAVAILABLE is "outcome unknown" (fencing refused a changed file, or
          // the lock stayed taken); anything else is a refusal that should not be.
          if (rest === "UNAVAILABLE") workerUnknown++;
          else {
            workerRefused++;
            problem(`worker ${tag}: ${line.slice(0, 300)}`);
          }
        }
      }
    });
    proc.stderr?.on("data", (d: Buffer) => {
      w.stderr = (w.stderr + d.toString()).slice(-4000);
    });
    workers.set(slot, w);
    return w;
  };

  const writers: Writer[] = [];
  try {
    // The sessions, created before the traffic starts.
    const a = await startServer("A");
    const setup = createSessiondClient({ baseUrl: a.url, timeoutMs: 60_000 });
    for (const s of sessions) {
      await setup.store.createSession({ workspace: WORKSPACE, sessionId: s, title: s });
      ledger.sessions.add(s);
    }
    await startServer("B");
    for (const slot of ["A", "B"]) {
      for (let i = 0; i < 3; i++) {
        const w = new Writer(`${slot}${i}`, rng.fork(), ledger, (r) => r.pick(sessions), 0.02);
        w.connect(servers.get(slot)?.url as string);
        writers.push(w);
      }
    }
    const trafficEnd = Math.min(Date.now() + trafficMs, o.deadline - 25_000);
    startWorker("C", trafficEnd);
    startWorker("D", trafficEnd);
    const ctl = { stopped: false };
    const runs = writers.map((w) => w.run(ctl, o.deadline));

    // Kills: every few seconds one of the four processes, restarted after a short pause.
    const firstKill = o.quick ? 4_000 : 5_000;
    let nextKill = Date.now() + firstKill + rng.int(0, 3_000);
    for (let i = 0; i < 1_000 && Date.now() < trafficEnd - 3_000; i++) {
      await sleep(Math.max(0, Math.min(nextKill, trafficEnd) - Date.now()));
      if (Date.now() >= trafficEnd - 3_000) break;
      const slot = rng.pick(["A", "B", "C", "D"]);
      kills++;
      killed.push(slot);
      o.log(
        `kill -9 ${slot} at ${((Date.now() - (trafficEnd - trafficMs)) / 1000).toFixed(1)} s; ${ledger.ackedEntries} acked so far`,
      );
      const server = servers.get(slot);
      if (server !== undefined) {
        await server.kill9();
        servers.delete(slot);
        await sleep(rng.int(0, 800));
        const restarted = await startServer(slot);
        for (const w of writers) if (w.name.startsWith(slot)) w.connect(restarted.url);
      } else {
        const w = workers.get(slot);
        if (w !== undefined) {
          w.proc.kill("SIGKILL");
          await w.exited;
        }
        await sleep(rng.int(0, 800));
        startWorker(slot, trafficEnd);
      }
      nextKill = Date.now() + rng.int(o.quick ? 5_000 : 6_000, o.quick ? 9_000 : 14_000);
    }
    await sleep(Math.max(0, trafficEnd - Date.now()));
    ctl.stopped = true;
    await Promise.all(runs);
    // Let every op of unknown outcome through (the servers are alive), then stop all.
    await Promise.all(
      writers.map((w) => w.flush(Math.min(Date.now() + 40_000, o.deadline + 30_000))),
    );
    let pendingLost = 0;
    for (const w of writers) {
      if (w.pending !== undefined) {
        pendingLost++;
        problem(`${w.name}: its pending op was never answered OK`);
      }
    }
    await Promise.all([...workers.values()].map((w) => w.exited));
    for (const s of servers.values()) await s.stop();
    servers.clear();

    const audit = await auditDataDir(dataDir);
    const ledgerCheck = checkLedger(audit, ledger.acked, ledger.attempted);
    for (const p of [...audit.problems, ...ledgerCheck.problems]) problem(p);
    let lines = 0;
    let handovers = 0;
    let misplaced = 0;
    let orphans = 0;
    let badLines = 0;
    for (const f of audit.files.values()) {
      lines += f.entries;
      misplaced += f.misplacedSeqs;
      orphans += f.orphans;
      badLines += f.badLines;
      const bySeq = [...f.seqOf].sort((x, y) => x[1] - y[1]);
      for (let i = 2; i < bySeq.length; i++) {
        if (
          slotOf((bySeq[i] as [string, number])[0]) !==
          slotOf((bySeq[i - 1] as [string, number])[0])
        ) {
          handovers++;
        }
      }
    }
    const check = await fsck(dataDir);
    const fsckFailed = check.code === 0 ? 0 : 1;
    if (fsckFailed) {
      problem(`sessiond fsck exited ${check.code}: ${check.out.split("\n").slice(-4).join(" | ")}`);
    }
    const sum = (f: (w: Writer) => number) => writers.reduce((n, w) => n + f(w), 0);
    const refused = sum((w) => w.figures.refused) + workerRefused;
    for (const w of writers) for (const d of w.details) problem(d);
    const violations =
      audit.corruptFiles +
      ledgerCheck.lost +
      ledgerCheck.duplicated +
      ledgerCheck.wrongSeq +
      refused +
      pendingLost +
      fsckFailed;
    return {
      figures: [
        `${kills} kills (${killed.join("") || "-"})`,
        `${ledger.ackedEntries} acked`,
        `${ledgerCheck.lost} lost`,
        `${ledgerCheck.duplicated} duplicated`,
        `${ledgerCheck.wrongSeq} at another seq than acked`,
        `${audit.corruptFiles} corrupt files`,
        `${badLines} bad lines`,
        `${misplaced} misplaced seqs`,
        `${orphans} orphans`,
        `${refused} refused`,
        `${lines} lines in ${audit.files.size} sessions`,
        `${handovers} hand-overs`,
        `${audit.tornTails} torn tails left, ${audit.brokenFiles} repaired`,
        `${sum((w) => w.figures.retries)} server retries (${sum((w) => w.figures.deduplicated)} de-duplicated)`,
        `${workerUnknown} worker UNAVAILABLE`,
        `${starts.failedStarts} failed starts retried`,
        `fsck exit ${check.code}`,
      ].join(", "),
      violations,
      details,
    };
  } finally {
    for (const s of servers.values()) await s.kill9();
    for (const w of workers.values()) {
      if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill("SIGKILL");
      await w.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const test: ReliabilityTest = {
  id: "T4",
  name: "multi-process",
  controls: ["noCrossProcessLock", "noFencing"],
  budgetMs: { full: 180_000, quick: 60_000 },
  run,
};
export default test;

if (isMain(import.meta)) await main(test);
