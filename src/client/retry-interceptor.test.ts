import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { retryInterceptor } from "./retry-interceptor.js";

/** Runs the interceptor around a `next` that fails with `errors` in turn, then succeeds. */
async function run(
  errors: unknown[],
): Promise<{ calls: number; result?: string; error?: ConnectError }> {
  let calls = 0;
  const next = async () => {
    const err = errors[calls++];
    if (err !== undefined) throw err;
    return { stream: false, message: "ok" };
  };
  const handler = retryInterceptor({ baseDelayMs: 1, maxDelayMs: 2 })(next as never);
  const req = { stream: false, signal: new AbortController().signal };
  try {
    const res = (await handler(req as never)) as unknown as { message: string };
    return { calls, result: res.message };
  } catch (err) {
    return { calls, error: ConnectError.from(err) };
  }
}

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

  it("gives up after maxAttempts", async () => {
    const down = new ConnectError("down", Code.Unavailable);
    const r = await run([down, down, down, down, down, down]);
    expect(r.calls).toBe(5);
    expect(r.error?.code).toBe(Code.Unavailable);
  });
});
