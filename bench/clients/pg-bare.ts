/**
 * The bare PostgreSQL baselines of scenarios 10 and 11, with the driver sessiond
 * uses (postgres.js, the engine's pool options), on the same database:
 *
 * - insert-latency: one caller, sequential; each call is one transaction
 *   `BEGIN; INSERT one row; COMMIT` (sql.begin) of the same payload as a
 *   stored sessiond entry, into a table with sessiond_entries' columns and
 *   indexes. Warm-up, then `n` timed calls.
 * - insert-throughput: `concurrency` loops (each its own session id, one
 *   transaction always in flight) through a pool of `pool` connections,
 *   for `durationMs`.
 * - select: the first page of a listing as one query (newest 100 top-level
 *   sessions, each with its root entry's payload), `n` timed calls.
 * - search: the message entries whose payload holds `word` (one ILIKE: the
 *   trigram index answers it), `n` timed calls (scenario 11).
 * - notify: a LISTEN connection of its own (sql.listen) and a writer; each
 *   round `BEGIN; INSERT; SELECT pg_notify(...); COMMIT`, latency from the
 *   transaction's start to the receipt of its NOTIFY.
 */
import { randomUUID } from "node:crypto";
import { BARE_CHANNEL, BARE_COLUMNS, BARE_TABLE, connect } from "../lib/pg-common.js";
import { summarize } from "../lib/stats.js";
import { answer, args, log, now } from "./rpc-common.js";

interface Args {
  url: string;
  mode: "insert-latency" | "insert-throughput" | "select" | "search" | "notify";
  /** search: the word looked for. */
  word?: string;
  warmup: number;
  /** insert-latency, select, notify: timed calls (rounds). */
  n?: number;
  /** insert modes, notify: the row's payload (a stored sessiond entry's JSON). */
  payload?: string;
  concurrency?: number;
  pool?: number;
  durationMs?: number;
  /** insert modes: also `SELECT pg_notify(...)` in each transaction (as sessiond does). */
  notify?: boolean;
  /** select: the workspace, page size and the newest session id expected first. */
  workspace?: string;
  pageSize?: number;
  expectFirst?: string;
}

const a = args<Args>();
const WS = "bench-bare";
const run = randomUUID().slice(0, 8);

const replica = randomUUID();

/** A NOTIFY payload shaped like the engine's (notify.ts): a wake-up, never data. */
function wakeOf(row: { session_id: string; seq: number }): string {
  return JSON.stringify({ t: "appended", w: WS, s: row.session_id, h: row.seq, r: replica });
}

/** One loop's session: its own id, seqs 1.. (one writer per session, like sessiond's sessions). */
function rowsOf(loop: number) {
  const session = `bare-${run}-${loop}`;
  let seq = 0;
  return () => {
    seq++;
    return {
      workspace: WS,
      session_id: session,
      seq,
      id: seq.toString(16).padStart(8, "0"),
      parent_id: seq === 1 ? null : (seq - 1).toString(16).padStart(8, "0"),
      kind: "message",
      payload: a.payload ?? "",
    };
  };
}

/**
 * This process's CPU (user + system) since `start`, µs per call: what the
 * bare transaction costs its client (the driver), next to sessiond's
 * server CPU per PostgreSQL append (the server process, measured alike).
 */
function cpuUsPerCall(start: NodeJS.CpuUsage, calls: number): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / Math.max(1, calls);
}

async function insertLatency(): Promise<void> {
  const sql = connect(a.url, a.pool ?? 1, "bench-bare");
  const next = rowsOf(0);
  const call = () =>
    sql.begin(async (tx) => {
      await tx`INSERT INTO ${tx(BARE_TABLE)} ${tx([next()], ...BARE_COLUMNS)}`;
    });
  for (let i = 0; i < a.warmup; i++) await call();
  const samples: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < (a.n ?? 1000); i++) {
    const t = now();
    await call();
    samples.push(now() - t);
  }
  const cpu = cpuUsPerCall(cpu0, samples.length);
  await sql.end({ timeout: 1 });
  const s = summarize(samples);
  log(
    `bare INSERT+COMMIT sequential: p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms, ${cpu.toFixed(1)} µs client CPU each`,
  );
  answer({
    ...s,
    mean: samples.reduce((x, y) => x + y, 0) / samples.length,
    clientCpuUsPerCall: cpu,
  });
}

