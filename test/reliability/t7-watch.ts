/**
 * T7 watch reliability (contract item 4: a watcher sees every entry of a
 * session exactly once, in seq order, also across reconnects and server
 * restarts).
 *
 * Phase 1, restarts: many watchers on one session (and a few on others)
 * while writers append thousands of entries; each watcher cancels its stream
 * at random moments (seeded) and resumes from the last seq it saw; the
 * server is restarted with SIGTERM and with kill -9 on the same data dir and
 * port. Every watcher must end with seq 1..n in order (no gaps, no
 * duplicates, the log's ids), and every acknowledged entry must be in the
 * log and seen by every watcher of its session.
 *
 * Phase 2, resume races (the proof of subscribe-before-replay): a server
 * with a 30 s heartbeat; each round, while all watchers are disconnected,
 * the writer appends a small backlog; then every watcher reconnects from its
 * cursor at the same moment as one more append, and the writer pauses for a
 * quiet period (seconds: far longer than delivery takes, far shorter than
 * the heartbeat, whose re-read would otherwise cover a missed wake-up). A
 * watcher that has not received the round's last entry by the end of the
 * quiet period is "stalled". With `--control noSubscribeFirst` the server
 * replays before subscribing, and an append that lands in between is not
 * seen until the next one: the test must find stalls.
 */
import { setMaxListeners } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import type { SessiondClient } from "../../src/client/index.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";
import { isMain, main, type ReliabilityTest, type RunOptions } from "./lib/battery.js";
import { Rng } from "./lib/random.js";
import {
  appendUntilOk,
  newStats,
  readLogIds,
  receive,
  sleep,
  userEntry,
  type WatcherStats,
  watchClient,
  watchLoop,
} from "./lib/watch-support.js";

const WS = "t7";

interface Sizes {
  watchers: number;
  otherSessions: number;
  watchersPerOther: number;
  entries: number;
  otherEntries: number;
  writers: number;
  restarts: number;
  connections: number;
  raceWatchers: number;
  raceRounds: number;
  raceQuietMs: number;
  restartPhaseMs: number;
  racePhaseMs: number;
  foreignWatchers: number;
  foreignRounds: number;
}

const FULL: Sizes = {
  watchers: 40,
  otherSessions: 3,
  watchersPerOther: 3,
  entries: 5000,
  otherEntries: 300,
  writers: 3,
  restarts: 6,
  connections: 8,
  raceWatchers: 40,
  raceRounds: 300,
  raceQuietMs: 3000,
  restartPhaseMs: 110_000,
  racePhaseMs: 75_000,
  foreignWatchers: 20,
  foreignRounds: 10,
};

const QUICK: Sizes = {
  watchers: 20,
  otherSessions: 2,
  watchersPerOther: 2,
  entries: 800,
  otherEntries: 100,
  writers: 3,
  restarts: 2,
  connections: 4,
  raceWatchers: 32,
  raceRounds: 60,
  raceQuietMs: 2500,
  restartPhaseMs: 22_000,
  racePhaseMs: 28_000,
  foreignWatchers: 12,
  foreignRounds: 4,
};

interface Violations {
  gaps: number;
  duplicates: number;
  mismatched: number;
  lost: number;
  unseen: number;
  stalled: number;
  errors: number;
  details: string[];
}

function env(o: RunOptions): Record<string, string> | undefined {
  return o.control === undefined ? undefined : { SESSIOND_DEBUG: o.control };
}

/** Checks one watcher's record against the log; returns what it adds to the figures. */
function checkWatcher(
  who: string,
  s: WatcherStats,
  log: readonly string[],
  acked: readonly string[],
  v: Violations,
): void {
  v.gaps += s.gaps;
  v.duplicates += s.duplicates;
  v.errors += s.errors.length;
  for (const e of s.errors.slice(0, 3)) v.details.push(e);
  for (let i = 0; i < s.seqs.length; i++) {
    const seq = s.seqs[i] as number;
    if (log[seq - 1] !== s.ids[i]) {
      v.mismatched++;
      if (v.details.length < 50)
        v.details.push(`${who}: seq ${seq} carried id ${s.ids[i]}, the log has ${log[seq - 1]}`);
    }
  }
  if (s.last < log.length) {
    v.stalled++;
    v.details.push(`${who}: stalled at seq ${s.last} of ${log.length}`);
  }
  const seen = new Set(s.ids);
  const unseen = acked.filter((id) => !seen.has(id));
  if (unseen.length > 0) {
    v.unseen += unseen.length;
    v.details.push(`${who}: ${unseen.length} acked entries never seen, e.g. ${unseen[0]}`);
  }
}

