/**
 * T8 slow and many watchers, huge session.
 *
 * (a) One watcher reading very slowly while a writer is fast: the server
 *     must not queue what the slow watcher has not read (HTTP/2 flow
 *     control; a watcher holds at most one page). The same write runs twice
 *     on fresh servers, without and with the slow watcher, and the server's
 *     peak RSS growth is compared: the JSONL engine keeps a loaded session
 *     in memory (about its size, plus decoded entries), which both runs pay;
 *     a queue for the slow watcher would add about the volume written. The
 *     slow watcher's extra cost must stay under SLOW_OVERHEAD_MB, the slow
 *     watcher must really lag (it has read under half of the entries when
 *     the write ends), and the fast watchers of the same session keep up
 *     (they reach the head within FAST_CATCH_UP_MS of the last append).
 * (b) Thousands of idle streams up to the caps: --max-watchers-per-session
 *     on one session, then --max-watchers in total; each extra stream is
 *     refused with RESOURCE_EXHAUSTED (the right one of the two messages),
 *     exactly the capped number is open, and every open stream delivers the
 *     next append of its session.
 * (c) A big session (hundreds of MB; quick: tens) read by a freshly started
 *     server: GetState, every entry paged through GetEntries, and a watch
 *     from seq 0 to the head (dense, in order). The server's peak RSS growth
 *     must stay under BIG_FACTOR × the file size + BIG_SLACK_MB.
 */
import { setMaxListeners } from "node:events";
import { statSync } from "node:fs";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import type { SessiondClient } from "../../src/client/index.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";
import { isMain, main, type ReliabilityTest, type RunOptions } from "./lib/battery.js";
import { Rng } from "./lib/random.js";
import {
  appendUntilOk,
  MB,
  memoryOf,
  rssSampler,
  sleep,
  userEntry,
  watchClient,
} from "./lib/watch-support.js";

const WS = "t8";
const SLOW_OVERHEAD_MB = 50;
const FAST_CATCH_UP_MS = 15_000;
const BIG_FACTOR = 3;
const BIG_SLACK_MB = 100;

interface Sizes {
  /** Longest time a write of (a) / (c) may take (the volume written is reported). */
  slowWriteMs: number;
  bigWriteMs: number;
  slowMB: number;
  slowEntryKB: number;
  idleTotal: number;
  idlePerSession: number;
  bigMB: number;
}
const FULL: Sizes = {
  slowWriteMs: 40_000,
  bigWriteMs: 80_000,
  slowMB: 100,
  slowEntryKB: 64,
  idleTotal: 2000,
  idlePerSession: 500,
  bigMB: 256,
};
const QUICK: Sizes = {
  slowWriteMs: 8_000,
  bigWriteMs: 12_000,
  slowMB: 16,
  slowEntryKB: 64,
  idleTotal: 400,
  idlePerSession: 100,
  bigMB: 24,
};

interface Tally {
  violations: number;
  details: string[];
}
function violation(t: Tally, what: string): void {
  t.violations++;
  if (t.details.length < 40) t.details.push(what);
}

function env(o: RunOptions): Record<string, string> | undefined {
  return o.control === undefined ? undefined : { SESSIOND_DEBUG: o.control };
}

async function settledRss(pid: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    xs.push(memoryOf(pid).rss);
    await sleep(100);
  }
  return xs.sort((a, b) => a - b)[2] as number;
}

