import { getEventListeners } from "node:events";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { retryInterceptor } from "./retry-interceptor.js";

/**
 * Runs the interceptor around a `next` that fails with `errors` in turn,
 * then succeeds; the request is a DeleteSession unless `method` says otherwise.
 */
async function run(
  errors: unknown[],
  method: { parent: unknown } = StoreService.method.deleteSession,
): Promise<{ calls: number; result?: unknown; error?: ConnectError }> {
  let calls = 0;
  const next = async () => {
    const err = errors[calls++];
    if (err !== undefined) throw err;
    return { stream: false, message: "ok" };
  };
  const handler = retryInterceptor({ baseDelayMs: 1, maxDelayMs: 2 })(next as never);
  const signal = new AbortController().signal;
  const req = {
    stream: false,
    signal,
    method,
    service: method.parent,
    contextValues: createContextValues(),
  };
  try {
    const res = (await handler(req as never)) as unknown as { message: unknown };
    return { calls, result: res.message };
  } catch (err) {
    return { calls, error: ConnectError.from(err) };
  }
}

/** A call whose connection was reset after it was sent: the server may have acted on it. */
function connectionReset(): ConnectError {
  const cause = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
  return new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, cause);
}

/** A call that never reached a server. */
function connectionRefused(): ConnectError {
  const cause = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  return new ConnectError("connect ECONNREFUSED", Code.Unavailable, undefined, undefined, cause);
}

const notFound = () => new ConnectError('session "s" not found', Code.NotFound);

describe("retryInterceptor", () => {
  it("retries UNAVAILABLE and a stream the server refused (HTTP/2 REFUSED_STREAM)", async () => {
    const refused = new ConnectError(
      "Stream closed with error code NGHTTP2_REFUSED_STREAM",
      Code.Internal,
    );
    const r = await run([new ConnectError("going away", Code.Unavailable), refused]);
    expect(r).toEqual({ calls: 3, result: "ok" });
  });

  it("does not retry a concurrency conflict (ABORTED from the server) or a plain INTERNAL", async () => {
    const conflict = await run([new ConnectError("expected leaf x", Code.Aborted)]);
    expect(conflict.calls).toBe(1);
    expect(conflict.error?.code).toBe(Code.Aborted);
    const internal = await run([new ConnectError("internal error", Code.Internal)]);
    expect(internal.calls).toBe(1);
  });

  it("a DeleteSession retried after a reset connection succeeds when the retry finds the session gone", async () => {
    const r = await run([connectionReset(), notFound()]);
    expect(r.calls).toBe(2);
    expect(r.error).toBeUndefined();
    expect(r.result).toMatchObject({
      $typeName: "sessiond.v1.DeleteSessionResponse",
      deletedSessionIds: [],
    });
  });

  it("a DeleteSession retried after a server-side UNAVAILABLE succeeds when the retry finds the session gone", async () => {
    const r = await run([
      new ConnectError("postgres: commit failed", Code.Unavailable),
      notFound(),
    ]);
    expect(r.error).toBeUndefined();
    expect(r.result).toMatchObject({ $typeName: "sessiond.v1.DeleteSessionResponse" });
  });

  it("a DeleteSession that never reached a server keeps the retry's NOT_FOUND", async () => {
    const r = await run([connectionRefused(), notFound()]);
    expect(r.calls).toBe(2);
    expect(r.error?.code).toBe(Code.NotFound);
  });

  it("a DeleteSession answered NOT_FOUND on its first attempt stays NOT_FOUND", async () => {
    const r = await run([notFound()]);
    expect(r.calls).toBe(1);
    expect(r.error?.code).toBe(Code.NotFound);
  });

  it("NOT_FOUND after a reset connection stays NOT_FOUND for any call but DeleteSession", async () => {
    const r = await run([connectionReset(), notFound()], SessionService.method.append);
    expect(r.error?.code).toBe(Code.NotFound);
  });

  it("gives up after maxAttempts", async () => {
    const down = new ConnectError("down", Code.Unavailable);
    const r = await run([down, down, down, down, down, down]);
    expect(r.calls).toBe(5);
    expect(r.error?.code).toBe(Code.Unavailable);
  });

  it("leaves no abort listener on the call's signal after its waits (one per retry would pile up)", async () => {
    const down = new ConnectError("down", Code.Unavailable);
    const signal = new AbortController().signal;
    let calls = 0;
    const next = async () => {
      if (calls++ < 11) throw down;
      return { stream: false, message: "ok" };
    };
    const handler = retryInterceptor({ maxAttempts: 12, baseDelayMs: 1, maxDelayMs: 1 })(
      next as never,
    );
    const method = StoreService.method.getSession;
    const contextValues = createContextValues();
    await handler({
      stream: false,
      signal,
      method,
      service: method.parent,
      contextValues,
    } as never);
    expect(calls).toBe(12);
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });
});