interface RestartPhase {
  watchers: number;
  others: number;
  sigterm: number;
  kill9: number;
  resumes: number;
  reconnects: number;
  acked: number;
  delivered: number;
  n: number;
  endings: string;
}

async function restartPhase(
  o: RunOptions,
  z: Sizes,
  rng: Rng,
  v: Violations,
): Promise<RestartPhase> {
  let server: SessiondProcess = await startSessiond({ env: env(o) });
  const { port, dataDir, url } = server;
  // Writing stops by then whatever the load, leaving time for the race phase.
  const phaseStart = Date.now();
  const phaseEnd = Math.min(Date.now() + z.restartPhaseMs, o.deadline - z.racePhaseMs);
  const giveUpAt = phaseEnd + 20_000;
  const clients: SessiondClient[] = Array.from({ length: z.connections }, () => watchClient(url));
  const writerClients: SessiondClient[] = Array.from({ length: z.writers }, () => watchClient(url));
  const c0 = writerClients[0] as SessiondClient;
  const mk = async (title: string) =>
    (await c0.store.createSession({ workspace: WS, title })).session?.id as string;
  const main = await mk("t7 main");
  const others: string[] = [];
  for (let i = 0; i < z.otherSessions; i++) others.push(await mk(`t7 other ${i}`));

  const ac = new AbortController();
  setMaxListeners(0, ac.signal);
  const watchers: { who: string; session: string; stats: WatcherStats; done: Promise<void> }[] = [];
  const start = (session: string, who: string, i: number) => {
    const stats = newStats();
    const done = watchLoop({
      c: clients[i % clients.length] as SessiondClient,
      workspace: WS,
      session,
      stats,
      signal: ac.signal,
      rng: rng.fork(),
      maxCut: rng.pick([5, 50, 400]),
      // Every fourth watcher goes through the client library's resumable watch.
      resumable: i % 4 === 3,
      details: v.details,
      who,
    });
    watchers.push({ who, session, stats, done });
  };
  for (let i = 0; i < z.watchers; i++) start(main, `watcher ${i}`, i);
  others.forEach((s, k) => {
    for (let j = 0; j < z.watchersPerOther; j++) start(s, `other ${k}.${j}`, k * 7 + j);
  });

  // Writers: several on the main session, one on each other session; batches of 1-4 entries.
  const acked = new Map<string, string[]>([[main, []]]);
  for (const s of others) acked.set(s, []);
  const writeErrors: string[] = [];
  let written = 0;
  const writer = async (
    session: string,
    name: string,
    count: number,
    c: SessiondClient,
    r: Rng,
  ) => {
    const list = acked.get(session) as string[];
    for (let i = 0; i < count && Date.now() < phaseEnd; ) {
      const k = Math.min(r.int(1, 4), count - i);
      const batch = Array.from({ length: k }, (_, j) =>
        userEntry(`${name}-${i + j}`, `${name} ${i + j}`),
      );
      if (await appendUntilOk(c, WS, session, batch, giveUpAt, writeErrors)) {
        for (const e of batch) list.push(e.id as string);
        if (session === main) written += k;
      }
      i += k;
      if (r.bool(0.2)) await sleep(r.int(1, 10));
    }
  };
  const per = Math.ceil(z.entries / z.writers);
  const writing = Promise.all([
    ...writerClients.map((c, i) => writer(main, `w${i}`, per, c, rng.fork())),
    ...others.map((s, k) => writer(s, `o${k}`, z.otherEntries, c0, rng.fork())),
  ]);

  // Restarts, evenly spread over the write, SIGTERM and kill -9 in a seeded order.
  const kinds: ("SIGTERM" | "SIGKILL")[] = Array.from({ length: z.restarts }, (_, i) =>
    i % 2 === 0 ? "SIGTERM" : "SIGKILL",
  );
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    const t = kinds[i] as "SIGTERM" | "SIGKILL";
    kinds[i] = kinds[j] as "SIGTERM" | "SIGKILL";
    kinds[j] = t;
  }
  let sigterm = 0;
  let kill9 = 0;
  let writersDone = false;
  void writing.then(() => {
    writersDone = true;
  });
  for (let r = 0; r < kinds.length; r++) {
    const target = Math.floor(((r + 1) * z.entries) / (kinds.length + 1));
    // At its share of the entries or of the phase's time, whichever comes first.
    const at = phaseStart + ((r + 1) * (phaseEnd - phaseStart)) / (kinds.length + 1);
    while (written < target && !writersDone && Date.now() < at) await sleep(20);
    if (writersDone || Date.now() >= phaseEnd) break;
    await sleep(rng.int(0, 200));
    const t0 = Date.now();
    if (kinds[r] === "SIGTERM") {
      const code = await server.stop();
      sigterm++;
      if (code !== 0) {
        v.errors++;
        v.details.push(`SIGTERM: the server exited with ${code}`);
      }
    } else {
      await server.kill9();
      kill9++;
    }
    const t1 = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        server = await startSessiond({ port, dataDir, env: env(o), timeoutMs: 60_000 });
        o.log(
          `${kinds[r]} #${r + 1} at ${written} acked: stopped in ${t1 - t0} ms, restarted in ${Date.now() - t1} ms`,
        );
        break;
      } catch (err) {
        o.log(`restart attempt ${attempt + 1} failed: ${String(err).slice(0, 300)}`);
        if (attempt >= 5) throw err;
        await sleep(500); // the port may still be held for a moment
      }
    }
  }
  const tw = Date.now();
  await writing;
  o.log(`writers done ${Date.now() - tw} ms after the last restart step; ${written} acked`);
  for (const e of writeErrors.slice(0, 5)) v.details.push(`writer: ${e}`);

  // The final log of each session; every watcher must reach its head.
  const logs = new Map<string, string[]>();
  const logProblems: string[] = [];
  for (const s of [main, ...others]) logs.set(s, await readLogIds(c0, WS, s, logProblems));
  v.errors += logProblems.length;
  v.details.push(...logProblems.slice(0, 5));
  const waitUntil = Date.now() + 30_000;
  while (
    Date.now() < waitUntil &&
    watchers.some((w) => w.stats.last < (logs.get(w.session)?.length ?? 0))
  ) {
    await sleep(50);
  }
  await sleep(300); // a duplicate or an extra entry would arrive now
  ac.abort();
  await Promise.all(watchers.map((w) => w.done));
  await server.stop();
  removeDataDir(dataDir);

  for (const [s, ids] of acked) {
    const inLog = new Set(logs.get(s));
    const lost = ids.filter((id) => !inLog.has(id));
    v.lost += lost.length;
    if (lost.length > 0) v.details.push(`${s}: ${lost.length} acked entries lost, e.g. ${lost[0]}`);
  }
  for (const w of watchers) {
    checkWatcher(w.who, w.stats, logs.get(w.session) ?? [], acked.get(w.session) ?? [], v);
  }
  const mainWatchers = watchers.filter((w) => w.session === main);
  return {
    watchers: mainWatchers.length,
    others: watchers.length - mainWatchers.length,
    sigterm,
    kill9,
    resumes: watchers.reduce((a, w) => a + w.stats.resumes, 0),
    reconnects: watchers.reduce((a, w) => a + w.stats.reconnects, 0),
    acked: (acked.get(main) as string[]).length,
    delivered: Math.min(...mainWatchers.map((w) => w.stats.last)),
    n: logs.get(main)?.length ?? 0,
    endings: [
      ...watchers
        .flatMap((w) => [...w.stats.endings])
        .reduce((m, [k, n]) => m.set(k, (m.get(k) ?? 0) + n), new Map<string, number>()),
    ]
      .map(([k, n]) => `${k} ${n}`)
      .join(", "),
  };
}

