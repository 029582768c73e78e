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
 * With `op: "getSession"` the sessiond call is a warm GetSession of one
 * session instead of an Append. With `serverPid` the answer also carries the
 * server process's CPU time (user + system, /proc/<pid>/stat) over the timed
 * calls, and per call.
 */
import { cpuMsOf } from "../lib/floors.js";
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
  /** sessiond: what each call is (default append). */
  op?: "append" | "getSession";
  /** The server process, to measure its CPU over the timed calls. */
  serverPid?: number;
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
  if (a.op === "getSession") {
    const session = sessionIds[0] as string;
    return {
      sessionIds,
      call: async () => {
        const r = await c.store.getSession({ session });
        if (r.session?.id !== session) throw new Error("GetSession returned another session");
        return undefined;
      },
    };
  }
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

/** Server CPU ms so far (undefined without serverPid). */
const serverCpu = () => (a.serverPid === undefined ? undefined : cpuMsOf(a.serverPid));
/** The server's CPU over `calls` timed calls that started at `cpu0`. */
function cpuOf(cpu0: number | undefined, calls: number) {
  const cpu1 = serverCpu();
  if (cpu0 === undefined || cpu1 === undefined) return {};
  return { serverCpuMs: cpu1 - cpu0, serverCpuUsPerCall: ((cpu1 - cpu0) * 1000) / calls };
}

if (a.mode === "latency") {
  for (let i = 0; i < a.warmup; i++) await call(0);
  const samples: number[] = [];
  const cpu0 = serverCpu();
  for (let i = 0; i < (a.n ?? 1000); i++) {
    const t = now();
    await call(0);
    samples.push(now() - t);
  }
  const cpu = cpuOf(cpu0, samples.length);
  const s = summarize(samples);
  log(`${a.target} sequential: p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms (n=${s.n})`);
  answer({ ...s, mean: samples.reduce((x, y) => x + y, 0) / samples.length, ...cpu });
}

const concurrency = a.concurrency ?? 64;
// Warm-up: every loop, concurrently, until `warmup` calls are done in total.
await Promise.all(
  Array.from({ length: concurrency }, async (_, loop) => {
    for (let i = 0; i < Math.ceil(a.warmup / concurrency); i++) await call(loop);
  }),
);
const latencies: number[] = [];
const cpu0 = serverCpu();
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
const cpu = cpuOf(cpu0, ops);
const lat = summarize(latencies);
log(
  `${a.target} x${concurrency}: ${(ops / seconds).toFixed(0)} ops/s, p50 ${lat.p50.toFixed(2)} ms, p99 ${lat.p99.toFixed(2)} ms${"serverCpuUsPerCall" in cpu ? `, server CPU ${cpu.serverCpuUsPerCall?.toFixed(1)} µs/call` : ""}`,
);
answer({
  ops,
  seconds,
  opsPerSec: ops / seconds,
  p50: lat.p50,
  p99: lat.p99,
  ...cpu,
  ...(a.checkDense && dense ? { check: await dense() } : {}),
});
