/**
 * One Append from the TypeScript client, made inside a span of the
 * caller's, yields one trace: the caller's span → the server's RPC span →
 * the store's append → the engine's lock wait and write → the fdatasync,
 * over each protocol (native gRPC is served by grpc-js, the others by
 * connect-node). The spans are recorded in memory by the real SDK; the
 * server runs in this process so that the exporter sees both sides, and a
 * client that sends no `traceparent` shows the trace id travels in it.
 * The Python and Go clients' Appends make the same trace from the context
 * their caller's OpenTelemetry API gives them.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { context, SpanKind, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { createSessiondClient, type Protocol } from "../../src/client/index.js";
import { type RunningServer, serverConfig, startServer } from "../../src/server/index.js";
import { JsonlEngine } from "../../src/storage/jsonl/index.js";
import { PostgresEngine } from "../../src/storage/postgres/index.js";
import { SessionStore } from "../../src/store/index.js";
import { GO_ENV, goUserModule, missingGoTools } from "../harness/go.js";
import { createDatabase, pgSkipReason, sharedPostgres } from "../harness/postgres.js";
import { installPythonClient, missingPythonClientTools } from "../harness/python-client.js";
import { recordSpans, type SpanRecorder } from "../support/otel.js";
import { user } from "./support/entries.js";
import { PROTOCOLS, uniqueWorkspace } from "./support/server.js";

const run = promisify(execFile);

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

/**
 * The spans of one Append in the caller's trace: RPC (a child of the
 * caller's span, remote) → store.append → jsonl.lock and jsonl.write →
 * jsonl.fdatasync, and no span of that trace elsewhere.
 */
function expectOneNestedTrace(
  all: readonly ReadableSpan[],
  caller: { traceId: string; spanId: string },
) {
  const spans = all.filter(
    (s) => s.spanContext().traceId === caller.traceId && s.name !== "agent turn",
  );
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
  expect(spans).toHaveLength(5);
}

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
    expectOneNestedTrace(spans, caller);
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