interface RacePhase {
  rounds: number;
  watchers: number;
  stalled: number;
  stalledRounds: number;
  maxDeliveryMs: number;
}

/**
 * One race watcher's stream: from its cursor, recording every entry, until
 * aborted. Resolves when the stream ends.
 */
async function raceStream(
  c: SessiondClient,
  session: string,
  s: WatcherStats,
  signal: AbortSignal,
  v: Violations,
  who: string,
): Promise<void> {
  try {
    for await (const msg of c.session.watchEntries(
      { workspace: WS, session, afterSeq: BigInt(s.last) },
      { signal },
    )) {
      if (msg.event.case === "entry") {
        receive(s, Number(msg.event.value.seq), msg.event.value.id, v.details, who);
      }
    }
  } catch (err) {
    if (signal.aborted) return;
    const ce = ConnectError.from(err);
    s.errors.push(`${who}: ${Code[ce.code]} ${ce.rawMessage}`);
  }
}

async function racePhase(o: RunOptions, z: Sizes, rng: Rng, v: Violations): Promise<RacePhase> {
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-t7-race-"));
  const server = await startSessiond({ dataDir, args: ["--heartbeat-ms", "30000"], env: env(o) });
  const end = o.deadline - 2000;
  const clients = Array.from({ length: z.connections }, () => watchClient(server.url));
  const writer = watchClient(server.url);
  const session = (await writer.store.createSession({ workspace: WS, title: "t7 race" })).session
    ?.id as string;
  const stats = Array.from({ length: z.raceWatchers }, () => newStats());
  const errors: string[] = [];
  let next = 0;
  let head = 1;
  let rounds = 0;
  let stalled = 0;
  let stalledRounds = 0;
  let maxDeliveryMs = 0;
  // Adapts to how long the reconnect burst takes, so the race append lands inside it.
  let burstMs = 20;
  try {
    while (rounds < z.raceRounds && Date.now() + z.raceQuietMs + 1000 < end) {
      // The backlog, written while every watcher is disconnected.
      const backlog = rng.int(0, 12);
      if (backlog > 0) {
        const batch = Array.from({ length: backlog }, () => userEntry(`b-${next}`, `b ${next++}`));
        if (!(await appendUntilOk(writer, WS, session, batch, end + 10_000, errors))) break;
        head += backlog;
      }
      // Every watcher reconnects from its cursor; one append lands among the reconnects.
      const ac = new AbortController();
      setMaxListeners(0, ac.signal);
      const t0 = performance.now();
      const streams = stats.map((s, i) =>
        raceStream(
          clients[i % clients.length] as SessiondClient,
          session,
          s,
          ac.signal,
          v,
          `race watcher ${i}`,
        ),
      );
      await sleep(rng.int(0, Math.ceil(burstMs)));
      const raceEntry = userEntry(`r-${rounds}`, `race ${rounds}`);
      if (!(await appendUntilOk(writer, WS, session, [raceEntry], end + 10_000, errors))) break;
      head += 1;
      const target = head;
      // The quiet period: no append until every watcher has the entry or time is up.
      const quietEnd = Date.now() + z.raceQuietMs;
      while (Date.now() < quietEnd && stats.some((s) => s.last < target)) await sleep(5);
      const late = stats.filter((s) => s.last < target).length;
      if (late === 0) maxDeliveryMs = Math.max(maxDeliveryMs, performance.now() - t0);
      burstMs = 0.8 * burstMs + 0.2 * Math.min(500, performance.now() - t0);
      if (late > 0) {
        stalled += late;
        stalledRounds++;
        if (v.details.length < 50)
          v.details.push(
            `race round ${rounds}: ${late} of ${stats.length} watchers did not get seq ${target} within the ${z.raceQuietMs} ms quiet period`,
          );
      }
      ac.abort();
      await Promise.all(streams);
      rounds++;
      if (rounds % 20 === 0) o.log(`race: ${rounds} rounds, ${stalled} stalled`);
    }
  } finally {
    await server.stop();
    removeDataDir(dataDir);
  }
  for (const e of errors.slice(0, 5)) v.details.push(`race writer: ${e}`);
  v.errors += errors.length;
  const logProblems: string[] = [];
  void logProblems;
  for (const [i, s] of stats.entries()) {
    v.gaps += s.gaps;
    v.duplicates += s.duplicates;
    v.errors += s.errors.length;
    for (const e of s.errors.slice(0, 2)) v.details.push(e);
    void i;
  }
  v.stalled += stalled;
  return { rounds, watchers: stats.length, stalled, stalledRounds, maxDeliveryMs };
}

