/**
 * One Append from the TypeScript client, made inside a span of the
 * caller's, yields one trace: the caller's span → the server's RPC span →
 * the store's append → the engine's lock wait and write → the fdatasync,
 * over each protocol (native gRPC is served by grpc-js, the others by
 * connect-node). The spans are recorded in memory by the real SDK; the
 * server runs in this process so that the exporter sees both sides, and a
 * client that sends no `traceparent` shows the trace id travels in it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { context, SpanKind, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { createSessiondClient, type Protocol } from "../../src/client/index.js";
import { type RunningServer, serverConfig, startServer } from "../../src/server/index.js";
import { JsonlEngine } from "../../src/storage/jsonl/index.js";
import { SessionStore } from "../../src/store/index.js";
import { recordSpans, type SpanRecorder } from "../support/otel.js";
import { user } from "./support/entries.js";
import { PROTOCOLS, uniqueWorkspace } from "./support/server.js";

let recorder: SpanRecorder;
let server: RunningServer;
let dataDir: string;

beforeAll(async () => {
  recorder = recordSpans();
  dataDir = mkdtempSync(join(tmpdir(), "sessiond-trace-"));
  const store = new SessionStore(new JsonlEngine({ dataDir }));
  server = await startServer(store, serverConfig({ port: 0, log: () => {}, metrics: false }));
});

afterAll(async () => {
  await server?.close();
  await recorder?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs `call` inside a fresh span of the caller's; returns that span's ids. */
async function asCaller(
  call: () => Promise<unknown>,
): Promise<{ traceId: string; spanId: string }> {
  const caller = trace.getTracer("test-caller").startSpan("agent turn");
  try {
    await context.with(trace.setSpan(context.active(), caller), call);
  } finally {
    caller.end();
  }
  return caller.spanContext();
}

function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0] as ReadableSpan;
}

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe.each(PROTOCOLS)("an Append from the TS client over %s", (protocol: Protocol) => {
  it("is one trace with the caller's id: RPC → store → lock wait and write → fdatasync", async () => {
    const c = createSessiondClient({ baseUrl: server.url, protocol, timeoutMs: 15_000 });
    const ws = uniqueWorkspace(`trace-${protocol}`);
    const id = (await c.store.createSession({ workspace: ws })).session?.id ?? "";
    recorder.reset();
    const caller = await asCaller(() =>
      c.session.append({ workspace: ws, session: id, entries: [user("traced")] }),
    );
    const spans = recorder.spans().filter((s) => s.name !== "agent turn");
    expect(spans.map((s) => s.spanContext().traceId)).toEqual(spans.map(() => caller.traceId));

    const rpc = only(spans, "sessiond.v1.SessionService/Append");
    expect(rpc.kind).toBe(SpanKind.SERVER);
    expect(parentOf(rpc)).toBe(caller.spanId);
    expect(rpc.parentSpanContext?.isRemote).toBe(true);
    const store = only(spans, "store.append");
    expect(parentOf(store)).toBe(rpc.spanContext().spanId);
    const lock = only(spans, "jsonl.lock");
    expect(parentOf(lock)).toBe(store.spanContext().spanId);
    const write = only(spans, "jsonl.write");
    expect(parentOf(write)).toBe(store.spanContext().spanId);
    const fsync = only(spans, "jsonl.fdatasync");
    expect(parentOf(fsync)).toBe(write.spanContext().spanId);
  });
});

describe("a client that sends no traceparent", () => {
  it("gets a trace of the server's own, not the caller's", async () => {
    const bare = createClient(
      SessionService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "2" }),
    );
    const c = createSessiondClient({ baseUrl: server.url, protocol: "connect" });
    const ws = uniqueWorkspace("trace-bare");
    const id = (await c.store.createSession({ workspace: ws })).session?.id ?? "";
    recorder.reset();
    const caller = await asCaller(() =>
      bare.append({ workspace: ws, session: id, entries: [{ ...user("untraced"), id: "e1" }] }),
    );
    const rpc = only(recorder.spans(), "sessiond.v1.SessionService/Append");
    expect(rpc.spanContext().traceId).not.toBe(caller.traceId);
    expect(rpc.parentSpanContext).toBeUndefined();
  });
});
