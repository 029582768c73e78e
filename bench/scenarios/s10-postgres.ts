/**
 * Scenario 10: the PostgreSQL engine. A throwaway PostgreSQL cluster
 * (test/harness/postgres.ts: initdb + pg_ctl in a temp dir on the same disk,
 * default settings, so fsync and synchronous_commit are on; or the server
 * of SESSIOND_TEST_PG_URL) and real `sessiond serve --storage postgres://...`
 * processes, called over native gRPC by a @grpc/grpc-js client (the client
 * of scenario g). Every database baseline uses the same driver (postgres.js,
 * the engine's pool options) on the same cluster, in a client process of its
 * own; the RPC baseline is the bare grpc-js echo server
 * (bench/grpc-echo-server.ts, a unary Echo of 500 B, same client): each is
 * measured in the same repetitions as sessiond, the order rotating, median
 * over repetitions.
 *
 * 10/append: durable Append, 1 client, sequential, ~500 B, p50, vs a bare
 *   `BEGIN; INSERT; COMMIT` of the same payload into a table with
 *   sessiond_entries' columns and indexes, plus the grpc-js echo p50 (an
 *   Append is an RPC and a commit). Target <= 1.5 ×.
 * 10/append64: 64 clients on 64 sessions, ops/s, vs 64 concurrent bare
 *   INSERT transactions through a pool as large as the server's (10).
 *   Target >= 0.5 ×. The details also carry the bare transaction with a
 *   pg_notify added (full runs only): a transaction that NOTIFYs holds a
 *   cluster-wide lock until after its commit (async.c, PreCommit_Notify),
 *   so such commits share fewer WAL flushes; the grpc-js echo's ops/s at 64
 *   in flight, and the server's CPU per append.
 * 10/list: ListSessions first page of 100 among 10,000 sessions (row 6's
 *   data, loaded through PostgresEngine.create, then ANALYZE as autovacuum
 *   would soon do), warm p50 <= 10 ms, like 6/warm.
 * 10/list-sql: the same figure vs the page as one SQL query (newest 100
 *   top-level sessions by the listing index, each with its root entry's
 *   payload) plus the grpc-js echo p50. Target <= 3 ×.
 * 10/watch: WatchEntries across two replicas, 1 watcher on A, appends
 *   through B: Append start → receipt on A, p50, vs a bare
 *   `BEGIN; INSERT; pg_notify; COMMIT` → LISTEN receipt plus the grpc-js
 *   echo p50. Target <= 2 ×.
 *
 * Durability (append rows): the cluster has fsync on and synchronous_commit
 * not off, the server's command line and environment have no debug switch,
 * every acknowledged append is in sessiond_entries afterwards (64 sessions:
 * seqs dense, read back through the API), and the append p50 is not below
 * the bare commit p50.
 *
 * Each part has a database of its own on the one cluster (appends, listing,
 * watch), so that no part's sessions show in another's figures.
 * --quick: 1 repetition, 50 sequential appends, 1 s at 64 in flight, 300
 * sessions, 20 watch rounds (about 25 s with the cluster's start-up).
 *
 * Without PostgreSQL binaries (and no SESSIOND_TEST_PG_URL) the scenario
 * prints one SKIPPED row; with CI=true it fails instead.
 */
import { readFileSync } from "node:fs";
import { createDatabase } from "../../test/harness/postgres.js";
import type { BenchContext, Scenario } from "../lib/context.js";
import {
  BARE_TABLE,
  connect,
  type Durability,
  durabilityOf,
  loadSessions,
  POOL,
  startPgSessiond,
  withPostgres,
} from "../lib/pg-common.js";
import { runClient, type ServerProcess, startGrpcEcho } from "../lib/procs.js";
import { absoluteAtMost, atLeast, atMost, type Row } from "../lib/row.js";
import { median, type Summary } from "../lib/stats.js";
import type { Throughput } from "./s2-append-many-sessions.js";