/** Appends `totalMB` of `entryKB` entries in ~1 MB batches; returns bytes written. */
async function writeVolume(
  c: SessiondClient,
  session: string,
  prefix: string,
  totalMB: number,
  entryKB: number,
  rng: Rng,
  deadline: number,
  t: Tally,
): Promise<number> {
  const perBatch = Math.max(1, Math.floor(1024 / entryKB));
  const body = (i: number) => {
    // Text that does not compress to nothing, different per entry.
    const seed = `${prefix}-${i}-${rng.int(0, 1e9)} `;
    return seed.repeat(Math.ceil((entryKB * 1024) / seed.length)).slice(0, entryKB * 1024);
  };
  let bytes = 0;
  let i = 0;
  const errors: string[] = [];
  while (bytes < totalMB * MB && Date.now() < deadline) {
    const batch = Array.from({ length: perBatch }, (_, j) =>
      userEntry(`${prefix}-${i + j}`, body(i + j)),
    );
    if (!(await appendUntilOk(c, WS, session, batch, deadline, errors))) break;
    i += perBatch;
    bytes += perBatch * entryKB * 1024;
  }
  for (const e of errors) violation(t, `writer: ${e}`);
  return bytes;
}

interface Follower {
  last: number;
  count: number;
  problems: number;
  done: Promise<void>;
}

/** A watcher from seq 0 that checks density; `pauseMs` per entry makes it slow. */
function follow(
  c: SessiondClient,
  session: string,
  signal: AbortSignal,
  pauseMs: number,
  t: Tally,
  who: string,
): Follower {
  const f: Follower = { last: 0, count: 0, problems: 0, done: Promise.resolve() };
  f.done = (async () => {
    try {
      for await (const m of c.session.watchEntries(
        { workspace: WS, session, afterSeq: 0n },
        { signal },
      )) {
        if (m.event.case !== "entry") continue;
        const seq = Number(m.event.value.seq);
        if (seq !== f.last + 1) {
          f.problems++;
          violation(t, `${who}: seq ${seq} after ${f.last}`);
        }
        f.last = seq;
        f.count++;
        if (pauseMs > 0) await sleep(pauseMs);
      }
    } catch (err) {
      if (!signal.aborted) violation(t, `${who}: ${String(ConnectError.from(err).message)}`);
    }
  })();
  return f;
}

interface SlowRun {
  writtenMB: number;
  growthMB: number;
  slowRead: number;
  entries: number;
  fastCatchUpMs: number;
}

/** One run of (a): a fresh server, fast watchers (and maybe a slow one), a fast writer. */
async function slowRun(
  o: RunOptions,
  z: Sizes,
  withSlow: boolean,
  rng: Rng,
  t: Tally,
): Promise<SlowRun> {
  const server = await startSessiond({ env: env(o) });
  const ac = new AbortController();
  setMaxListeners(0, ac.signal);
  try {
    const writer = watchClient(server.url, 120_000);
    const session = (await writer.store.createSession({ workspace: WS, title: "t8 slow" })).session
      ?.id as string;
    const fast = [0, 1, 2].map((i) =>
      follow(watchClient(server.url), session, ac.signal, 0, t, `fast watcher ${i}`),
    );
    const slow = withSlow
      ? follow(watchClient(server.url), session, ac.signal, 100, t, "slow watcher")
      : undefined;
    await sleep(500);
    const before = await settledRss(server.proc.pid as number);
    const sampler = rssSampler(server.proc.pid as number, 50);
    const bytes = await writeVolume(
      writer,
      session,
      "a",
      z.slowMB,
      z.slowEntryKB,
      rng,
      o.deadline,
      t,
    );
    const head = Number(
      (await writer.store.getSession({ workspace: WS, session })).session?.headSeq,
    );
    const t0 = Date.now();
    while (Date.now() - t0 < FAST_CATCH_UP_MS && fast.some((f) => f.last < head)) await sleep(20);
    const fastCatchUpMs = Date.now() - t0;
    for (const [i, f] of fast.entries()) {
      if (f.last < head)
        violation(
          t,
          `fast watcher ${i} at seq ${f.last} of ${head} ${FAST_CATCH_UP_MS} ms after the write (slow watcher: ${withSlow})`,
        );
    }
    const peak = sampler.stop();
    const slowRead = slow?.last ?? 0;
    if (slow !== undefined && slowRead > head / 2) {
      violation(t, `the slow watcher was not slow: it read ${slowRead} of ${head} entries`);
    }
    return {
      writtenMB: bytes / MB,
      growthMB: (peak - before) / MB,
      slowRead,
      entries: head,
      fastCatchUpMs,
    };
  } finally {
    ac.abort();
    await server.stop();
    removeDataDir(server.dataDir);
  }
}