interface ForeignPhase {
  rounds: number;
  watchers: number;
  stalled: number;
  maxDeliveryMs: number;
}

const FOREIGN_HEARTBEAT_MS = 500;
const FOREIGN_QUIET_MS = 6000;

/**
 * Appends made by ANOTHER process (a second server on the same data dir)
 * raise no event in the watchers' server: they must still be delivered,
 * by the re-read at each heartbeat. Each round appends one entry through
 * the second server and waits (12 heartbeats at most) until every watcher
 * of the first one has it; a watcher that has not is "stalled".
 */
async function foreignPhase(o: RunOptions, z: Sizes, v: Violations): Promise<ForeignPhase> {
  const a = await startSessiond({
    args: ["--heartbeat-ms", String(FOREIGN_HEARTBEAT_MS)],
    env: env(o),
  });
  let b: SessiondProcess | undefined;
  const ac = new AbortController();
  setMaxListeners(0, ac.signal);
  const stats = Array.from({ length: z.foreignWatchers }, () => newStats());
  let rounds = 0;
  let stalled = 0;
  let maxDeliveryMs = 0;
  const errors: string[] = [];
  try {
    b = await startSessiond({ dataDir: a.dataDir, env: env(o) });
    const ca = watchClient(a.url);
    const cb = watchClient(b.url);
    const session = (await ca.store.createSession({ workspace: WS, title: "t7 foreign" })).session
      ?.id as string;
    const loops = stats.map((s, i) =>
      watchLoop({
        c: ca,
        workspace: WS,
        session,
        stats: s,
        signal: ac.signal,
        details: v.details,
        who: `foreign watcher ${i}`,
      }),
    );
    // Every watcher has replayed (it holds the root) before the first round.
    const ready = Date.now() + 20_000;
    while (Date.now() < ready && stats.some((s) => s.last < 1)) await sleep(20);
    await sleep(200);
    let head = 1;
    // At least one round; then as many as fit, leaving the race phase its time.
    const foreignEnd = o.deadline - z.racePhaseMs / 2;
    while (
      rounds < z.foreignRounds &&
      (rounds === 0 || Date.now() + FOREIGN_QUIET_MS < foreignEnd)
    ) {
      const t0 = performance.now();
      const e = userEntry(`f-${rounds}`, `foreign ${rounds}`);
      if (!(await appendUntilOk(cb, WS, session, [e], o.deadline, errors))) break;
      head++;
      const quietEnd = Date.now() + FOREIGN_QUIET_MS;
      while (Date.now() < quietEnd && stats.some((s) => s.last < head)) await sleep(10);
      const late = stats.filter((s) => s.last < head).length;
      if (late === 0) maxDeliveryMs = Math.max(maxDeliveryMs, performance.now() - t0);
      else {
        stalled += late;
        if (v.details.length < 50)
          v.details.push(
            `foreign round ${rounds}: ${late} of ${stats.length} watchers did not get seq ${head} (appended by another process) within ${FOREIGN_QUIET_MS} ms (heartbeat ${FOREIGN_HEARTBEAT_MS} ms)`,
          );
      }
      rounds++;
    }
    ac.abort();
    await Promise.all(loops);
  } finally {
    ac.abort();
    await b?.stop();
    await a.stop();
    removeDataDir(a.dataDir);
  }
  for (const e of errors.slice(0, 3)) v.details.push(`foreign writer: ${e}`);
  v.errors += errors.length;
  for (const s of stats) {
    v.gaps += s.gaps;
    v.duplicates += s.duplicates;
    v.errors += s.errors.length;
  }
  v.stalled += stalled;
  return { rounds, watchers: stats.length, stalled, maxDeliveryMs };
}