interface Latency extends Summary {
  mean: number;
  /** rpc-unary with serverPid: the server's CPU per call. */
  serverCpuUsPerCall?: number;
  /** pg-bare: its own (the driver's) CPU per transaction. */
  clientCpuUsPerCall?: number;
}

/** A throughput run, with the server's CPU per call when its pid was given. */
type Tput = Throughput & { serverCpuUsPerCall?: number; clientCpuUsPerCall?: number };

const PAGE = 100;
const IN_FLIGHT = 64;

function argvOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
}

/** Debug switches in a server's command line or environment (none exists for postgres today). */
function debugSwitches(pid: number): string[] {
  const bad = argvOf(pid).filter((a) => /fsync|sync=|debug|unsafe|durab/i.test(a));
  const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  for (const e of env) if (/^SESSIOND_DEBUG=./.test(e)) bad.push(e);
  return bad;
}

const med = <T>(runs: readonly T[], f: (r: T) => number) => median(runs.map(f));

/** The client stack of every sessiond and echo call of this scenario. */
const VIA = "grpc-js";

/**
 * Runs each side once per repetition, the order rotating over repetitions
 * so that no side always runs first (or right after the same one).
 */
async function rotate(
  ctx: BenchContext,
  reps: number,
  what: string,
  sides: readonly (readonly [string, () => Promise<void>])[],
): Promise<void> {
  for (let r = 0; r < reps; r++) {
    const order = sides.map((_, i) => sides[(i + r) % sides.length] as (typeof sides)[number]);
    ctx.log(`${what}, repetition ${r + 1}/${reps}: ${order.map(([name]) => name).join(", ")}`);
    for (const [, run] of order) await run();
  }
}

/** The grpc-js echo's sequential p50 (500 B unary Echo), the RPC part of every baseline. */
function echoLatency(echo: ServerProcess, warmup: number, n: number): Promise<Latency> {
  return runClient<Latency>("clients/rpc-unary.ts", {
    via: VIA,
    target: "echo",
    url: echo.url,
    mode: "latency",
    warmup,
    n,
  });
}