interface IdleRun {
  open: number;
  perSessionRefused: number;
  totalRefused: number;
  delivered: number;
  perStreamKB: number;
}

/** (b): idle streams up to the caps. */
async function idleRun(o: RunOptions, z: Sizes, t: Tally): Promise<IdleRun> {
  const server = await startSessiond({
    env: env(o),
    args: [
      "--max-watchers",
      String(z.idleTotal),
      "--max-watchers-per-session",
      String(z.idlePerSession),
      "--heartbeat-ms",
      "20000",
    ],
  });
  const ac = new AbortController();
  setMaxListeners(0, ac.signal);
  const pid = server.proc.pid as number;
  try {
    const c0 = watchClient(server.url);
    const sessions: string[] = [];
    for (let i = 0; i < 6; i++)
      sessions.push(
        (await c0.store.createSession({ workspace: WS, title: `idle ${i}` })).session?.id as string,
      );
    const perConn = 250;
    const conns = Array.from({ length: Math.ceil((z.idleTotal + 200) / perConn) + 1 }, () =>
      watchClient(server.url),
    );
    for (const c of conns)
      await c.session.getEntries({ workspace: WS, session: sessions[0] as string, limit: 1 });
    const before = await settledRss(pid);
    let opened = 0;
    const streams: { session: number; last: number; open: boolean }[] = [];
    let perSessionRefused = 0;
    let totalRefused = 0;
    /** Opens one stream; resolves "open" at its first heartbeat or the error code. */
    const openOne = (si: number): Promise<string> => {
      const c = conns[opened++ % conns.length] as SessiondClient;
      const s = { session: si, last: 0, open: false };
      return new Promise<string>((resolve) => {
        void (async () => {
          try {
            for await (const m of c.session.watchEntries(
              { workspace: WS, session: sessions[si] as string, afterSeq: 1n },
              { signal: ac.signal },
            )) {
              if (m.event.case === "heartbeat" && !s.open) {
                s.open = true;
                streams.push(s);
                resolve("open");
              }
              if (m.event.case === "entry") s.last = Number(m.event.value.seq);
            }
            resolve("ended");
          } catch (err) {
            const ce = ConnectError.from(err);
            if (ce.code === Code.ResourceExhausted) {
              resolve(/of session/.test(ce.rawMessage) ? "per-session" : "total");
            } else if (!ac.signal.aborted) {
              if (s.open)
                violation(t, `an open idle stream ended: ${Code[ce.code]} ${ce.rawMessage}`);
              resolve(`${Code[ce.code]} ${ce.rawMessage}`);
            }
          }
        })();
      });
    };
    const tally = (results: string[], expectRefusal: "per-session" | "total") => {
      for (const r of results) {
        if (r === "open") continue;
        if (r === "per-session") perSessionRefused++;
        else if (r === "total") totalRefused++;
        else violation(t, `an idle stream failed: ${r}`);
        if (r !== expectRefusal && (r === "per-session" || r === "total"))
          violation(t, `refused as ${r}, expected ${expectRefusal}`);
      }
    };
    // Session 0 up to its cap, then 20 more: refused by the per-session cap.
    const extra = 20;
    const batchOpen = async (n: number, pick: (i: number) => number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i += 100) {
        out.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(100, n - i) }, (_, j) => openOne(pick(i + j))),
          )),
        );
      }
      return out;
    };
    tally(await batchOpen(z.idlePerSession, () => 0), "per-session");
    tally(await batchOpen(extra, () => 0), "per-session");
    // The other sessions (each under its cap) up to the total cap, then 50 more.
    const rest = z.idleTotal - z.idlePerSession;
    tally(await batchOpen(rest, (i) => 1 + (i % 5)), "total");
    tally(await batchOpen(50, (i) => 1 + (i % 5)), "total");
    const open = streams.length;
    if (open !== z.idleTotal) violation(t, `${open} idle streams open, the cap is ${z.idleTotal}`);
    if (perSessionRefused !== extra)
      violation(
        t,
        `${perSessionRefused} streams refused by the per-session cap, expected ${extra}`,
      );
    if (totalRefused !== 50)
      violation(t, `${totalRefused} streams refused by the total cap, expected 50`);
    await sleep(o.quick ? 500 : 2000);
    const after = await settledRss(pid);
    // Every open stream delivers the next append of its session.
    for (const s of sessions)
      await c0.session.append({
        workspace: WS,
        session: s,
        entries: [userEntry(`n-${s}`, "next")],
      });
    const t0 = Date.now();
    while (Date.now() - t0 < 20_000 && streams.some((s) => s.last < 2)) await sleep(50);
    const delivered = streams.filter((s) => s.last === 2).length;
    if (delivered !== open)
      violation(
        t,
        `${open - delivered} of ${open} open idle streams did not deliver the next append`,
      );
    return {
      open,
      perSessionRefused,
      totalRefused,
      delivered,
      perStreamKB: (after - before) / Math.max(1, open) / 1024,
    };
  } finally {
    ac.abort();
    await server.stop();
    removeDataDir(server.dataDir);
  }
}

