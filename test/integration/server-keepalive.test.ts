/**
 * A client that dies without closing its connection must not hold its
 * watcher slots until TCP gives up (about fifteen minutes): the server
 * PINGs connections with open streams (--keepalive-ms) and closes one whose
 * PING goes unanswered (--keepalive-timeout-ms). Here a proxy freezes a
 * watcher's connection (its client has keepalive off, so only the server
 * can notice) on a server that allows ONE watcher per session: the slot is
 * taken, and comes free once the server has cut the dead connection. The
 * negative control runs the same with --keepalive-ms 0: the slot stays taken.
 */

import { spawnSync } from "node:child_process";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, test } from "vitest";
import type { Protocol } from "../../src/client/index.js";
import { BIN } from "../harness/server.js";
import { ownServers } from "./support/own-servers.js";
import {
  client,
  EXTERNAL,
  PROTOCOLS,
  type SessiondProcess,
  skipExternal,
  uniqueWorkspace,
} from "./support/server.js";
import { eventually, sleep } from "./support/stream.js";

if (EXTERNAL) skipExternal("server keepalive (needs its own --keepalive-ms)");

const ws = uniqueWorkspace("server-keepalive");
const own = ownServers();

function server(keepaliveMs: number): Promise<SessiondProcess> {
  return own.server([
    "--keepalive-ms",
    String(keepaliveMs),
    "--keepalive-timeout-ms",
    "300",
    "--max-watchers-per-session",
    "1",
  ]);
}

/** Opens a watch and reads its first message: resolves to the open iterator, or the error that refused it. */
async function openWatch(
  url: string,
  protocol: Protocol,
  session: string,
  signal: AbortSignal,
): Promise<ConnectError | AsyncIterator<unknown>> {
  const c = client(url, protocol, { keepalive: false });
  const it = c.session
    .watchEntries({ workspace: ws, session }, { signal, timeoutMs: 0 })
    [Symbol.asyncIterator]();
  try {
    await it.next();
    return it;
  } catch (err) {
    return ConnectError.from(err);
  }
}

/** A session whose only watcher slot is held by a watch through a proxy that is then frozen. */
async function frozenWatcher(s: SessiondProcess, protocol: Protocol, signal: AbortSignal) {
  const { session } = await client(s.url).store.createSession({ workspace: ws });
  const id = session?.id ?? "";
  const p = await own.proxy(s.port);
  const held = await openWatch(p.url, protocol, id, signal);
  expect(held).not.toBeInstanceOf(ConnectError);
  // The slot is taken: a second watcher is refused.
  const second = await openWatch(s.url, "grpc", id, signal);
  expect(second).toBeInstanceOf(ConnectError);
  expect((second as ConnectError).code).toBe(Code.ResourceExhausted);
  p.freeze();
  return id;
}

describe("server keepalive", () => {
  for (const protocol of PROTOCOLS) {
    test(`${protocol}: a watcher whose connection died without closing loses its slot within the keepalive`, async () => {
      const s = await server(200);
      const ac = new AbortController();
      const id = await frozenWatcher(s, protocol, ac.signal);
      const t0 = Date.now();
      let last: unknown;
      await eventually(
        async () => {
          last = await openWatch(s.url, "grpc", id, ac.signal);
          return !(last instanceof ConnectError);
        },
        10_000,
        "a new watcher to get the slot back",
      );
      // interval 200 + timeout 300 ms; far below TCP's minutes.
      expect(Date.now() - t0).toBeLessThan(5_000);
      ac.abort();
    }, 30_000);
  }

  test("negative control: with --keepalive-ms 0 the dead watcher keeps its slot", async () => {
    const s = await server(0);
    const ac = new AbortController();
    const id = await frozenWatcher(s, "grpc", ac.signal);
    // Ten times what the tests above need.
    await sleep(5_000);
    const again = await openWatch(s.url, "grpc", id, ac.signal);
    expect(again).toBeInstanceOf(ConnectError);
    expect((again as ConnectError).code).toBe(Code.ResourceExhausted);
    ac.abort();
  }, 30_000);

  test("serve refuses --keepalive-timeout-ms 0 (no PING is answered in no time): exit 2, one line", () => {
    const r = spawnSync(
      process.execPath,
      [
        BIN,
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--storage",
        "memory",
        "--keepalive-timeout-ms",
        "0",
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toContain("--keepalive-timeout-ms must be above 0");
    expect(r.stdout).not.toContain("listening");
  }, 40_000);
});
