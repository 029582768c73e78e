import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { startTestServer } from "../../../test/support/test-server.js";
import { edgeInterceptor } from "../edge.js";
import { InFlight } from "../http/in-flight.js";
import { HealthStatus, registerHealth, ServingStatus } from "./health.js";

const STORE = "sessiond.v1.StoreService";
const SESSION = "sessiond.v1.SessionService";

async function healthClient(status: HealthStatus, shutdownSignal?: AbortSignal) {
  const { baseUrl } = await startTestServer(
    (router) => registerHealth(router, status),
    shutdownSignal,
    [edgeInterceptor(new InFlight(), 4 * 1024 * 1024)], // maps errors to codes, as in the server
  );
  return createClient(Health, createGrpcTransport({ baseUrl }));
}

/** Reads the next message of a stream, failing after `ms` instead of hanging. */
async function next<T>(it: AsyncIterator<T>, ms = 5_000): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no stream message within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([it.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe("HealthStatus", () => {
  it("knows the overall and the sessiond services, SERVING by default", () => {
    const status = new HealthStatus();
    expect([...status.list()]).toEqual([
      ["", ServingStatus.SERVING],
      [STORE, ServingStatus.SERVING],
      [SESSION, ServingStatus.SERVING],
    ]);
    expect(status.get("nope")).toBeUndefined();
  });

  it("notifies subscribers of real changes only, until they unsubscribe", () => {
    const status = new HealthStatus();
    let calls = 0;
    const unsubscribe = status.subscribe(STORE, () => calls++);
    status.set(STORE, ServingStatus.SERVING); // unchanged
    status.set(SESSION, ServingStatus.NOT_SERVING); // another service
    expect(calls).toBe(0);
    status.set(STORE, ServingStatus.NOT_SERVING);
    expect(calls).toBe(1);
    unsubscribe();
    status.set(STORE, ServingStatus.SERVING);
    expect(calls).toBe(1);
  });

  it("shutdown() marks everything NOT_SERVING and ignores later set()", () => {
    const status = new HealthStatus();
    status.set("extra", ServingStatus.SERVING);
    status.shutdown();
    for (const s of status.list().values()) expect(s).toBe(ServingStatus.NOT_SERVING);
    status.set(STORE, ServingStatus.SERVING);
    expect(status.get(STORE)).toBe(ServingStatus.NOT_SERVING);
  });
});

describe("grpc.health.v1.Health over gRPC", () => {
  it("Check answers the overall and per-service status, NOT_FOUND for unknown services", async () => {
    const status = new HealthStatus();
    const client = await healthClient(status);
    expect((await client.check({ service: "" }, { timeoutMs: 5_000 })).status).toBe(
      ServingStatus.SERVING,
    );
    status.set(SESSION, ServingStatus.NOT_SERVING);
    expect((await client.check({ service: SESSION }, { timeoutMs: 5_000 })).status).toBe(
      ServingStatus.NOT_SERVING,
    );
    const err = await client.check({ service: "nope.v1.Nope" }, { timeoutMs: 5_000 }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.NotFound);
  }, 15_000);

  it("List returns every service's status", async () => {
    const status = new HealthStatus();
    status.set(STORE, ServingStatus.NOT_SERVING);
    const client = await healthClient(status);
    const res = await client.list({}, { timeoutMs: 5_000 });
    expect(Object.fromEntries(Object.entries(res.statuses).map(([k, v]) => [k, v.status]))).toEqual(
      {
        "": ServingStatus.SERVING,
        [STORE]: ServingStatus.NOT_SERVING,
        [SESSION]: ServingStatus.SERVING,
      },
    );
  }, 15_000);

  it("Watch sends the current status, then each change, then NOT_SERVING on shutdown", async () => {
    const status = new HealthStatus();
    const client = await healthClient(status);
    const abort = new AbortController();
    const stream = client
      .watch({ service: STORE }, { signal: abort.signal, timeoutMs: 10_000 })
      [Symbol.asyncIterator]();
    try {
      expect((await next(stream)).value?.status).toBe(ServingStatus.SERVING);
      status.set(STORE, ServingStatus.NOT_SERVING);
      expect((await next(stream)).value?.status).toBe(ServingStatus.NOT_SERVING);
      status.set(STORE, ServingStatus.SERVING);
      expect((await next(stream)).value?.status).toBe(ServingStatus.SERVING);
      status.shutdown();
      expect((await next(stream)).value?.status).toBe(ServingStatus.NOT_SERVING);
    } finally {
      abort.abort();
    }
  }, 15_000);

  it("Watch of an unknown service sends SERVICE_UNKNOWN and keeps waiting for it", async () => {
    const status = new HealthStatus();
    const client = await healthClient(status);
    const abort = new AbortController();
    const stream = client
      .watch({ service: "later.v1.Later" }, { signal: abort.signal, timeoutMs: 10_000 })
      [Symbol.asyncIterator]();
    try {
      expect((await next(stream)).value?.status).toBe(ServingStatus.SERVICE_UNKNOWN);
      // The stream stays open and quiet until the service becomes known.
      const pending = next(stream);
      const quiet = await Promise.race([
        pending.then(() => "message"),
        new Promise((r) => setTimeout(() => r("quiet"), 200)),
      ]);
      expect(quiet).toBe("quiet");
      status.set("later.v1.Later", ServingStatus.SERVING);
      expect((await pending).value?.status).toBe(ServingStatus.SERVING);
    } finally {
      abort.abort();
    }
  }, 15_000);

  it("Watch fails (does not end cleanly) when the server shuts down", async () => {
    const status = new HealthStatus();
    const shutdown = new AbortController();
    const client = await healthClient(status, shutdown.signal);
    const stream = client.watch({ service: "" }, { timeoutMs: 10_000 })[Symbol.asyncIterator]();
    expect((await next(stream)).value?.status).toBe(ServingStatus.SERVING);
    shutdown.abort(new ConnectError("server shutting down", Code.Unavailable));
    const err = await next(stream).then(
      (r) => r,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unavailable);
  }, 15_000);
});