const test: ReliabilityTest = {
  id: "T7",
  name: "watch",
  controls: ["noSubscribeFirst"],
  budgetMs: { full: 200_000, quick: 55_000 },
  async run(o) {
    const z = o.quick ? QUICK : FULL;
    const rng = new Rng(o.seed);
    const v: Violations = {
      gaps: 0,
      duplicates: 0,
      mismatched: 0,
      lost: 0,
      unseen: 0,
      stalled: 0,
      errors: 0,
      details: [],
    };
    const r = await restartPhase(o, z, rng.fork(), v);
    o.log(`stream endings: ${r.endings}`);
    o.log(
      `restarts: ${r.sigterm} SIGTERM + ${r.kill9} kill-9, ${r.acked} acked, ${r.resumes} resumes, ${r.reconnects} reconnects`,
    );
    const mainStalled = v.stalled;
    const foreign = await foreignPhase(o, z, v);
    const race = await racePhase(o, z, rng.fork(), v);
    const violations =
      v.gaps + v.duplicates + v.mismatched + v.lost + v.unseen + v.stalled + v.errors;
    return {
      figures:
        `${r.watchers} watchers (+${r.others} on ${z.otherSessions} other sessions), ` +
        `${r.sigterm} SIGTERM + ${r.kill9} kill-9 restarts, ${r.resumes} resumes, ${r.reconnects} reconnects, ` +
        `${r.acked} acked, ${r.watchers} × ${r.delivered} of ${r.n} entries delivered, ` +
        `${v.gaps} gaps, ${v.duplicates} duplicates, ${v.mismatched} mismatched, ${v.lost} lost, ${v.unseen} unseen, ` +
        `${mainStalled} stalled at the end, ${v.errors} errors; ` +
        `${race.rounds} resume races × ${race.watchers} watchers (quiet ${z.raceQuietMs} ms, heartbeat 30 s): ` +
        `${race.stalled} stalled in ${race.stalledRounds} rounds, slowest full delivery ${race.maxDeliveryMs.toFixed(0)} ms; ` +
        `${foreign.rounds} appends by another process × ${foreign.watchers} watchers (heartbeat ${FOREIGN_HEARTBEAT_MS} ms): ` +
        `${foreign.stalled} stalled, slowest full delivery ${foreign.maxDeliveryMs.toFixed(0)} ms`,
      violations,
      details: v.details,
    };
  },
};

export default test;

if (isMain(import.meta)) await main(test);
