/**
 * Unary load on sessiond (Append of one ~500 B message) or on the echo
 * baseline (Echo of 500 B), over one HTTP/2 connection with the gRPC
 * transport, in two modes:
 * - latency: one caller, sequential; warm-up, then `n` timed calls.
 * - throughput: `concurrency` concurrent loops (each always has one call in
 *   flight) for `durationMs`; sessiond loops spread over `sessions`
 *   sessions (loop i appends to session i % sessions). With `checkDense`
 *   the log of every session is read back afterwards and its seqs must be
 *   1..head with every acknowledged entry present exactly once.
 */
import { summarize } from "../lib/stats.js";
import {
  answer,
  args,
  echo,
  log,
  message,
  newSession,
  now,
  PAYLOAD,
  sessiond,
} from "./rpc-common.js";

interface Args {
  target: "sessiond" | "echo";
  url: string;
  mode: "latency" | "throughput";
  warmup: number;
  /** latency: timed calls. */
  n?: number;
  /** throughput: loops, sessions, duration. */
  concurrency?: number;
  sessions?: number;
  durationMs?: number;
  checkDense?: boolean;
}

const a = args<Args>();

/** One call of the target; returns the acknowledged entry id (sessiond). */
type Call = (loop: number) => Promise<string | undefined>;

async function setup(): Promise<{
  call: Call;
  sessionIds: string[];
  dense?: () => Promise<unknown>;
}> {
  if (a.target === "echo") {
    const c = echo(a.url);
    return {
      sessionIds: [],
      call: async () => {
        await c.echo({ payload: PAYLOAD });
        return undefined;
      },
    };
  }
  const c = sessiond(a.url);
  const count = a.mode === "latency" ? 1 : (a.sessions ?? 1);
  const sessionIds: string[] = [];
  for (let i = 0; i < count; i++) sessionIds.push(await newSession(c, `bench ${i}`));
  const acked = sessionIds.map(() => [] as string[]);
  const call: Call = async (loop) => {
    const s = loop % sessionIds.length;
    const r = await c.session.append({ session: sessionIds[s] as string, entries: [message()] });
    const id = r.entries[0]?.id;
    if (id === undefined) throw new Error("Append acknowledged no entry");
    acked[s]?.push(id);
    return id;
  };
  // Reads every log back: seqs must be exactly 1..head, every acknowledged
  // entry present once.
  const dense = async () => {
    const problems: string[] = [];
    let entries = 0;
    for (const [s, sessionId] of sessionIds.entries()) {
      const seen = new Map<string, number>();
      let after = 0n;
      let head = 0n;
      let gaps = 0;
      for (;;) {
        const page = await c.session.getEntries({
          session: sessionId,
          afterSeq: after,
          limit: 1000,
        });
        head = page.headSeq;
        for (const e of page.entries) {
          if (e.seq !== after + 1n) gaps++;
          after = e.seq;
          seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
        }
        if (page.entries.length === 0 || after >= head) break;
      }
      entries += Number(after);
      const missing = (acked[s] ?? []).filter((id) => seen.get(id) !== 1).length;
      if (gaps > 0 || after !== head || missing > 0)
        problems.push(
          `${sessionId}: ${gaps} gaps, last seq ${after} vs head ${head}, ${missing} acked entries missing or repeated`,
        );
    }
    return {
      dense: problems.length === 0,
      sessions: sessionIds.length,
      entries,
      problems: problems.slice(0, 5),
    };
  };
  return { call, sessionIds, dense };
}

const { call, dense } = await setup();

if (a.mode === "latency") {
  for (let i = 0; i < a.warmup; i++) await call(0);
  const samples: number[] = [];
  for (let i = 0; i < (a.n ?? 1000); i++) {
    const t = now();
    await call(0);
    samples.push(now() - t);
  }
  const s = summarize(samples);
  log(`${a.target} sequential: p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms (n=${s.n})`);
  answer({ ...s, mean: samples.reduce((x, y) => x + y, 0) / samples.length });
}

const concurrency = a.concurrency ?? 64;
// Warm-up: every loop, concurrently, until `warmup` calls are done in total.
await Promise.all(
  Array.from({ length: concurrency }, async (_, loop) => {
    for (let i = 0; i < Math.ceil(a.warmup / concurrency); i++) await call(loop);
  }),
);
const latencies: number[] = [];
const start = now();
const deadline = start + (a.durationMs ?? 5000);
let ops = 0;
await Promise.all(
  Array.from({ length: concurrency }, async (_, loop) => {
    while (now() < deadline) {
      const t = now();
      await call(loop);
      latencies.push(now() - t);
      ops++;
    }
  }),
);
const seconds = (now() - start) / 1000;
const lat = summarize(latencies);
log(
  `${a.target} x${concurrency}: ${(ops / seconds).toFixed(0)} ops/s, p50 ${lat.p50.toFixed(2)} ms, p99 ${lat.p99.toFixed(2)} ms`,
);
answer({
  ops,
  seconds,
  opsPerSec: ops / seconds,
  p50: lat.p50,
  p99: lat.p99,
  ...(a.checkDense && dense ? { check: await dense() } : {}),
});
