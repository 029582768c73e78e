/**
 * T12 reconnect (issue 37): gRPC clients that are calling while sessiond is
 * down are connected again soon after it listens, on both native gRPC
 * paths (--grpc-server grpc-js and connect).
 *
 * Long-running clients (lib/reconnect-probes.ts) call Health/Check every
 * 100 ms with a 5 s deadline: grpcio with a short reconnect backoff
 * (100-500 ms, min connect timeout 100 ms) and with its default one, grpcio
 * on grpc-core's iomgr poller (the client of grpcio 1.51) with the short
 * backoff, and grpc-go with the short backoff. They start before the first
 * server listens; then the server is stopped (SIGTERM or SIGKILL), stays
 * down 1.0-2.5 s and starts again on the same port, alternating the
 * --grpc-server path. For every start, each client's first successful call
 * must come within its bound of the server listening: 2 s for the short
 * backoffs; 6 s for grpcio's default backoff (its next attempt, 1 s x 1.6^n
 * +-20 %, after a few seconds down); 11 s for the iomgr client: it handles
 * its connection only when its 5 s backup poller runs, and connects then
 * only if the server's SETTINGS are already waiting, as a grpc-core server
 * sends them at accept (the server runs with --h2c-speak-first-ms 20, so
 * the port sends them after 20 ms of silence; a poll in a connection's
 * first 20 ms, a few % of them, waits for the next poll; without the flag,
 * the default, the port waits for the client as the control below does).
 * A client late or not connected is a violation.
 *
 * Negative control `lazyPort`: a relay in front of the server that opens
 * the upstream connection only on the client's first bytes, so SETTINGS
 * come in reply to the preface (the plaintext port before it spoke first):
 * the iomgr client must then miss its bound.
 */
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { SETTINGS_FIRST_MS } from "../../src/server/http/plaintext-port.js";
import type { SessiondProcess } from "../harness/server.js";
import { isMain, main, type ReliabilityTest, type RunOptions } from "./lib/battery.js";
import { startWithRetry } from "./lib/kill-server.js";
import { type LazyRelay, lazyRelay } from "./lib/lazy-relay.js";
import { Rng } from "./lib/random.js";
import {
  buildGoProbe,
  goProbe,
  grpcioProbe,
  missingProbeTools,
  type Probe,
  type ProbeKind,
} from "./lib/reconnect-probes.js";

const SHORT_MS = 2_000;
const SLOW_MS = 6_000;
const IOMGR_MS = 11_000;
const KINDS = {
  grpcioShort: { name: "grpcio short backoff", boundMs: SHORT_MS },
  grpcioDefault: { name: "grpcio default backoff", boundMs: SLOW_MS },
  iomgrShort: { name: "grpcio iomgr short backoff", boundMs: IOMGR_MS },
  goShort: { name: "grpc-go short backoff", boundMs: SHORT_MS },
} satisfies Record<string, ProbeKind>;
const PATHS = ["grpc-js", "connect"] as const;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A server that clients reach on `port`: sessiond itself, or behind the control's relay. */
interface Up {
  server: SessiondProcess;
  relay: LazyRelay | undefined;
}

async function run(o: RunOptions) {
  const missing = missingProbeTools();
  if (missing !== undefined) {
    return { figures: "no clients", violations: 1, details: [`cannot run: ${missing}`] };
  }
  const rng = new Rng(o.seed);
  const starts = o.quick ? 2 : 8;
  const port = await freePort();
  const inner = o.control === "lazyPort" ? await freePort() : port;
  const go = buildGoProbe();
  const log = (line: string) => o.log(line);
  const probes: Probe[] = [
    grpcioProbe(KINDS.grpcioShort, port, "short", false, log),
    grpcioProbe(KINDS.grpcioDefault, port, "default", false, log),
    grpcioProbe(KINDS.iomgrShort, port, "short", true, log),
    goProbe(KINDS.goShort, go.binary, port, log),
  ];
  const counter = { failedStarts: 0 };
  const details: string[] = [];
  const latencies = new Map<string, number[]>();
  let up: Up | undefined;
  try {
    for (let i = 0; i < starts && Date.now() < o.deadline; i++) {
      const downMs = rng.int(1_000, 2_500);
      await sleep(downMs);
      const path = PATHS[i % PATHS.length] as (typeof PATHS)[number];
      const server = await startWithRetry(
        {
          port: inner,
          // Speaking first is opt-in (plaintext-port.ts): T12 is the deployment that needs it.
          args: [
            "--storage",
            "memory",
            "--grpc-server",
            path,
            "--log-level",
            "error",
            "--h2c-speak-first-ms",
            String(SETTINGS_FIRST_MS),
          ],
        },
        counter,
        log,
      );
      const relay = inner === port ? undefined : await lazyRelay(port, inner);
      up = { server, relay };
      const listening = Date.now();
      const watchUntil = listening + IOMGR_MS + 500;
      while (Date.now() < watchUntil && !probes.every((p) => p.ups.some((t) => t >= listening))) {
        await sleep(100);
      }
      for (const p of probes) {
        const back = p.ups.find((t) => t >= listening - 200);
        const ms = back === undefined ? undefined : back - listening;
        const list = latencies.get(p.kind.name) ?? [];
        if (ms !== undefined) list.push(ms);
        latencies.set(p.kind.name, list);
        if (ms === undefined || ms > p.kind.boundMs) {
          details.push(
            `start ${i + 1} (${path}, down ${downMs} ms): ${p.kind.name} ${ms === undefined ? `not connected ${watchUntil - listening} ms after listening` : `connected ${ms} ms after listening`} (bound ${p.kind.boundMs} ms)`,
          );
        }
      }
      o.log(
        `start ${i + 1} (${path}): ${probes.map((p) => `${p.kind.name} ${latencies.get(p.kind.name)?.at(-1) ?? "-"} ms`).join(", ")}`,
      );
      await up.relay?.close();
      if (rng.bool()) await server.kill9();
      else await server.stop();
      up = undefined;
      // Every client sees the server gone before the next start.
      await sleep(300);
    }
  } finally {
    for (const p of probes) p.stop();
    await up?.relay?.close();
    await up?.server.kill9();
    go.remove();
  }
  const worst = [...latencies].map(
    ([name, ms]) => `${name} worst ${ms.length === 0 ? "-" : Math.max(...ms)} ms`,
  );
  return {
    figures: `${starts} starts, ${probes.length} clients, ${worst.join(", ")}, ${counter.failedStarts} failed starts`,
    violations: details.length,
    details,
  };
}

const test: ReliabilityTest = {
  id: "T12",
  name: "reconnect",
  controls: ["lazyPort"],
  budgetMs: { full: 240_000, quick: 120_000 },
  run,
};
export default test;

if (isMain(import.meta)) await main(test);
