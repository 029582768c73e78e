/**
 * Native gRPC is answered by @grpc/grpc-js (src/server/grpc/), Connect and
 * gRPC-Web by connect-node, per stream on the same port and connection.
 *
 * How a test tells the two servers apart: every request log line written for
 * a call grpc-js served carries `"via":"grpc-js"` (CallLog.stream, called only
 * by the grpc-js front for the streams it takes); connect-node's lines have no
 * `via`. If native gRPC were silently served by connect-node (the fallback
 * taken without being asked for, or the routing lost), the gRPC calls below
 * would log no `via` and the tests that count them fail.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, type DescMessage, fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import {
  CreateSessionRequestSchema,
  type CreateSessionResponse,
  CreateSessionResponseSchema,
  GetSessionRequestSchema,
  GetSessionResponseSchema,
  StoreService,
  WatchSessionsRequestSchema,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { envelope } from "../reliability/lib/hostile-wire.js";
import { expectNoLeak } from "./support/errors.js";
import { grpcJsClient, serverStream, unary } from "./support/grpc-js.js";
import { type Exchange, envelopes, exchange as rawExchange } from "./support/raw-http2.js";
import { type LogLine, requestLog } from "./support/request-log.js";
import { type SessiondProcess, startSessiond, uniqueWorkspace } from "./support/server.js";
import { sleep } from "./support/stream.js";

/** Retries an assertion until it holds (log lines are written when a response ends). */
async function eventually(check: () => unknown, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(25);
    }
  }
}

const TOKEN = "grpcjs-front-token-0123456789";
const NARROW = "grpcjs-front-narrow-0123456789";
const MAX_MESSAGE = 64 * 1024;
const MAX_DEADLINE = 60_000;

type GrpcClient = ReturnType<typeof grpcJsClient>;

let dir: string;
let srv: SessiondProcess;
let store: GrpcClient;
const ws = uniqueWorkspace("grpcjs-front");

