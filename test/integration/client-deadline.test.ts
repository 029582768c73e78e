/**
 * The client's `timeoutMs` is the default deadline of UNARY calls. It once
 * also ended every watch stream after that time with DEADLINE_EXCEEDED
 * (connect's transport-wide defaultTimeoutMs), which resumable watchers
 * hid by reconnecting and replaying (found by the reliability battery, T9).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createSessiondClient } from "../../src/client/index.js";
import { serverUnderTest, uniqueWorkspace } from "./support/server.js";

const ws = uniqueWorkspace("deadline");
let server: Awaited<ReturnType<typeof serverUnderTest>>;

beforeAll(async () => {
  server = await serverUnderTest({ args: ["--heartbeat-ms", "200"] });
});

afterAll(async () => {
  await server?.close();
});

test("a client timeoutMs does not end a watch stream that lives longer than it", async () => {
  const c = createSessiondClient({ baseUrl: server.url, timeoutMs: 400 });
  // Created without the short deadline: on a loaded machine a unary call can
  // take longer than 400 ms, and this test is about the stream.
  const { session } = await createSessiondClient({ baseUrl: server.url }).store.createSession({
    workspace: ws,
  });
  const id = session?.id as string;
  const abort = new AbortController();
  const started = Date.now();
  let heartbeats = 0;
  let ended: unknown;
  try {
    for await (const ev of c.session.watchEntries(
      { workspace: ws, session: id, afterSeq: 0n },
      { signal: abort.signal },
    )) {
      if (ev.event.case === "heartbeat") heartbeats++;
      if (Date.now() - started > 1500) break;
    }
  } catch (err) {
    ended = err;
  } finally {
    abort.abort();
  }
  expect(ended).toBeUndefined();
  expect(Date.now() - started).toBeGreaterThan(1500);
  expect(heartbeats).toBeGreaterThan(2);
});

test("a client timeoutMs still bounds unary calls, and a per-call deadline wins", async () => {
  const c = createSessiondClient({ baseUrl: server.url, timeoutMs: 1, retry: false });
  const err = await c.store.listSessions({ workspace: ws }).catch((e: unknown) => e);
  expect(ConnectError.from(err).code).toBe(Code.DeadlineExceeded);
  const ok = await c.store.listSessions({ workspace: ws }, { timeoutMs: 10_000 });
  expect(ok.sessions.length).toBe(1);
});

test("a message over the client's maxMessageBytes fails locally with RESOURCE_EXHAUSTED, and the connection stays usable", async () => {
  const c = createSessiondClient({ baseUrl: server.url, maxMessageBytes: 64 * 1024, retry: false });
  const { session } = await c.store.createSession({ workspace: ws });
  const id = session?.id as string;
  const big = "x".repeat(100_000);
  for (let i = 0; i < 150; i++) {
    const err = await c.session
      .append({
        workspace: ws,
        session: id,
        entries: [
          {
            kind: {
              case: "message",
              value: { role: 1, content: [{ part: { case: "text", value: big } }] },
            },
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.ResourceExhausted);
  }
  const got = await c.store.getSession({ workspace: ws, session: id });
  expect(got.session?.headSeq).toBe(1n);
});
