/**
 * Scenario 8: memory. `8/idle`: VmRSS of a freshly started server (JSONL
 * engine, empty data dir) a few seconds after start, <= 100 MB. `8/stream`:
 * growth of the server's VmRSS per idle WatchEntries stream with 1,000 open
 * (over 10 sessions and 4 connections, each stream past its first
 * heartbeat), <= 50 KB per stream: retired (information only, issue 40),
 * since connect-node's own echo stream costs more than that. The echo server's idle RSS and its growth
 * per idle Subscribe stream (same layout) are measured as the baseline and
 * kept in the details.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import { memoryOf, runClient, type ServerProcess, startEcho, startSessiond } from "../lib/procs.js";
import { absoluteAtMost, type Row, retired } from "../lib/row.js";

interface Idle {
  before: number;
  after: number;
  perStream: number;
  streams: number;
  connections: number;
  openMs: number;
}

const MB = 2 ** 20;
const KB = 2 ** 10;
const STREAMS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Idle RSS `settleMs` after start, then the per-stream growth with STREAMS streams. */
async function measure(
  ctx: BenchContext,
  server: ServerProcess,
  target: "sessiond" | "echo",
  settleMs: number,
): Promise<{ idle: number; peakAtIdle: number; streams: Idle }> {
  await sleep(settleMs);
  const { rss: idle, peak: peakAtIdle } = memoryOf(server.pid);
  ctx.log(`${target}: idle RSS ${(idle / MB).toFixed(1)} MB; opening ${STREAMS} idle streams`);
  const streams = await runClient<Idle>("clients/rpc-watch-idle.ts", {
    target,
    url: server.url,
    pid: server.pid,
    streams: STREAMS,
    sessions: 10,
    perConnection: 250,
    settleMs: ctx.quick ? 500 : 3000,
  });
  return { idle, peakAtIdle, streams };
}

export const memory: Scenario = {
  id: "8",
  title: "memory: idle server RSS; RSS per idle watch stream (1,000 streams)",
  async run(ctx: BenchContext): Promise<Row[]> {
    const settleMs = ctx.quick ? 1000 : 5000;
    const sd = await startSessiond(["--data-dir", mkdtempSync(join(ctx.tmpDir, "s8-"))]);
    let s: Awaited<ReturnType<typeof measure>>;
    try {
      s = await measure(ctx, sd, "sessiond", settleMs);
    } finally {
      await sd.stop();
    }
    const echo = await startEcho();
    let e: Awaited<ReturnType<typeof measure>>;
    try {
      e = await measure(ctx, echo, "echo", settleMs);
    } finally {
      await echo.stop();
    }
    const streamDetails = (x: Idle) => ({
      streams: x.streams,
      connections: x.connections,
      rssBeforeMB: x.before / MB,
      rssAfterMB: x.after / MB,
      perStreamKB: x.perStream / KB,
      openMs: x.openMs,
    });
    return [
      absoluteAtMost(
        {
          id: "8/idle",
          scenario: "idle server RSS (JSONL, empty data dir)",
          unit: "MB",
          sessiond: s.idle / MB,
          details: {
            sampledAfterMs: settleMs,
            sessiondPeakMB: s.peakAtIdle / MB,
            echoIdleMB: e.idle / MB,
            echoPeakMB: e.peakAtIdle / MB,
          },
        },
        100,
      ),
      // Retired (issue 40): over Connect a stream lives on connect-node, whose own
      // echo's idle stream costs more than the limit; g8 holds the native gRPC one.
      retired(
        absoluteAtMost(
          {
            id: "8/stream",
            scenario: `RSS per idle WatchEntries stream (${STREAMS} streams)`,
            unit: "KB",
            sessiond: s.streams.perStream / KB,
            details: {
              sessiond: streamDetails(s.streams),
              echoSubscribe: streamDetails(e.streams),
              echoPerStreamKB: e.streams.perStream / KB,
            },
          },
          50,
        ),
        "issue 40: connect-node's own echo stream costs more than the limit; g8/stream holds native gRPC's",
      ),
    ];
  },
};