/** Rows 10/append and 10/append64, and the stored payload of one appended message. */
async function appendRows(
  ctx: BenchContext,
  serverUrl: string,
  echo: ServerProcess,
): Promise<{ rows: Row[]; payload: string }> {
  const reps = ctx.quick ? 1 : 3;
  const n = ctx.quick ? 50 : 1000;
  const warmup = ctx.quick ? 10 : 100;
  const durationMs = ctx.quick ? 1000 : 3000;
  const tputWarmup = ctx.quick ? 64 : 1024;
  const db = await createDatabase(serverUrl, "sessiond_bench_append");
  const admin = connect(db.url, 1, "bench-admin");
  try {
    const durability: Durability = await durabilityOf(admin);
    ctx.log(`PostgreSQL durability settings: ${JSON.stringify(durability)}`);
    const sd = await startPgSessiond(db.url);
    try {
      const bad = debugSwitches(sd.pid);
      await admin.unsafe(
        `CREATE TABLE ${BARE_TABLE} (LIKE sessiond_entries INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`,
      );
      // The bare baseline's row is a stored sessiond entry's payload, read
      // after the first sessiond run (the first repetition runs sessiond first).
      let payload = "";
      const payloadOf = async (): Promise<string> => {
        if (payload !== "") return payload;
        const [stored] = await admin<{ payload: string }[]>`
          SELECT payload FROM sessiond_entries WHERE kind = 'message' LIMIT 1`;
        if (stored === undefined) throw new Error("no stored message row to copy");
        payload = stored.payload;
        ctx.log(
          `bare row payload: ${Buffer.byteLength(payload)} B (a stored ~500 B message entry)`,
        );
        return payload;
      };

      // 10/append: sequential latency.
      const sdSeq: Latency[] = [];
      const bareSeq: Latency[] = [];
      const echoSeq: Latency[] = [];
      await rotate(ctx, reps, `sequential append (${n} calls each)`, [
        [
          "sessiond",
          async () => {
            sdSeq.push(
              await runClient<Latency>("clients/rpc-unary.ts", {
                via: VIA,
                target: "sessiond",
                url: sd.url,
                mode: "latency",
                warmup,
                n,
                serverPid: sd.pid,
              }),
            );
          },
        ],
        [
          "bare",
          async () => {
            bareSeq.push(
              await runClient<Latency>("clients/pg-bare.ts", {
                url: db.url,
                mode: "insert-latency",
                warmup,
                n,
                payload: await payloadOf(),
              }),
            );
          },
        ],
        [
          "grpc-js echo",
          async () => {
            echoSeq.push(await echoLatency(echo, warmup, n));
          },
        ],
      ]);
      const [count] = await admin<{ n: number }[]>`
        SELECT count(*)::int AS n FROM sessiond_entries WHERE kind = 'message'`;
      const acked = reps * (warmup + n);

      // 10/append64: throughput, 64 in flight on 64 sessions.
      const sdTput: Tput[] = [];
      const bareTput: Tput[] = [];
      // Not the baseline, pointers (details only): the same with pg_notify
      // in each transaction, as sessiond's appends had it before the
      // wake-up moved after the commit; and the grpc-js echo at 64 in flight.
      const bareNotifyTput: Throughput[] = [];
      const echoTput: Tput[] = [];
      await rotate(ctx, reps, `${IN_FLIGHT} in flight, ${durationMs} ms each`, [
        [
          "sessiond",
          async () => {
            sdTput.push(
              await runClient<Tput>("clients/rpc-unary.ts", {
                via: VIA,
                target: "sessiond",
                url: sd.url,
                mode: "throughput",
                warmup: tputWarmup,
                concurrency: IN_FLIGHT,
                sessions: IN_FLIGHT,
                durationMs,
                checkDense: true,
                serverPid: sd.pid,
              }),
            );
          },
        ],
        [
          "bare",
          async () => {
            bareTput.push(
              await runClient<Tput>("clients/pg-bare.ts", {
                url: db.url,
                mode: "insert-throughput",
                warmup: tputWarmup,
                concurrency: IN_FLIGHT,
                pool: POOL,
                durationMs,
                payload: await payloadOf(),
              }),
            );
            if (ctx.quick) return;
            bareNotifyTput.push(
              await runClient<Throughput>("clients/pg-bare.ts", {
                url: db.url,
                mode: "insert-throughput",
                warmup: tputWarmup,
                concurrency: IN_FLIGHT,
                pool: POOL,
                durationMs,
                payload: await payloadOf(),
                notify: true,
              }),
            );
          },
        ],
        ...(ctx.quick
          ? []
          : ([
              [
                "grpc-js echo",
                async () => {
                  echoTput.push(
                    await runClient<Tput>("clients/rpc-unary.ts", {
                      via: VIA,
                      target: "echo",
                      url: echo.url,
                      mode: "throughput",
                      warmup: tputWarmup,
                      concurrency: IN_FLIGHT,
                      durationMs,
                      serverPid: echo.pid,
                    }),
                  );
                },
              ],
            ] as const)),
      ]);

      const sdP50 = med(sdSeq, (x) => x.p50);
      const bareP50 = med(bareSeq, (x) => x.p50);
      const echoP50 = med(echoSeq, (x) => x.p50);
      const stored1 = (count?.n ?? 0) >= acked;
      const dense = sdTput.every((r) => r.check?.dense === true);
      const floorOk = sdP50 >= bareP50;
      const common = {
        cluster: durability,
        serverArgs: argvOf(sd.pid).slice(1).join(" "),
        debugSwitches: bad,
      };
      const seqDurable = durability.ok && bad.length === 0 && stored1 && floorOk;
      const tputDurable = durability.ok && bad.length === 0 && dense;
      ctx.log(
        `CPU per PostgreSQL append: sessiond's server ${med(sdSeq, (x) => x.serverCpuUsPerCall ?? Number.NaN).toFixed(1)} µs sequential, ${med(sdTput, (x) => x.serverCpuUsPerCall ?? Number.NaN).toFixed(1)} µs at ${IN_FLIGHT} in flight; the bare transaction's client ${med(bareSeq, (x) => x.clientCpuUsPerCall ?? Number.NaN).toFixed(1)} µs and ${med(bareTput, (x) => x.clientCpuUsPerCall ?? Number.NaN).toFixed(1)} µs`,
      );
      ctx.log(
        `durability: cluster ${durability.ok}, switches ${JSON.stringify(bad)}, ${count?.n}/${acked} sequential appends stored, p50 not below bare commit ${floorOk}, 64 sessions dense ${dense}`,
      );
      const seqRow = atMost(
        {
          id: "10/append",
          scenario: "PG: durable Append, 1 client, sequential, ~500 B",
          unit: "p50 ms",
          sessiond: sdP50,
          baseline: bareP50 + echoP50,
          baselineName: "bare BEGIN+INSERT+COMMIT p50 (postgres.js) + grpc-js echo p50",
          details: {
            durability: {
              ok: seqDurable,
              ...common,
              storedRows: count?.n,
              ackedAppends: acked,
              appendP50AtLeastBareCommitP50: floorOk,
            },
            pairedRatios: sdSeq.map(
              (x, i) => x.p50 / ((bareSeq[i]?.p50 ?? Number.NaN) + (echoSeq[i]?.p50 ?? Number.NaN)),
            ),
            bareP50,
            echoP50,
            repetitions: reps,
            callsPerRepetition: n,
            warmup,
            payloadBytes: Buffer.byteLength(payload),
            sessiondP99: med(sdSeq, (x) => x.p99),
            bareP99: med(bareSeq, (x) => x.p99),
            // Issue 40: sessiond's server CPU per PostgreSQL append next to the bare transaction's (its client's).
            sessiondServerCpuUsPerAppend: med(sdSeq, (x) => x.serverCpuUsPerCall ?? Number.NaN),
            bareClientCpuUsPerTransaction: med(bareSeq, (x) => x.clientCpuUsPerCall ?? Number.NaN),
            runs: { sessiond: sdSeq, bare: bareSeq, echo: echoSeq },
          },
        },
        1.5,
      );
      const tputRow = atLeast(
        {
          id: "10/append64",
          scenario: "PG: durable Append, 64 clients on 64 sessions",
          unit: "ops/s",
          sessiond: med(sdTput, (x) => x.opsPerSec),
          baseline: med(bareTput, (x) => x.opsPerSec),
          baselineName: `bare INSERT+COMMIT ops/s, 64 in flight, pool ${POOL}`,
          details: {
            durability: { ok: tputDurable, ...common, seqsDense: dense },
            denseChecks: sdTput.map((r) => r.check),
            pairedRatios: sdTput.map(
              (x, i) => x.opsPerSec / (bareTput[i]?.opsPerSec ?? Number.NaN),
            ),
            pool: POOL,
            inFlight: IN_FLIGHT,
            durationMs,
            warmup: tputWarmup,
            sessiondLatencyP50: med(sdTput, (x) => x.p50),
            sessiondLatencyP99: med(sdTput, (x) => x.p99),
            bareLatencyP50: med(bareTput, (x) => x.p50),
            bareLatencyP99: med(bareTput, (x) => x.p99),
            bareWithNotifyOpsPerSec: med(bareNotifyTput, (x) => x.opsPerSec),
            echoOpsPerSec: med(echoTput, (x) => x.opsPerSec),
            sessiondServerCpuUsPerAppend: med(sdTput, (x) => x.serverCpuUsPerCall ?? Number.NaN),
            // Issue 40: sessiond's CPU per PostgreSQL append next to the bare transaction's (its client's).
            bareClientCpuUsPerTransaction: med(bareTput, (x) => x.clientCpuUsPerCall ?? Number.NaN),
            echoServerCpuUsPerCall: med(echoTput, (x) => x.serverCpuUsPerCall ?? Number.NaN),
            runs: {
              sessiond: sdTput,
              bare: bareTput,
              bareWithNotify: bareNotifyTput,
              echo: echoTput,
            },
          },
        },
        0.5,
      );
      return {
        rows: [
          seqDurable ? seqRow : { ...seqRow, pass: false },
          tputDurable ? tputRow : { ...tputRow, pass: false },
        ],
        payload,
      };
    } finally {
      await sd.stop();
    }
  } finally {
    await admin.end({ timeout: 1 });
    await db.drop();
  }
}

