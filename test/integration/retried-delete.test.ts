/**
 * A DeleteSession whose answer is lost after the server deleted the session
 * (a connection reset on the way back) is retried by the client; the retry
 * finds nothing to delete. The caller asked for the session to be gone and
 * it is: the call succeeds instead of answering NOT_FOUND.
 */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, expect, test } from "vitest";
import { client, serverUnderTest, uniqueWorkspace } from "./support/server.js";

const ws = uniqueWorkspace("retried-delete");
let server: Awaited<ReturnType<typeof serverUnderTest>>;

beforeAll(async () => {
  server = await serverUnderTest();
});

afterAll(async () => {
  await server?.close();
});

/** Lets the first DeleteSession reach the server, then loses its answer as a reset connection would. */
function loseFirstDeleteAnswer(): { interceptor: Interceptor; deletesSent: () => number } {
  let sent = 0;
  const interceptor: Interceptor = (next) => async (req) => {
    if (req.method.name !== "DeleteSession") return next(req);
    sent++;
    const res = await next(req);
    if (sent > 1) return res;
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    throw new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, reset);
  };
  return { interceptor, deletesSent: () => sent };
}

test("a DeleteSession retried after its answer was lost succeeds although the first attempt deleted it", async () => {
  const lossy = loseFirstDeleteAnswer();
  const c = client(server.url, "grpc", {
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    interceptors: [lossy.interceptor],
  });
  const { session } = await c.store.createSession({ workspace: ws, title: "to delete" });
  const id = session?.id as string;
  const res = await c.store.deleteSession({ workspace: ws, session: id });
  expect(lossy.deletesSent()).toBe(2);
  expect(res.deletedSessionIds).toEqual([]);
  const after = await c.store.getSession({ workspace: ws, session: id }).catch((e) => e);
  expect(ConnectError.from(after).code).toBe(Code.NotFound);
});

test("a DeleteSession of a session that never existed still answers NOT_FOUND", async () => {
  const c = client(server.url, "grpc", { retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  const err = await c.store
    .deleteSession({ workspace: ws, session: "never-there" })
    .catch((e) => e);
  expect(ConnectError.from(err).code).toBe(Code.NotFound);
});
