/**
 * --max-connection-age-ms: a connection that old is sent GOAWAY, so the
 * client's next calls open a new connection (through a load balancer, maybe
 * to another replica), and what is still open after the grace is cut; a
 * resumable watch then resumes from its last seq. Over a few ages every
 * append succeeds, every connection is replaced, and the watch sees the
 * log exactly once, in order. The control, without a max age, keeps one
 * connection per client and never reconnects the watch.
 */
import type { ConnectError } from "@connectrpc/connect";
import { describe, expect, test } from "vitest";
import { type Protocol, watchEntriesResumable } from "../../src/client/index.js";
import { user } from "./support/entries.js";
import { ownServers } from "./support/own-servers.js";
import {
  client,
  EXTERNAL,
  PROTOCOLS,
  readAll,
  skipExternal,
  uniqueWorkspace,
} from "./support/server.js";
import { eventually, sleep } from "./support/stream.js";

if (EXTERNAL) skipExternal("max connection age (needs its own --max-connection-age-ms)");

const ws = uniqueWorkspace("conn-age");
const own = ownServers();

/** Appends for `ms` and watches through a proxy (it counts connections); returns what happened. */
async function run(maxAgeMs: number, protocol: Protocol, ms: number) {
  const s = await own.server([
    "--max-connection-age-ms",
    String(maxAgeMs),
    "--max-connection-age-grace-ms",
    "200",
  ]);
  const p = await own.proxy(s.port);
  const writer = client(p.url, protocol);
  const { session } = await writer.store.createSession({ workspace: ws });
  const id = session?.id ?? "";
  const ac = new AbortController();
  const seen: string[] = [];
  const reconnects: ConnectError[] = [];
  const watching = (async () => {
    for await (const m of watchEntriesResumable(client(p.url, protocol), {
      workspace: ws,
      session: id,
      signal: ac.signal,
      retryDelayMs: 20,
      onReconnect: (err) => reconnects.push(err),
    })) {
      if (m.event.case === "entry") seen.push(m.event.value.id);
    }
  })();
  const acked: string[] = [];
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end; i++) {
    const r = await writer.session.append({
      workspace: ws,
      session: id,
      entries: [user(`m${i}`, { id: `m${i}` })],
    });
    acked.push(r.entries[0]?.id ?? "");
    await sleep(10);
  }
  const log = (await readAll(client(s.url), ws, id)).map((e) => e.id);
  await eventually(() => seen.length >= log.length, 10_000, "the watch to reach the head");
  ac.abort();
  await watching;
  return { log, acked, seen, reconnects, connections: p.accepted };
}

describe("max connection age", () => {
  for (const protocol of PROTOCOLS) {
    test(`${protocol}: connections are replaced every age; every append succeeds, the watch sees the log once, in order`, async () => {
      const r = await run(300, protocol, 1500);
      expect(r.log.slice(1)).toEqual(r.acked);
      expect(r.seen).toEqual(r.log);
      expect(r.reconnects.length).toBeGreaterThanOrEqual(1);
      // Two clients over 1.5 s at an age of 270-300 ms: each replaced several times.
      expect(r.connections).toBeGreaterThanOrEqual(6);
    }, 30_000);
  }

  test("control: without a max age, one connection per client and no reconnect", async () => {
    const r = await run(0, "grpc", 1500);
    expect(r.seen).toEqual(r.log);
    expect(r.reconnects).toHaveLength(0);
    expect(r.connections).toBe(2);
  }, 30_000);
});