describe("an Append from the Python client (clients/python)", () => {
  const missing = missingPythonClientTools();
  if (missing !== undefined && process.env.CI !== "true") {
    console.warn(`\n*** SKIPPING the Python client's trace test: ${missing} ***\n`);
    it.skip(`SKIPPED, Python toolchain missing: ${missing}`, () => {});
    return;
  }

  it("is one trace with the caller's id, from the context the opentelemetry API injects", async () => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
    const dir = mkdtempSync(join(tmpdir(), "sessiond-pytrace-"));
    try {
      const { python } = await installPythonClient(dir);
      // The opentelemetry API is not installable here (no PyPI): a stand-in
      // module with its documented entry point, opentelemetry.propagate.inject,
      // writing the caller's context as a W3C propagator would.
      const fake = join(dir, "otel", "opentelemetry");
      mkdirSync(fake, { recursive: true });
      writeFileSync(join(fake, "__init__.py"), "");
      writeFileSync(
        join(fake, "propagate.py"),
        'import os\n\ndef inject(carrier, context=None, setter=None):\n    tp = os.environ.get("CALLER_TRACEPARENT")\n    if tp:\n        carrier["traceparent"] = tp\n',
      );
      const caller = { traceId: "5a".repeat(16), spanId: "c3".repeat(8) };
      const script = [
        "import os, sys",
        "from sessiond import SessiondClient, user_message",
        "with SessiondClient(sys.argv[1]) as c:",
        "    sid = c.store.create_session(workspace=sys.argv[2]).session.id",
        "    os.environ['CALLER_TRACEPARENT'] = sys.argv[3]",
        "    c.session.append(workspace=sys.argv[2], session=sid, entries=[user_message('traced')])",
      ].join("\n");
      recorder.reset();
      await run(
        python,
        [
          "-c",
          script,
          server.url,
          uniqueWorkspace("trace-py"),
          `00-${caller.traceId}-${caller.spanId}-01`,
        ],
        { env: { ...process.env, PYTHONPATH: join(dir, "otel") }, timeout: 60_000 },
      );
      expectOneNestedTrace(recorder.spans(), caller);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

const GO_CALLER = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/sessiond/sessiond/clients/go/sessiond"
	pb "github.com/sessiond/sessiond/clients/go/sessiondv1"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func main() {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	tracer := sdktrace.NewTracerProvider().Tracer("agent")
	ctx := context.Background()
	c, err := sessiond.Dial(ctx, os.Args[1])
	if err != nil {
		panic(err)
	}
	defer c.Close()
	s, err := c.Store.CreateSession(ctx, &pb.CreateSessionRequest{Workspace: os.Args[2]})
	if err != nil {
		panic(err)
	}
	ctx, span := tracer.Start(ctx, "agent turn")
	_, err = c.Session.Append(ctx, &pb.AppendRequest{
		Workspace: os.Args[2],
		Session:   s.Session.Id,
		Entries:   []*pb.Entry{sessiond.UserText("traced")},
	})
	span.End()
	if err != nil {
		panic(err)
	}
	fmt.Println(span.SpanContext().TraceID().String(), span.SpanContext().SpanID().String())
}
`;

describe("an Append from the Go client (clients/go)", () => {
  const missing = missingGoTools();
  if (missing !== undefined && process.env.CI !== "true") {
    console.warn(`\n*** SKIPPING the Go client's trace test: ${missing} ***\n`);
    it.skip(`SKIPPED, Go toolchain missing: ${missing}`, () => {});
    return;
  }

  it("is one trace with the id of the caller's OpenTelemetry-Go span", async () => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
    const mod = goUserModule();
    try {
      mod.writeMain("trace-caller", GO_CALLER);
      recorder.reset();
      const { stdout } = await run(
        "go",
        [
          "run",
          "./trace-caller",
          server.url.replace(/^http:\/\//, ""),
          uniqueWorkspace("trace-go"),
        ],
        { cwd: mod.dir, env: GO_ENV, timeout: 170_000 },
      );
      const [traceId = "", spanId = ""] = stdout.trim().split(" ");
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expectOneNestedTrace(recorder.spans(), { traceId, spanId });
    } finally {
      mod.remove();
    }
  }, 180_000);
});

const pgSkip = process.env.CI === "true" ? undefined : pgSkipReason();
if (pgSkip !== undefined) console.warn(`\n*** PostgreSQL trace test SKIPPED: ${pgSkip} ***\n`);

describe.skipIf(pgSkip !== undefined)("an Append on the PostgreSQL engine", () => {
  it("is one trace: RPC → store → the PostgreSQL write", async () => {
    const pg = await sharedPostgres();
    const db = await createDatabase(pg.url, "sessiond_trace");
    const store = new SessionStore(await PostgresEngine.open({ url: db.url }));
    const pgServer = await startServer(
      store,
      serverConfig({ port: 0, log: () => {}, metrics: false }),
    );
    try {
      const c = createSessiondClient({
        baseUrl: pgServer.url,
        protocol: "grpc",
        timeoutMs: 15_000,
      });
      const ws = uniqueWorkspace("trace-pg");
      const id = (await c.store.createSession({ workspace: ws })).session?.id ?? "";
      recorder.reset();
      const caller = await asCaller(() =>
        c.session.append({ workspace: ws, session: id, entries: [user("traced")] }),
      );
      const spans = recorder.spans().filter((s) => s.spanContext().traceId === caller.traceId);
      const rpc = only(spans, "sessiond.v1.SessionService/Append");
      expect(parentOf(rpc)).toBe(caller.spanId);
      const storeSpan = only(spans, "store.append");
      expect(parentOf(storeSpan)).toBe(rpc.spanContext().spanId);
      const write = only(spans, "pg appending");
      expect(parentOf(write)).toBe(storeSpan.spanContext().spanId);
    } finally {
      await pgServer.close();
      await db.drop();
    }
  }, 60_000);
});