interface BigRun {
  fileMB: number;
  entries: number;
  peakGrowthMB: number;
  ratio: number;
  readSeconds: number;
}

/** (c): a big session read and watched from seq 0 by a freshly started server. */
async function bigRun(o: RunOptions, z: Sizes, rng: Rng, t: Tally): Promise<BigRun> {
  let server: SessiondProcess = await startSessiond({ env: env(o) });
  const dataDir = server.dataDir;
  const ac = new AbortController();
  setMaxListeners(0, ac.signal);
  try {
    let c = watchClient(server.url, 120_000);
    const session = (await c.store.createSession({ workspace: WS, title: "t8 big" })).session
      ?.id as string;
    const written = await writeVolume(
      c,
      session,
      "big",
      z.bigMB,
      16,
      rng,
      Math.min(Date.now() + z.bigWriteMs, o.deadline),
      t,
    );
    // The current path back to the root, so that GetState stays small (the log keeps everything).
    await c.session.reset({ workspace: WS, session, entryId: "reset-1" });
    const head = Number((await c.store.getSession({ workspace: WS, session })).session?.headSeq);
    await server.stop();
    server = await startSessiond({ dataDir, env: env(o) });
    c = watchClient(server.url, 120_000);
    let fileBytes = written;
    try {
      fileBytes = statSync(join(dataDir, WS, "sessions", `${session}.jsonl`)).size;
    } catch {
      // not the jsonl engine: the volume written
    }
    const pid = server.proc.pid as number;
    await sleep(500);
    const before = await settledRss(pid);
    const sampler = rssSampler(pid, 50);
    const t0 = Date.now();
    await c.session.getState({ workspace: WS, session });
    let after = 0n;
    let pages = 0;
    for (;;) {
      const page = await c.session.getEntries({
        workspace: WS,
        session,
        afterSeq: after,
        limit: 100,
      });
      for (const e of page.entries) {
        if (e.seq !== after + 1n) violation(t, `GetEntries: seq ${e.seq} after ${after}`);
        after = e.seq;
      }
      pages++;
      if (page.entries.length === 0 || after >= page.headSeq) break;
    }
    if (Number(after) !== head) violation(t, `GetEntries paged to seq ${after} of ${head}`);
    let last = 0;
    for await (const m of c.session.watchEntries(
      { workspace: WS, session, afterSeq: 0n },
      { signal: ac.signal },
    )) {
      if (m.event.case === "entry") {
        const seq = Number(m.event.value.seq);
        if (seq !== last + 1) violation(t, `watch from 0: seq ${seq} after ${last}`);
        last = seq;
      } else if (last >= head) break;
    }
    if (last !== head) violation(t, `watch from 0 reached seq ${last} of ${head}`);
    const readSeconds = (Date.now() - t0) / 1000;
    const peak = sampler.stop();
    const peakGrowthMB = (peak - before) / MB;
    const fileMB = fileBytes / MB;
    if (peakGrowthMB > BIG_FACTOR * fileMB + BIG_SLACK_MB)
      violation(
        t,
        `reading a ${fileMB.toFixed(0)} MB session: server RSS +${peakGrowthMB.toFixed(0)} MB > ${BIG_FACTOR}× + ${BIG_SLACK_MB} MB`,
      );
    o.log(`big: ${pages} pages, watch to ${last}`);
    return { fileMB, entries: head, peakGrowthMB, ratio: peakGrowthMB / fileMB, readSeconds };
  } finally {
    ac.abort();
    await server.stop();
    removeDataDir(dataDir);
  }
}