const auth = (token = TOKEN) => {
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${token}`);
  return md;
};

/** A unary call with metadata and options; rejects with the grpc-js ServiceError. */
function call<T>(
  client: GrpcClient,
  method: string,
  request: object,
  md: grpc.Metadata = auth(),
  options: grpc.CallOptions = { deadline: Date.now() + 15_000 },
): Promise<T> {
  return new Promise((resolve, reject) => {
    client[method](request, md, options, (err: grpc.ServiceError | null, res: T) =>
      err ? reject(err) : resolve(res),
    );
  });
}

async function failure(p: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error("the call succeeded");
}

const linesOf = (server: SessiondProcess, method: string): LogLine[] =>
  requestLog(server).filter((l) => l.method === method);
const via = (l: LogLine) => (l as LogLine & { via?: string }).via;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-grpcjs-front-"));
  const tokens = join(dir, "tokens.json");
  writeFileSync(
    tokens,
    JSON.stringify({
      tokens: [
        { token: TOKEN, workspaces: ["*"] },
        { token: NARROW, workspaces: ["only-this-one"] },
      ],
    }),
  );
  srv = await startSessiond({
    args: [
      "--auth-tokens",
      tokens,
      "--max-message-bytes",
      String(MAX_MESSAGE),
      "--max-deadline-ms",
      String(MAX_DEADLINE),
    ],
  });
  store = grpcJsClient(StoreService, new URL(srv.url).host);
});

afterAll(async () => {
  store?.close();
  await srv?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One request on an existing HTTP/2 session with this file's token, read to its end. */
const exchange = (
  session: http2.ClientHttp2Session,
  path: string,
  contentType: string,
  body: Buffer,
  extra: http2.OutgoingHttpHeaders = {},
) => rawExchange(session, path, contentType, body, { authorization: `Bearer ${TOKEN}`, ...extra });

function decode<T extends Message>(schema: DescMessage, bytes: Uint8Array): T {
  return fromBinary(schema, bytes) as T;
}

describe("one port, one connection, three protocols", () => {
  test("native gRPC, Connect and gRPC-Web share one HTTP/2 connection; only gRPC goes to grpc-js", async () => {
    const session = http2.connect(srv.url);
    try {
      const create1 = toBinary(
        CreateSessionRequestSchema,
        create(CreateSessionRequestSchema, { workspace: ws, title: "over grpc" }),
      );
      // Native gRPC.
      const g = await exchange(
        session,
        "/sessiond.v1.StoreService/CreateSession",
        "application/grpc",
        envelope(create1),
      );
      expect(g.headers[":status"]).toBe(200);
      expect(g.trailers["grpc-status"]).toBe("0");
      const [[gFlags, gPayload]] = envelopes(g.body) as [[number, Buffer]];
      expect(gFlags).toBe(0);
      const created = decode<CreateSessionResponse>(CreateSessionResponseSchema, gPayload);
      const id = created.session?.id ?? "";
      expect(id).not.toBe("");

      // Connect unary (binary), same session: reads what gRPC created.
      const getBody = toBinary(
        GetSessionRequestSchema,
        create(GetSessionRequestSchema, { workspace: ws, session: id }),
      );
      const c = await exchange(
        session,
        "/sessiond.v1.StoreService/GetSession",
        "application/proto",
        Buffer.from(getBody),
      );
      expect(c.headers[":status"]).toBe(200);
      expect(c.headers["content-type"]).toBe("application/proto");
      const got = decode<{ session?: { id: string; title?: string } } & Message>(
        GetSessionResponseSchema,
        c.body,
      );
      expect([got.session?.id, got.session?.title]).toEqual([id, "over grpc"]);

      // gRPC-Web (binary), same session: a message, then the trailer frame.
      const w = await exchange(
        session,
        "/sessiond.v1.StoreService/GetSession",
        "application/grpc-web+proto",
        envelope(getBody),
      );
      expect(w.headers[":status"]).toBe(200);
      const frames = envelopes(w.body);
      expect(frames.map(([f]) => f)).toEqual([0, 0x80]);
      expect(
        decode<{ session?: { id: string } } & Message>(
          GetSessionResponseSchema,
          frames[0]?.[1] as Buffer,
        ).session?.id,
      ).toBe(id);
      expect(String(frames[1]?.[1] ?? "")).toMatch(/grpc-status: ?0/);

      // And native gRPC once more after the others, on the same connection.
      const g2 = await exchange(
        session,
        "/sessiond.v1.StoreService/GetSession",
        "application/grpc+proto",
        envelope(getBody),
      );
      expect(g2.trailers["grpc-status"]).toBe("0");

      // One connection carried all four calls, and it is still open.
      void [g, c, w, g2];
      expect(session.closed || session.destroyed).toBe(false);

      // Which server answered each: the two native gRPC calls were grpc-js's.
      await eventually(() =>
        expect(requestLog(srv).filter((l) => l.session === id)).toHaveLength(3),
      );
      const byId = requestLog(srv).filter((l) => l.session === id || l.method.endsWith("Create"));
      expect(byId.filter((l) => l.session === id).map((l) => via(l) ?? "connect-node")).toEqual([
        "connect-node",
        "connect-node",
        "grpc-js",
      ]);
      const createdLine = linesOf(srv, "sessiond.v1.StoreService/CreateSession").find(
        (l) => l.workspace === ws,
      );
      expect(createdLine && via(createdLine)).toBe("grpc-js");
    } finally {
      session.close();
    }
  });
});

describe("malformed native gRPC requests (raw HTTP/2) answer as on connect-node", () => {
  test("an undecodable message is INVALID_ARGUMENT, a cut-short envelope too; both by grpc-js", async () => {
    const session = http2.connect(srv.url);
    const path = "/sessiond.v1.StoreService/GetSession";
    try {
      const garbage = await exchange(
        session,
        path,
        "application/grpc",
        envelope(Buffer.from([0x08, 0x05])),
      );
      const status = (x: Exchange) => [
        grpc.status[Number(x.trailers["grpc-status"] ?? x.headers["grpc-status"])],
        decodeURIComponent(String(x.trailers["grpc-message"] ?? x.headers["grpc-message"])),
      ];
      const [code, message] = status(garbage);
      expect(code).toBe("INVALID_ARGUMENT");
      expect(message).toMatch(/^parse binary: /);
      const cut = await exchange(
        session,
        path,
        "application/grpc",
        Buffer.from([0, 0, 0, 0, 50, 1, 2]),
      );
      expect(status(cut)).toEqual(["INVALID_ARGUMENT", "protocol error: incomplete envelope"]);
      // No message at all is connect-node's UNIMPLEMENTED too.
      const empty = await exchange(session, path, "application/grpc", Buffer.alloc(0));
      expect(status(empty)[0]).toBe("UNIMPLEMENTED");
    } finally {
      session.close();
    }
    await eventually(() => {
      const lines = linesOf(srv, "sessiond.v1.StoreService/GetSession").filter(
        (l) => l.code !== "ok" && l.code !== "NotFound",
      );
      expect(lines.map((l) => [l.code, via(l)])).toEqual([
        ["InvalidArgument", "grpc-js"],
        ["InvalidArgument", "grpc-js"],
        // No request message: the client gave up before sending (errors.ts sentNoRequest).
        ["Canceled", "grpc-js"],
      ]);
    });
  });
});

describe("through the grpc-js client", () => {
  test("every native gRPC call of a client is served by grpc-js (counted in the request log)", async () => {
    const before = requestLog(srv).filter((l) => via(l) === "grpc-js").length;
    const r = await call<CreateSessionResponse>(store, "createSession", { workspace: ws });
    for (let i = 0; i < 5; i++) {
      await call(store, "getSession", { workspace: ws, session: r.session?.id });
    }
    await eventually(() =>
      expect(requestLog(srv).filter((l) => via(l) === "grpc-js").length - before).toBe(6),
    );
  });

  test("errors keep their code and name the offending id; nothing else leaks", async () => {
    const missing = await failure(
      call(store, "getSession", { workspace: ws, session: "20990101-000000-deadbeef" }),
    );
    expect(grpc.status[missing.code]).toBe("NOT_FOUND");
    expect(missing.details).toBe(
      `session "20990101-000000-deadbeef" not found in workspace "${ws}"`,
    );
    const bad = await failure(call(store, "getSession", { workspace: "no/slashes", session: "x" }));
    expect(grpc.status[bad.code]).toBe("INVALID_ARGUMENT");
    expect(bad.details).toContain("no/slashes");
    expectNoLeak(bad.details);
    const r = await call<CreateSessionResponse>(store, "createSession", { workspace: ws });
    const dup = await failure(
      call(store, "createSession", { workspace: ws, sessionId: r.session?.id, title: "other" }),
    );
    expect(grpc.status[dup.code]).toBe("ALREADY_EXISTS");
    expect(dup.details).toContain(r.session?.id ?? "?");
    expectNoLeak(dup.details);
    // An unknown method stays with connect-node (HTTP 404, which gRPC clients read as UNIMPLEMENTED).
    const unknown = await failure(
      new Promise((resolve, reject) =>
        store.makeUnaryRequest(
          "/sessiond.v1.StoreService/NoSuchMethod",
          (x: Buffer) => x,
          (x: Buffer) => x,
          Buffer.alloc(0),
          auth(),
          (err, res) => (err ? reject(err) : resolve(res)),
        ),
      ),
    );
    expect(grpc.status[unknown.code]).toBe("UNIMPLEMENTED");
    await eventually(() => {
      const line = linesOf(srv, "sessiond.v1.StoreService/NoSuchMethod")[0];
      expect(line && [line.code, via(line)]).toEqual(["HTTP 404", undefined]);
    });
  });

  test("auth: UNAUTHENTICATED without or with a wrong token, PERMISSION_DENIED outside the grant; health and reflection open", async () => {
    const none = await failure(call(store, "listSessions", { workspace: ws }, new grpc.Metadata()));
    expect([grpc.status[none.code], none.details]).toEqual([
      "UNAUTHENTICATED",
      "missing bearer token",
    ]);
    const wrong = await failure(
      call(store, "listSessions", { workspace: ws }, auth("not-a-token-0123456789")),
    );
    expect([grpc.status[wrong.code], wrong.details]).toEqual([
      "UNAUTHENTICATED",
      "invalid bearer token",
    ]);
    const narrow = await failure(call(store, "createSession", { workspace: ws }, auth(NARROW)));
    expect(grpc.status[narrow.code]).toBe("PERMISSION_DENIED");
    expect(narrow.details).toContain(ws);

    const health = grpcJsClient(Health, new URL(srv.url).host);
    const reflection = grpcJsClient(ServerReflection, new URL(srv.url).host);
    try {
      const res = await call<{ status: number }>(
        health,
        "check",
        { service: "" },
        new grpc.Metadata(),
      );
      expect(res.status).toBe(1); // SERVING
      // Reflection is a bidi stream: served by grpc-js too, without a token.
      const bidi = reflection.serverReflectionInfo(new grpc.Metadata());
      const answers: unknown[] = [];
      const done = new Promise<void>((resolve, reject) => {
        bidi.on("data", (d: unknown) => answers.push(d));
        bidi.on("error", reject);
        bidi.on("end", resolve);
      });
      bidi.write({ host: "", messageRequest: { case: "listServices", value: "" } });
      bidi.end();
      await done;
      const listed = answers[0] as {
        messageResponse: { case: string; value: { service: Array<{ name: string }> } };
      };
      expect(listed.messageResponse.case).toBe("listServicesResponse");
      expect(listed.messageResponse.value.service.map((s) => s.name)).toContain(
        "sessiond.v1.StoreService",
      );
      await eventually(() => {
        const line = linesOf(srv, "grpc.reflection.v1.ServerReflection/ServerReflectionInfo")[0];
        expect(line && [line.code, via(line)]).toEqual(["ok", "grpc-js"]);
      });
    } finally {
      health.close();
      reflection.close();
    }
  });

  test("a request over --max-message-bytes is RESOURCE_EXHAUSTED", async () => {
    const err = await failure(
      call(store, "createSession", { workspace: ws, title: "x".repeat(MAX_MESSAGE + 10) }),
    );
    expect(grpc.status[err.code]).toBe("RESOURCE_EXHAUSTED");
    expectNoLeak(err.details);
    await eventually(() => {
      const line = requestLog(srv).find(
        (l) =>
          l.method === "sessiond.v1.StoreService/CreateSession" && l.code === "ResourceExhausted",
      );
      expect(line && via(line)).toBe("grpc-js");
    });
    // The limit counts the message, not the connection: a call under it still works.
    await call(store, "createSession", { workspace: ws, title: "x".repeat(MAX_MESSAGE / 2) });
  });

  test("deadlines: over --max-deadline-ms is INVALID_ARGUMENT (as connect-node says); a watch ends DEADLINE_EXCEEDED", async () => {
    const long = await failure(
      call(store, "listSessions", { workspace: ws }, auth(), {
        deadline: Date.now() + 10 * MAX_DEADLINE,
      }),
    );
    expect(grpc.status[long.code]).toBe("INVALID_ARGUMENT");
    expect(long.details).toMatch(new RegExp(`^timeout \\d+ms must be <= ${MAX_DEADLINE}$`));

    // The grpc-js client enforces its deadline too: it sees DEADLINE_EXCEEDED either way.
    const watch = store.watchSessions({ workspace: ws }, auth(), {
      deadline: Date.now() + 300,
    }) as grpc.ClientReadableStream<unknown>;
    const code = await new Promise<number>((resolve) => {
      watch.on("data", () => {});
      watch.on("error", (e: grpc.ServiceError) => resolve(e.code));
      watch.on("end", () => resolve(-1));
    });
    expect(grpc.status[code]).toBe("DEADLINE_EXCEEDED");

    // A client that leaves the deadline to the server (raw HTTP/2, no timer of its own).
    const session = http2.connect(srv.url);
    try {
      const started = Date.now();
      const x = await exchange(
        session,
        "/sessiond.v1.StoreService/WatchSessions",
        "application/grpc",
        envelope(
          toBinary(
            WatchSessionsRequestSchema,
            create(WatchSessionsRequestSchema, { workspace: ws }),
          ),
        ),
        { "grpc-timeout": "300m" },
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      const status = x.trailers["grpc-status"] ?? x.headers["grpc-status"];
      expect(grpc.status[Number(status)]).toBe("DEADLINE_EXCEEDED");
    } finally {
      session.close();
    }
    await eventually(() => {
      const line = linesOf(srv, "sessiond.v1.StoreService/WatchSessions").find(
        (l) => l.code === "DeadlineExceeded",
      );
      expect(line && via(line)).toBe("grpc-js");
    });
  });
});

describe("shutdown and the fallback switch", () => {
  test("SIGTERM: watch streams (sessions and health) end UNAVAILABLE, served by grpc-js", async () => {
    const own = await startSessiond();
    const host = new URL(own.url).host;
    const c = grpcJsClient(StoreService, host);
    const h = grpcJsClient(Health, host);
    try {
      const watch = serverStream(c, "watchSessions", { workspace: ws });
      const ended = new Promise<grpc.ServiceError | "end">((resolve) => {
        watch.on("data", () => {});
        watch.on("error", resolve);
        watch.on("end", () => resolve("end"));
      });
      const statuses: number[] = [];
      const hw = h.watch({ service: "" }) as grpc.ClientReadableStream<{ status: number }>;
      const healthEnded = new Promise<grpc.ServiceError | "end">((resolve) => {
        hw.on("data", (d: { status: number }) => statuses.push(d.status));
        hw.on("error", resolve);
        hw.on("end", () => resolve("end"));
      });
      await eventually(() => expect(statuses).toEqual([1]));
      // The watch is open on the server before the signal.
      await unary(c, "listSessions", { workspace: ws });
      const exit = own.stop();
      const end = await ended;
      expect(end).not.toBe("end");
      const err = end as grpc.ServiceError;
      expect(grpc.status[err.code]).toBe("UNAVAILABLE");
      expect(err.details).toContain("shutting down");
      const hEnd = await healthEnded;
      // SERVING; NOT_SERVING may or may not be written before the stream is cut (as on connect-node).
      expect(statuses[0]).toBe(1);
      expect(statuses.slice(1).every((s) => s === 2)).toBe(true);
      expect(hEnd !== "end" && grpc.status[hEnd.code]).toBe("UNAVAILABLE");
      expect(await exit).toBe(0);
      const line = linesOf(own, "sessiond.v1.StoreService/WatchSessions")[0];
      expect(line && [line.code, via(line)]).toEqual(["Unavailable", "grpc-js"]);
    } finally {
      c.close();
      h.close();
    }
  });

  test("--grpc-server connect: native gRPC really goes through connect-node", async () => {
    const own = await startSessiond({ args: ["--grpc-server", "connect"] });
    const c = grpcJsClient(StoreService, new URL(own.url).host);
    try {
      const r = await unary<CreateSessionResponse>(c, "createSession", { workspace: ws });
      const missing = await failure(unary(c, "getSession", { workspace: ws, session: "nope-1" }));
      expect(grpc.status[missing.code]).toBe("NOT_FOUND");
      await unary(c, "getSession", { workspace: ws, session: r.session?.id });
      await eventually(() => expect(requestLog(own)).toHaveLength(3));
      expect(requestLog(own).map((l) => via(l))).toEqual([undefined, undefined, undefined]);
    } finally {
      c.close();
      await own.stop();
    }
  });

  test("--grpc-server with anything else is refused", async () => {
    await expect(
      startSessiond({ args: ["--grpc-server", "grpcjs"], timeoutMs: 15_000 }),
    ).rejects.toThrow(/--grpc-server must be grpc-js or connect/);
  });
});