async function insertThroughput(): Promise<void> {
  const pool = a.pool ?? 10;
  const concurrency = a.concurrency ?? 64;
  const sql = connect(a.url, pool, "bench-bare");
  const loops = Array.from({ length: concurrency }, (_, i) => rowsOf(i));
  const call = (loop: number) =>
    sql.begin(async (tx) => {
      const row = (loops[loop] as ReturnType<typeof rowsOf>)();
      await tx`INSERT INTO ${tx(BARE_TABLE)} ${tx([row], ...BARE_COLUMNS)}`;
      if (a.notify) await tx`SELECT pg_notify(${BARE_CHANNEL}, ${wakeOf(row)})`;
    });
  await Promise.all(
    loops.map(async (_, loop) => {
      for (let i = 0; i < Math.ceil(a.warmup / concurrency); i++) await call(loop);
    }),
  );
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const start = now();
  const deadline = start + (a.durationMs ?? 3000);
  let ops = 0;
  await Promise.all(
    loops.map(async (_, loop) => {
      while (now() < deadline) {
        const t = now();
        await call(loop);
        latencies.push(now() - t);
        ops++;
      }
    }),
  );
  const seconds = (now() - start) / 1000;
  const cpu = cpuUsPerCall(cpu0, ops);
  await sql.end({ timeout: 1 });
  const lat = summarize(latencies);
  log(
    `bare INSERT${a.notify ? "+NOTIFY" : ""}+COMMIT x${concurrency} on a pool of ${pool}: ${(ops / seconds).toFixed(0)} ops/s, p50 ${lat.p50.toFixed(2)} ms, ${cpu.toFixed(1)} µs client CPU each`,
  );
  answer({
    ops,
    seconds,
    opsPerSec: ops / seconds,
    p50: lat.p50,
    p99: lat.p99,
    clientCpuUsPerCall: cpu,
  });
}

async function select(): Promise<void> {
  const sql = connect(a.url, 1, "bench-bare");
  const ws = a.workspace ?? "default";
  const size = a.pageSize ?? 100;
  await timedQueries(
    "SELECT first page",
    () => sql<{ session_id: string }[]>`
    SELECT s.session_id, s.created_at_ms, s.head_seq, s.leaf_id, s.message_count, s.title,
      s.updated_at_ms, e.payload
    FROM sessiond_sessions s
    JOIN sessiond_entries e
      ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq = 1
    WHERE s.workspace = ${ws} AND s.parent_session_id = ''
    ORDER BY s.created_at_ms DESC, s.session_id DESC
    LIMIT ${size}`,
  );
  await sql.end({ timeout: 1 });
}

/** The entries whose payload holds the word, as a user would ask: one ILIKE (scenario 11). */
async function search(): Promise<void> {
  const sql = connect(a.url, 1, "bench-bare");
  const ws = a.workspace ?? "default";
  const pattern = `%${a.word ?? ""}%`;
  await timedQueries(
    "SELECT ... ILIKE",
    () => sql<{ session_id: string }[]>`
    SELECT session_id, seq, payload FROM sessiond_entries
    WHERE workspace = ${ws} AND kind = 'message' AND payload ILIKE ${pattern}
    LIMIT ${a.pageSize ?? 100}`,
  );
  await sql.end({ timeout: 1 });
}

/** One call checked against `expectFirst`, `warmup` more, then `n` timed ones; answers their summary. */
async function timedQueries(
  what: string,
  call: () => Promise<{ session_id: string }[]>,
): Promise<void> {
  const first = await call();
  if (a.expectFirst !== undefined && first[0]?.session_id !== a.expectFirst) {
    throw new Error(`bare ${what}: first row ${first[0]?.session_id}, expected ${a.expectFirst}`);
  }
  for (let i = 0; i < a.warmup; i++) await call();
  const samples: number[] = [];
  for (let i = 0; i < (a.n ?? 200); i++) {
    const t = now();
    await call();
    samples.push(now() - t);
  }
  const s = summarize(samples);
  log(`bare ${what}: p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms`);
  answer({ ...s, count: first.length });
}

async function notify(): Promise<void> {
  const listener = connect(a.url, 1, "bench-bare-listen");
  const writer = connect(a.url, 1, "bench-bare");
  const next = rowsOf(0);
  let expect = -1;
  let onGot: ((at: number) => void) | undefined;
  await listener.listen(BARE_CHANNEL, (payload) => {
    const at = now();
    const h = (JSON.parse(payload) as { h: number }).h;
    if (h === expect) onGot?.(at);
  });
  const round = async (): Promise<number> => {
    const row = next();
    expect = row.seq;
    let timer: NodeJS.Timeout | undefined;
    const got = new Promise<number>((done, fail) => {
      onGot = done;
      timer = setTimeout(() => fail(new Error(`NOTIFY ${row.seq} not received in 30 s`)), 30_000);
    });
    const t0 = now();
    try {
      await writer.begin(async (tx) => {
        await tx`INSERT INTO ${tx(BARE_TABLE)} ${tx([row], ...BARE_COLUMNS)}`;
        await tx`SELECT pg_notify(${BARE_CHANNEL}, ${wakeOf(row)})`;
      });
      return (await got) - t0;
    } finally {
      clearTimeout(timer);
    }
  };
  for (let i = 0; i < a.warmup; i++) await round();
  const samples: number[] = [];
  for (let i = 0; i < (a.n ?? 200); i++) samples.push(await round());
  await writer.end({ timeout: 1 });
  await listener.end({ timeout: 0 });
  const s = summarize(samples);
  log(`bare INSERT+NOTIFY+COMMIT → LISTEN: p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms`);
  answer({ ...s, mean: samples.reduce((x, y) => x + y, 0) / samples.length });
}

if (a.mode === "insert-latency") await insertLatency();
else if (a.mode === "insert-throughput") await insertThroughput();
else if (a.mode === "select") await select();
else if (a.mode === "search") await search();
else await notify();