async function listRows(ctx: BenchContext, serverUrl: string, echo: ServerProcess): Promise<Row[]> {
  const count = ctx.quick ? 300 : 10_000;
  const reps = ctx.quick ? 1 : 3;
  const calls = ctx.quick ? 30 : 200;
  const warmup = ctx.quick ? 5 : 20;
  const db = await createDatabase(serverUrl, "sessiond_bench_list");
  try {
    ctx.log(`loading ${count} sessions (row 6's data) through the engine`);
    const load = await loadSessions(ctx, db.url, {
      count,
      minEntries: 10,
      maxEntries: 30,
      textBytes: 400,
      startMs: Date.UTC(2024, 0, 1),
      concurrency: 16,
    });
    const sd = await startPgSessiond(db.url);
    const sdRuns: (Summary & { firstMs: number })[] = [];
    const bareRuns: (Summary & { count: number })[] = [];
    const echoRuns: Latency[] = [];
    try {
      await rotate(ctx, reps, `first page of ${PAGE} (${calls} calls each)`, [
        [
          "sessiond",
          async () => {
            sdRuns.push(
              await runClient<Summary & { firstMs: number }>("clients/pg-list.ts", {
                url: sd.url,
                pageSize: Math.min(PAGE, count),
                warmup,
                n: calls,
                expectFirst: load.newest,
              }),
            );
          },
        ],
        [
          "bare",
          async () => {
            bareRuns.push(
              await runClient<Summary & { count: number }>("clients/pg-bare.ts", {
                url: db.url,
                mode: "select",
                warmup,
                n: calls,
                pageSize: PAGE,
                expectFirst: load.newest,
              }),
            );
          },
        ],
        [
          "grpc-js echo",
          async () => {
            echoRuns.push(await echoLatency(echo, warmup, calls));
          },
        ],
      ]);
    } finally {
      await sd.stop();
    }
    const sdP50 = med(sdRuns, (x) => x.p50);
    const bareP50 = med(bareRuns, (x) => x.p50);
    const echoP50 = med(echoRuns, (x) => x.p50);
    const details = {
      sessions: load.sessions,
      entries: load.entries,
      loadMs: load.ms,
      repetitions: reps,
      callsPerRepetition: calls,
      warmup,
      sessiondP99: med(sdRuns, (x) => x.p99),
      firstCallMs: sdRuns.map((x) => x.firstMs),
      bareP50,
      bareP99: med(bareRuns, (x) => x.p99),
      echoP50,
      pairedRatios: sdRuns.map(
        (x, i) => x.p50 / ((bareRuns[i]?.p50 ?? Number.NaN) + (echoRuns[i]?.p50 ?? Number.NaN)),
      ),
      runs: { sessiond: sdRuns, bare: bareRuns, echo: echoRuns },
    };
    return [
      absoluteAtMost(
        {
          id: "10/list",
          scenario: `PG: ListSessions first page of ${PAGE} among ${count}, warm`,
          unit: "p50 ms",
          sessiond: sdP50,
          details,
        },
        10,
      ),
      atMost(
        {
          id: "10/list-sql",
          scenario: `PG: ListSessions first page of ${PAGE} among ${count}, warm`,
          unit: "p50 ms",
          sessiond: sdP50,
          baseline: bareP50 + echoP50,
          baselineName:
            "bare SELECT newest 100 + root payload, ORDER BY … LIMIT 100 p50 + grpc-js echo p50",
          details,
        },
        3,
      ),
    ];
  } finally {
    await db.drop();
  }
}

