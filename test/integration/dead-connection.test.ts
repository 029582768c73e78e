/**
 * A connection that goes silent without closing (the server's host lost
 * power, a NAT or proxy dropped it) sends the client no FIN and no RST.
 * The Node client pings an HTTP/2 connection that has open calls and has
 * heard nothing for a while (`keepalive`, on by default); an unanswered
 * PING closes it with UNAVAILABLE, which watchEntriesResumable and the
 * retry of unary calls take up on a new connection. Here a proxy freezes
 * the client's connection; the server itself stays up and is reached
 * directly for the appends. The last test is the negative control: with
 * keepalive off the same watch hears nothing more.
 */
import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Protocol, watchEntriesResumable } from "../../src/client/index.js";
import { user } from "./support/entries.js";
import { FreezingProxy } from "./support/freezing-proxy.js";
import { client, PROTOCOLS, readAll, serverUnderTest, uniqueWorkspace } from "./support/server.js";
import { eventually, sleep } from "./support/stream.js";

const ws = uniqueWorkspace("dead-conn");
/** Short, so that a dead connection is found in well under a second. */
const KEEPALIVE = { intervalMs: 200, timeoutMs: 300 };

let server: Awaited<ReturnType<typeof serverUnderTest>>;
const proxies: FreezingProxy[] = [];

beforeAll(async () => {
  server = await serverUnderTest();
});
afterAll(async () => {
  for (const p of proxies) await p.close();
  await server?.close();
});

async function proxy(): Promise<FreezingProxy> {
  const p = await FreezingProxy.start(Number(new URL(server.url).port));
  proxies.push(p);
  return p;
}

async function newSession(title: string): Promise<string> {
  const res = await client(server.url).store.createSession({ workspace: ws, title });
  return res.session?.id ?? "";
}

/** Appends `ids` straight to the server (not through the proxy). */
async function appendDirect(session: string, ids: string[]): Promise<void> {
  const c = client(server.url);
  for (const id of ids) {
    await c.session.append({ workspace: ws, session, entries: [user(id, { id })] });
  }
}

/** A resumable watch through `p`, recording entry ids and reconnect errors. */
function watchThrough(p: FreezingProxy, protocol: Protocol, session: string, keepalive: boolean) {
  const c = client(p.url, protocol, { keepalive: keepalive ? KEEPALIVE : false });
  const ac = new AbortController();
  const seen: string[] = [];
  const reconnects: ConnectError[] = [];
  const done = (async () => {
    for await (const m of watchEntriesResumable(c, {
      workspace: ws,
      session,
      signal: ac.signal,
      retryDelayMs: 20,
      onReconnect: (err) => reconnects.push(err),
    })) {
      if (m.event.case === "entry") seen.push(m.event.value.id);
    }
  })();
  const stop = () => {
    ac.abort();
    return done;
  };
  return { seen, reconnects, stop };
}

describe("a connection that dies without closing", () => {
  for (const protocol of PROTOCOLS) {
    test(`${protocol}: a resumable watch finds it dead (PING) and resumes on a new connection, no gap, no duplicate`, async () => {
      const session = await newSession(`watch ${protocol}`);
      const p = await proxy();
      const w = watchThrough(p, protocol, session, true);
      await appendDirect(session, ["a1", "a2"]);
      await eventually(() => w.seen.includes("a2"), 10_000, "a1, a2 through the proxy");
      p.freeze();
      await appendDirect(session, ["b1", "b2", "b3"]);
      await eventually(() => w.seen.includes("b3"), 10_000, "b1..b3 after the freeze");
      await w.stop();
      const log = (await readAll(client(server.url), ws, session)).map((e) => e.id);
      expect(w.seen).toEqual(log);
      expect(log.slice(-5)).toEqual(["a1", "a2", "b1", "b2", "b3"]);
      expect(w.reconnects.length).toBeGreaterThanOrEqual(1);
      expect(w.reconnects[0]?.code).toBe(Code.Unavailable);
      expect(w.reconnects[0]?.message).toContain("PING timed out");
      expect(p.accepted).toBeGreaterThanOrEqual(2);
    }, 30_000);
  }

  test("a unary call on the dead connection fails over: UNAVAILABLE, retried on a new one, stored once", async () => {
    const session = await newSession("unary");
    const p = await proxy();
    const c = client(p.url, "grpc", { keepalive: KEEPALIVE });
    await c.store.getSession({ workspace: ws, session }); // the connection is open
    p.freeze();
    const t0 = Date.now();
    const res = await c.session.append({
      workspace: ws,
      session,
      entries: [user("u", { id: "u1" })],
    });
    const ms = Date.now() - t0;
    expect(res.entries[0]?.id).toBe("u1");
    // Found dead after interval + timeout (500 ms), not after the call's 15 s deadline.
    expect(ms).toBeLessThan(10_000);
    const log = (await readAll(client(server.url), ws, session)).map((e) => e.id);
    expect(log.filter((id) => id === "u1")).toHaveLength(1);
    expect(p.accepted).toBe(2);
  }, 30_000);

  test("negative control: with keepalive off, the same watch hears nothing after the freeze", async () => {
    const session = await newSession("control");
    const p = await proxy();
    const w = watchThrough(p, "grpc", session, false);
    await appendDirect(session, ["a1"]);
    await eventually(() => w.seen.includes("a1"), 10_000, "a1 through the proxy");
    p.freeze();
    await appendDirect(session, ["b1"]);
    // Ten times what the tests above need to find the connection dead.
    await sleep(5_000);
    expect(w.seen).not.toContain("b1");
    expect(w.reconnects).toHaveLength(0);
    expect(p.accepted).toBe(1);
    await w.stop();
  }, 30_000);
});
