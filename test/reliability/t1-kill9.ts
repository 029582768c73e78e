/**
 * T1 kill -9 during concurrent appends (see ../../../shared/notes/durability.md).
 *
 * A real `sessiond serve` (JSONL, a fresh data dir) takes appends from
 * several writers at once (lib/kill-writers.ts: batches of 1–5 entries,
 * ids chosen by the writer, an ack recorded only on OK, an op of unknown
 * outcome re-sent identically to the next server). Some sessions are
 * shared by every writer, others have one writer; every few rounds a new
 * generation of sessions is created, by the writers, under fire. At a
 * random moment (seeded) the server gets SIGKILL. With the server dead the
 * files are audited (lib/jsonl-check.ts): the engine's reader (what
 * `sessiond fsck` says) and an independent line-by-line pass (frame + CRC,
 * seq = line, unique ids, parents earlier in the file), then every
 * acknowledged entry must be in its session's valid prefix exactly once,
 * at the acknowledged seq, and an entry of unknown outcome at most once.
 * Then the server restarts on the same data dir and the writers first
 * re-send what was pending (which must be answered OK). At the end the
 * whole data dir is audited again, each session is read back over the wire
 * and compared with its file, and `sessiond fsck` must exit 0.
 *
 * Torn tails: a SIGKILL can cut a write that spans many pages short (the
 * writers send a big entry now and then); the next writer must cut it off
 * (`<file>.broken-*`). They are counted, not violations.
 *
 * Stale locks: the killed server leaves its lock directories behind and the
 * restarted one waits `lockStaleMs` (10 s, no serve flag changes it) before
 * taking them over. That wait is measured on the first restart (full runs)
 * and on a few later ones; on the other restarts the test ages the dead
 * server's lock directories (mtime back by a minute) before restarting,
 * which is exactly what 10 s of waiting would do, so proper-lockfile's real
 * stale takeover still runs, just without the wait.
 *
 * No negative control: kill -9 leaves the page cache intact, so neither
 * `noFsync` nor `noDirFsync` can be seen here (T2 is the power-loss proof),
 * and a torn tail after a kill is too rare for `noTailRepair` to be caught
 * reliably (T2 / T5 prove that rule).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSessiondClient } from "../../src/client/index.js";
import type { SessiondProcess } from "../harness/server.js";
import { isMain, main, type ReliabilityTest, type RunOptions } from "./lib/battery.js";
import { auditDataDir, checkLedger, type DirAudit, fsck } from "./lib/jsonl-check.js";
import { startWithRetry } from "./lib/kill-server.js";
import { Ledger, WORKSPACE, Writer } from "./lib/kill-writers.js";
import { Rng } from "./lib/random.js";
import { ageLocks, lockDirs, sessionOfLock } from "./lib/stale-locks.js";

const median = (xs: readonly number[]) =>
  xs.length === 0 ? 0 : ([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number);

async function run(o: RunOptions) {
  const rng = new Rng(o.seed);
  const maxRounds = o.quick ? 40 : 200;
  /** Rounds per generation of sessions. */
  const generationRounds = 8;
  const writersN = 8;
  /** Full runs measure the real stale-lock wait on the first restart and every 50th. */
  const measureEvery = o.quick ? 0 : 50;
  const env = o.control === undefined ? undefined : { SESSIOND_DEBUG: o.control };
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-t1-"));
  const ledger = new Ledger();
  let server: SessiondProcess | undefined;
  const details: string[] = [];
  let crashes = 0;
  let corruptFiles = 0;
  let lost = 0;
  let duplicated = 0;
  let wrongSeq = 0;
  let tornSeen = 0;
  let pendingAtKill = 0;
  let pendingLost = 0;
  const staleWaits: number[] = [];
  const takeovers: number[] = [];
  const startMs: number[] = [];
  const starts = { failedStarts: 0 };
  const problem = (d: string) => {
    if (details.length < 40) details.push(d);
  };

  // The sessions of the current generation: `shared` is appended to by every
  // writer, home[i] mostly by writer i (sometimes by the others too).
  let generation = 0;
  let shared = "";
  const home: string[] = [];
  const known = (id: string) => ledger.sessions.has(id);
  const writers: Writer[] = [];
  for (let i = 0; i < writersN; i++) {
    writers.push(
      new Writer(`t1w${i}`, rng.fork(), ledger, (r) => {
        const choice = r.bool(0.45) ? shared : r.bool(0.8) ? (home[i] as string) : r.pick(home);
        if (known(choice)) return choice;
        return known(shared) ? shared : undefined;
      }),
    );
  }
  const newGeneration = () => {
    generation++;
    shared = `t1g${generation}-shared`;
    home.length = 0;
    for (let i = 0; i < writersN; i++) home.push(`t1g${generation}-w${i}`);
    writers[0]?.create(shared);
    writers.forEach((w, i) => {
      w.create(home[i] as string);
    });
  };

  const verify = async (only: Set<string> | undefined): Promise<DirAudit> => {
    const audit = await auditDataDir(dataDir, only);
    const pick = <T>(m: ReadonlyMap<string, T>) =>
      new Map([...m].filter(([s]) => only === undefined || only.has(s)));
    const l = checkLedger(audit, pick(ledger.acked), pick(ledger.attempted));
    for (const s of ledger.sessions) {
      if ((only === undefined || only.has(s)) && !audit.files.has(s)) {
        lost++;
        problem(`session ${s}: its create was acknowledged but its file is missing`);
      }
    }
    corruptFiles += audit.corruptFiles;
    lost += l.lost;
    duplicated += l.duplicated;
    wrongSeq += l.wrongSeq;
    for (const p of [...audit.problems, ...l.problems]) problem(p);
    return audit;
  };

  try {
    /** Sessions whose lock the previous server left; aged or not (measured). */
    let leftLocks = new Set<string>();
    let measuring = false;
    for (
      let round = 0;
      round < maxRounds && Date.now() < o.deadline - (o.quick ? 12_000 : 20_000);
      round++
    ) {
      if (round % generationRounds === 0) newGeneration();
      const t0 = Date.now();
      server = await startWithRetry(
        {
          dataDir,
          env,
          timeoutMs: 60_000,
          args: ["--storage", "jsonl"],
        },
        starts,
        o.log,
      );
      const listening = Date.now();
      startMs.push(listening - t0);
      for (const w of writers) w.connect(server.url);
      const firstAck = new Map<string, number>();
      const ctl = {
        stopped: false,
        onAck: (s: string) => {
          if (!firstAck.has(s)) firstAck.set(s, Date.now());
        },
      };
      const runs = writers.map((w) => w.run(ctl, o.deadline));
      // The kill: mostly a while after the round's first acknowledgement, sometimes
      // early (during recovery: lock takeover, creates, pending retries).
      const early = !measuring && rng.bool(0.2);
      const delay = early ? rng.int(0, 300) : rng.int(20, o.quick ? 800 : 1500);
      if (!early) {
        const until = Math.min(Date.now() + 30_000, o.deadline);
        // Only sessions of this generation: locks aged on retired sessions stay forever.
        const current = new Set([shared, ...home]);
        const waitFor = measuring ? [...leftLocks].filter((s) => current.has(s)) : [];
        while (Date.now() < until) {
          if (firstAck.size > 0 && waitFor.every((s) => firstAck.has(s))) break;
          await sleep(5);
        }
      }
      await sleep(delay);
      // Restart → first ack on each session whose lock the dead server left.
      const waits = [...leftLocks].flatMap((s) => {
        if (s !== shared && !home.includes(s)) return [];
        const at = firstAck.get(s);
        return at === undefined ? [] : [at - listening];
      });
      if (waits.length > 0) (measuring ? staleWaits : takeovers).push(Math.max(...waits));
      await server.kill9();
      ctl.stopped = true;
      await Promise.all(runs);
      crashes++;
      server = undefined;

      const pending = writers.filter((w) => w.pending !== undefined).length;
      pendingAtKill += pending;
      const audit = await verify(new Set([shared, ...home]));
      for (const f of audit.files.values()) if (f.status === "torn_tail") tornSeen++;

      // The dead server's locks: age them (see the file comment) or measure the wait.
      const locks = await lockDirs(dataDir, WORKSPACE);
      leftLocks = new Set(locks.map(sessionOfLock));
      measuring = measureEvery > 0 && (crashes === 1 || crashes % measureEvery === 0);
      if (measuring) {
        o.log(`restart ${crashes + 1}: measuring the stale-lock wait (${locks.length} locks left)`);
      } else {
        await ageLocks(locks);
      }
      if (round % 10 === 0) {
        o.log(
          `round ${round}: ${crashes} crashes, ${ledger.ackedEntries} acked, ${pending} ops in flight at the kill, start ${listening - t0} ms, ${lost} lost, ${duplicated} duplicated, ${corruptFiles} corrupt`,
        );
      }
    }

    // Final: restart, let every pending op through, read every session back over
    // the wire, stop cleanly, audit everything, compare, fsck.
    server = await startWithRetry(
      { dataDir, env, timeoutMs: 60_000, args: ["--storage", "jsonl"] },
      starts,
      o.log,
    );
    for (const w of writers) w.connect(server.url);
    await Promise.all(writers.map((w) => w.flush(Date.now() + 60_000)));
    for (const w of writers) {
      if (w.pending !== undefined) {
        pendingLost++;
        problem(`${w.name}: its pending op was not answered OK after the final restart`);
      }
    }
    const reader = createSessiondClient({ baseUrl: server.url, retry: false, timeoutMs: 60_000 });
    const served = new Map<string, string[]>();
    for (const sessionId of ledger.sessions) {
      const ids: string[] = [];
      let after = 0n;
      for (let i = 0; i < 10_000; i++) {
        const page = await reader.session.getEntries({
          workspace: WORKSPACE,
          session: sessionId,
          afterSeq: after,
          limit: 1000,
        });
        for (const e of page.entries) ids.push(e.id);
        const last = page.entries[page.entries.length - 1];
        if (last === undefined || last.seq >= page.headSeq) break;
        after = last.seq;
      }
      served.set(sessionId, ids);
    }
    await server.stop();
    server = undefined;
    const final = await verify(undefined);
    let readBack = 0;
    let mismatched = 0;
    for (const [sessionId, ids] of served) {
      readBack += ids.length;
      const file = final.files.get(sessionId);
      const fileIds = [...(file?.seqOf ?? [])].sort((a, b) => a[1] - b[1]).map(([id]) => id);
      if (ids.join(",") !== fileIds.join(",")) {
        mismatched++;
        problem(
          `session ${sessionId}: served ${ids.length} entries, the file holds ${fileIds.length}`,
        );
      }
    }
    const check = await fsck(dataDir);
    const fsckFailed = check.code === 0 ? 0 : 1;
    if (fsckFailed) {
      problem(`sessiond fsck exited ${check.code}: ${check.out.split("\n").slice(-5).join(" | ")}`);
    }
    const sum = (f: (w: Writer) => number) => writers.reduce((n, w) => n + f(w), 0);
    const refused = sum((w) => w.figures.refused);
    for (const w of writers) for (const d of w.details) problem(d);
    const violations =
      corruptFiles + lost + duplicated + wrongSeq + refused + pendingLost + mismatched + fsckFailed;
    const sec = (ms: number) => (ms / 1000).toFixed(1);
    const staleText =
      staleWaits.length === 0
        ? "stale-lock wait not measured"
        : `stale-lock wait ${sec(Math.min(...staleWaits))}-${sec(Math.max(...staleWaits))} s (${staleWaits.length} restarts)`;
    return {
      figures: [
        `${crashes} crashes`,
        `${ledger.ackedEntries} acked`,
        `${lost} lost`,
        `${duplicated} duplicated`,
        `${corruptFiles} corrupt files`,
        `${final.brokenFiles} torn tails repaired (${tornSeen} seen after a kill)`,
        `${wrongSeq} wrong seqs`,
        `${refused} refused`,
        `${pendingAtKill} ops in flight at the kills, ${sum((w) => w.figures.retries)} retries (${sum((w) => w.figures.deduplicated)} de-duplicated)`,
        `${readBack} read back (${mismatched} differ)`,
        `start ${sec(median(startMs))} s`,
        `aged-lock takeover ${sec(median(takeovers))} s`,
        staleText,
        `${starts.failedStarts} failed starts retried`,
        `fsck exit ${check.code}`,
      ].join(", "),
      violations,
      details,
    };
  } finally {
    if (server !== undefined) await server.kill9();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const test: ReliabilityTest = {
  id: "T1",
  name: "kill-9",
  controls: [],
  budgetMs: { full: 180_000, quick: 45_000 },
  run,
};
export default test;

if (isMain(import.meta)) await main(test);