async function watchRow(
  ctx: BenchContext,
  serverUrl: string,
  payload: string,
  echo: ServerProcess,
): Promise<Row> {
  const reps = ctx.quick ? 1 : 3;
  const rounds = ctx.quick ? 20 : 200;
  const warmup = ctx.quick ? 5 : 20;
  const db = await createDatabase(serverUrl, "sessiond_bench_watch");
  try {
    const a = await startPgSessiond(db.url);
    try {
      const b = await startPgSessiond(db.url);
      try {
        // The bare baseline's table, created once the servers migrated.
        const admin = connect(db.url, 1, "bench-admin");
        try {
          await admin.unsafe(
            `CREATE TABLE ${BARE_TABLE} (LIKE sessiond_entries INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`,
          );
        } finally {
          await admin.end({ timeout: 1 });
        }
        const sdRuns: (Latency & { lostInWarmup: number })[] = [];
        const bareRuns: Latency[] = [];
        const echoRuns: Latency[] = [];
        await rotate(ctx, reps, `append on B → receipt on A (${rounds} rounds each)`, [
          [
            "sessiond",
            async () => {
              sdRuns.push(
                await runClient("clients/pg-watch-replicas.ts", {
                  via: VIA,
                  writerUrl: b.url,
                  watcherUrl: a.url,
                  rounds,
                  warmup,
                }),
              );
            },
          ],
          [
            "bare",
            async () => {
              bareRuns.push(
                await runClient<Latency>("clients/pg-bare.ts", {
                  url: db.url,
                  mode: "notify",
                  warmup,
                  n: rounds,
                  payload,
                }),
              );
            },
          ],
          [
            "grpc-js echo",
            async () => {
              echoRuns.push(await echoLatency(echo, warmup, rounds));
            },
          ],
        ]);
        const bareP50 = med(bareRuns, (x) => x.p50);
        const echoP50 = med(echoRuns, (x) => x.p50);
        return atMost(
          {
            id: "10/watch",
            scenario: "PG: WatchEntries across 2 replicas, 1 watcher: append on B → receipt on A",
            unit: "p50 ms",
            sessiond: med(sdRuns, (x) => x.p50),
            baseline: bareP50 + echoP50,
            baselineName:
              "bare BEGIN+INSERT+pg_notify+COMMIT → LISTEN receipt p50 + grpc-js echo p50",
            details: {
              repetitions: reps,
              rounds,
              warmup,
              bareP50,
              echoP50,
              sessiondP99: med(sdRuns, (x) => x.p99),
              bareP99: med(bareRuns, (x) => x.p99),
              lostInWarmup: sdRuns.map((x) => x.lostInWarmup),
              pairedRatios: sdRuns.map(
                (x, i) =>
                  x.p50 / ((bareRuns[i]?.p50 ?? Number.NaN) + (echoRuns[i]?.p50 ?? Number.NaN)),
              ),
              runs: { sessiond: sdRuns, bare: bareRuns, echo: echoRuns },
            },
          },
          2,
        );
      } finally {
        await b.stop();
      }
    } finally {
      await a.stop();
    }
  } finally {
    await db.drop();
  }
}

export const postgresRows: Scenario = {
  id: "10",
  title: "PostgreSQL engine: append, 64 in flight, listing, watch across replicas",
  async run(ctx: BenchContext): Promise<Row[]> {
    return withPostgres(ctx, "10", async (url) => {
      const echo = await startGrpcEcho();
      try {
        const rows: Row[] = [];
        const append = await appendRows(ctx, url, echo);
        rows.push(...append.rows);
        rows.push(...(await listRows(ctx, url, echo)));
        rows.push(await watchRow(ctx, url, append.payload, echo));
        return rows;
      } finally {
        await echo.stop();
      }
    });
  },
};