const test: ReliabilityTest = {
  id: "T8",
  name: "slow-watchers",
  controls: [],
  budgetMs: { full: 240_000, quick: 70_000 },
  async run(o) {
    const z = o.quick ? QUICK : FULL;
    const rng = new Rng(o.seed);
    const t: Tally = { violations: 0, details: [] };
    const started = Date.now();
    const base = await slowRun(o, z, false, rng.fork(), t);
    o.log(
      `(a) without a slow watcher: ${base.writtenMB.toFixed(0)} MB written, RSS +${base.growthMB.toFixed(0)} MB`,
    );
    const slow = await slowRun(o, z, true, rng.fork(), t);
    const overhead = slow.growthMB - base.growthMB;
    o.log(
      `(a) with a slow watcher: RSS +${slow.growthMB.toFixed(0)} MB, slow watcher read ${slow.slowRead} of ${slow.entries} (${((Date.now() - started) / 1000).toFixed(1)} s for both runs)`,
    );
    if (overhead > SLOW_OVERHEAD_MB)
      violation(
        t,
        `a slow watcher cost the server ${overhead.toFixed(0)} MB (bound ${SLOW_OVERHEAD_MB} MB)`,
      );
    let t0 = Date.now();
    const big = await bigRun(o, z, rng.fork(), t);
    o.log(
      `(c) ${big.fileMB.toFixed(0)} MB: RSS peak +${big.peakGrowthMB.toFixed(0)} MB (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
    );
    t0 = Date.now();
    const idle = await idleRun(o, z, t);
    o.log(
      `(b) ${idle.open} idle streams open, ${idle.perStreamKB.toFixed(1)} KB each (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
    );
    return {
      figures:
        `slow watcher vs writer ${slow.writtenMB.toFixed(0)} MB: RSS +${slow.growthMB.toFixed(0)} MB ` +
        `(+${base.growthMB.toFixed(0)} MB without it: slow-watcher cost ${overhead.toFixed(0)} MB, bound ${SLOW_OVERHEAD_MB}), ` +
        `it read ${slow.slowRead} of ${slow.entries} entries, 3 fast watchers caught up in ${slow.fastCatchUpMs} ms; ` +
        `${idle.open + idle.perSessionRefused + idle.totalRefused} idle streams, caps ${z.idleTotal} total / ${z.idlePerSession} per session enforced ` +
        `(${idle.perSessionRefused} + ${idle.totalRefused} RESOURCE_EXHAUSTED), ${idle.delivered} of ${idle.open} open streams delivered, ` +
        `${idle.perStreamKB.toFixed(1)} KB per stream; ` +
        `${big.fileMB.toFixed(0)} MB session (${big.entries} entries) read and watched from 0 in ${big.readSeconds.toFixed(1)} s: ` +
        `RSS peak +${big.peakGrowthMB.toFixed(0)} MB (${big.ratio.toFixed(2)}× file, bound ${BIG_FACTOR}× + ${BIG_SLACK_MB} MB)`,
      violations: t.violations,
      details: t.details,
    };
  },
};

export default test;

if (isMain(import.meta)) await main(test);
