/**
 * WatchEntries across two sessiond replicas on one PostgreSQL database:
 * one watcher on replica A (`watcherUrl`), one writer on replica B
 * (`writerUrl`), both in this process so one clock measures. Each round
 * the writer appends one ~500 B message through B and the latency is from
 * the Append call starting to the receipt of that entry on A's stream
 * (B commits, PostgreSQL delivers B's NOTIFY to A's LISTEN connection, A
 * reads the entry from the tables and writes it to the stream). The next
 * round starts once the entry arrived and the call returned. The watcher
 * checks that seqs arrive without gaps.
 *
 * Warm-up rounds tolerate a lost wake-up (A's LISTEN connection is opened
 * when its event hub starts): after 2 s without the entry they go on with
 * the next append. Timed rounds fail after 30 s.
 */
import { summarize } from "../lib/stats.js";
import { answer, args, log, message, newSession, now, sessiond } from "./rpc-common.js";

interface Args {
  writerUrl: string;
  watcherUrl: string;
  rounds: number;
  warmup: number;
}

const a = args<Args>();
const ac = new AbortController();
const writer = sessiond(a.writerUrl);
const watcher = sessiond(a.watcherUrl);
const session = await newSession(writer, "cross-replica watch");
let head = Number((await writer.session.getEntries({ session, afterSeq: 0n, limit: 1 })).headSeq);

let failed: unknown;
let last = 0;
let waitFor = -1;
let onSeq: ((at: number) => void) | undefined;
let onFail: ((err: unknown) => void) | undefined;
let onReady: (() => void) | undefined;

void (async () => {
  let first = true;
  try {
    for await (const ev of watcher.session.watchEntries(
      { session, afterSeq: 0n },
      { signal: ac.signal },
    )) {
      if (ev.event.case === "entry") {
        const at = now();
        const seq = Number(ev.event.value.seq);
        if (seq !== last + 1) throw new Error(`watcher: seq ${seq} after ${last}`);
        last = seq;
        if (seq >= waitFor) onSeq?.(at);
      } else if (ev.event.case === "heartbeat" && first) {
        first = false;
        onReady?.();
      }
    }
    if (!ac.signal.aborted) throw new Error("watcher: stream ended");
  } catch (err) {
    if (!ac.signal.aborted) {
      failed ??= err;
      onFail?.(err);
    }
  }
})();

await new Promise<void>((done, reject) => {
  onReady = done;
  onFail = reject;
  setTimeout(() => reject(new Error("watcher not ready after 30 s")), 30_000).unref();
});

/** One round: ms from the append's start to the receipt on A, or undefined after `timeoutMs`. */
async function round(timeoutMs: number): Promise<number | undefined> {
  const seq = head + 1;
  waitFor = seq;
  let timer: NodeJS.Timeout | undefined;
  const got = new Promise<number | undefined>((done, reject) => {
    onSeq = done;
    onFail = reject;
    timer = setTimeout(() => done(undefined), timeoutMs);
  });
  const t0 = now();
  try {
    const [, at] = await Promise.all([
      writer.session.append({ session, entries: [message()] }).then((r) => {
        if (Number(r.headSeq) !== seq)
          throw new Error(`append got seq ${r.headSeq}, expected ${seq}`);
        head = seq;
      }),
      got,
    ]);
    return at === undefined ? undefined : at - t0;
  } finally {
    clearTimeout(timer);
    onSeq = undefined;
  }
}

let lostInWarmup = 0;
for (let i = 0; i < a.warmup; i++) {
  if ((await round(2_000)) === undefined) lostInWarmup++;
}
const samples: number[] = [];
for (let i = 0; i < a.rounds; i++) {
  const ms = await round(30_000);
  if (ms === undefined) throw new Error(`round ${i}: seq ${head} not received on A after 30 s`);
  samples.push(ms);
}
if (failed !== undefined) throw failed;
ac.abort();
const s = summarize(samples);
log(
  `append on B → receipt on A: p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms (${lostInWarmup} lost in warm-up)`,
);
answer({ ...s, mean: samples.reduce((x, y) => x + y, 0) / samples.length, lostInWarmup });
