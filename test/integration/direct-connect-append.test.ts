/**
 * Append over the Connect protocol is answered by its own path
 * (src/server/http/connect-append.ts) instead of by connect-node. A client
 * must not be able to tell: every case below is sent, byte for byte, to a
 * server with the direct path and to one without it (`directAppend: false`),
 * over HTTP/2 and HTTP/1.1, and both must answer the same status, headers
 * and body and write the same request log line (and the same metrics).
 * That the direct path is the one that answered is connect-append.test.ts's.
 */
import http from "node:http";
import type http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create, fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { AppendResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import {
  appendCounts,
  auth,
  closeSide,
  inPieces,
  lineAfter,
  MAX_MESSAGE,
  NARROW,
  PATH,
  appendRequest as request,
  type Side,
  sameRootBytes,
  sameRoots,
  side,
  TRACEPARENT,
  userEntry as user,
} from "./support/append-sides.js";
import { exchange } from "./support/raw-http2.js";

const PROTO = "application/proto";

let direct: Side;
let generic: Side;

beforeAll(async () => {
  direct = await side("connect-direct", true);
  generic = await side("connect-generic", false);
});

afterAll(async () => {
  for (const s of [direct, generic]) await closeSide(s);
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly body: Buffer;
  readonly line: Record<string, unknown> | undefined;
}

interface Sent {
  readonly headers?: http2.OutgoingHttpHeaders;
  readonly contentType?: string;
  /** Sends the body itself (HTTP/2 only). */
  readonly send?: (stream: http2.ClientHttp2Stream) => void;
  /** Over HTTP/1.1 instead of HTTP/2. */
  readonly http1?: boolean;
}

/** One raw exchange; what came back (date and connection headers aside) and the log line it wrote. */
async function ask(s: Side, body: Buffer, sent: Sent): Promise<Answer> {
  const before = s.lines.length;
  const headers = sent.headers ?? auth();
  const type = sent.contentType ?? PROTO;
  let status: number;
  let got: Record<string, unknown>;
  let bytes: Buffer;
  if (sent.http1) {
    ({ status, headers: got, body: bytes } = await http1(s, type, body, headers));
  } else {
    const x = await exchange(s.session, PATH, type, body, headers, sent.send);
    const { ":status": code, ...rest } = x.headers;
    status = Number(code);
    got = rest;
    bytes = x.body;
  }
  const { date: _d, connection: _c, "keep-alive": _k, ...rest } = got;
  return {
    status,
    headers: sameRoots(s, rest),
    body: sameRootBytes(s, bytes),
    line: await lineAfter(s, before),
  };
}

/** A POST over HTTP/1.1 to the same port. */
function http1(
  s: Side,
  contentType: string,
  body: Buffer,
  headers: http2.OutgoingHttpHeaders,
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${s.server.url}${PATH}`, {
      method: "POST",
      headers: { "content-type": contentType, ...(headers as http.OutgoingHttpHeaders) },
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Sends the same request to both servers (the direct one first) and expects the same answers. */
async function same(what: string, body: Buffer, sent: Sent = {}): Promise<Answer> {
  const a = await ask(direct, body, sent);
  const b = await ask(generic, body, sent);
  expect(a.status, `${what}: status`).toBe(b.status);
  expect(a.headers, `${what}: headers`).toEqual(b.headers);
  expect(a.body.toString("latin1"), `${what}: body`).toBe(b.body.toString("latin1"));
  expect(a.line, `${what}: log line`).toEqual(b.line);
  return a;
}

/** The Connect error code of an answer (its JSON body), or "ok". */
function codeOf(a: Answer): string {
  if (a.status === 200) return "ok";
  return (JSON.parse(a.body.toString()) as { code: string }).code;
}

describe("Connect Append: the direct path answers as connect-node and the handlers do", () => {
  test("appends, a batch, a retry (deduplicated), a traced call, over HTTP/2 and HTTP/1.1", async () => {
    let a = await same(
      "one entry",
      request({ workspace: "ws", session: "s1", entries: [user("m1")] }),
    );
    expect(a.status).toBe(200);
    const res = fromBinary(AppendResponseSchema, a.body);
    expect(res.entries.map((e) => [e.id, e.seq])).toEqual([["m1", 2n]]);
    expect(a.line).toMatchObject({ method: "sessiond.v1.SessionService/Append", code: "ok" });

    const batch = [user("m2", "two", "m1"), user("m3", "three", "m2"), user("m4", "four")];
    a = await same(
      "a batch",
      request({ workspace: "ws", session: "s1", entries: batch, expectedSeq: 2n }),
    );
    expect(fromBinary(AppendResponseSchema, a.body).headSeq).toBe(5n);
    a = await same("a retry", request({ workspace: "ws", session: "s1", entries: batch }));
    expect(fromBinary(AppendResponseSchema, a.body).deduplicated).toBe(true);

    a = await same(
      "traced",
      request({ workspace: "ws", session: "s1", entries: [user("m5", "t", "m4")] }),
      { headers: { ...auth(), traceparent: TRACEPARENT } },
    );
    expect(a.line?.trace).toBe("0af7651916cd43dd8448eb211c80319c");

    a = await same(
      "over HTTP/1.1",
      request({ workspace: "ws", session: "s1", entries: [user("m6", "h1", "m5")] }),
      { http1: true },
    );
    expect(fromBinary(AppendResponseSchema, a.body).headSeq).toBe(7n);
    a = await same(
      "a refusal over HTTP/1.1",
      request({ workspace: "ws", session: "nope", entries: [user("m7")] }),
      { http1: true },
    );
    expect(codeOf(a)).toBe("not_found");
  });

  test("the store's and the handler's refusals: statuses, codes and messages", async () => {
    const cases: [string, Buffer, string][] = [
      [
        "a parent that is not there",
        request({ workspace: "ws", session: "s2", entries: [user("x1", "a", "nope")] }),
        "invalid_argument",
      ],
      [
        "expected seq moved",
        request({ workspace: "ws", session: "s2", entries: [user("x2")], expectedSeq: 9n }),
        "aborted",
      ],
      [
        "expected leaf moved",
        request({ workspace: "ws", session: "s2", entries: [user("x3")], expectedLeafId: "q" }),
        "aborted",
      ],
      [
        "an unknown session",
        request({ workspace: "ws", session: "nope", entries: [user("y")] }),
        "not_found",
      ],
      [
        "a bad workspace",
        request({ workspace: "Bad Name!", session: "s2", entries: [user("y")] }),
        "invalid_argument",
      ],
      ["no entries", request({ workspace: "ws", session: "s2", entries: [] }), "invalid_argument"],
      ["an empty request", Buffer.alloc(0), "invalid_argument"],
      [
        "a bad entry id",
        request({ workspace: "ws", session: "s2", entries: [user("bad id")] }),
        "invalid_argument",
      ],
      [
        "no kind",
        request({ workspace: "ws", session: "s2", entries: [create(EntrySchema, { id: "k" })] }),
        "invalid_argument",
      ],
    ];
    for (const [what, body, code] of cases) {
      expect(codeOf(await same(what, body)), what).toBe(code);
    }
  });

  test("auth: no token, a wrong one, one without the workspace", async () => {
    const body = request({ workspace: "ws", session: "s2", entries: [user("z1")] });
    expect(codeOf(await same("no token", body, { headers: {} }))).toBe("unauthenticated");
    const wrong = await same("a wrong token", body, { headers: auth("wrong-token-0123456789") });
    expect(codeOf(wrong)).toBe("unauthenticated");
    expect(codeOf(await same("outside the grant", body, { headers: auth(NARROW) }))).toBe(
      "not_found",
    );
  });

  test("what connect-node refuses before any handler: undecodable, too large, a bad deadline", async () => {
    const ok = request({ workspace: "ws", session: "s2", entries: [user("w1")] });
    const cases: [string, Buffer, Sent, string][] = [
      ["undecodable", Buffer.from([0x0a, 0x7f, 0x61]), {}, "invalid_argument"],
      ["over --max-message-bytes", Buffer.alloc(MAX_MESSAGE + 1), {}, "resource_exhausted"],
      [
        "a deadline that is no number",
        ok,
        { headers: { ...auth(), "connect-timeout-ms": "soon" } },
        "invalid_argument",
      ],
    ];
    for (const [what, body, sent, code] of cases) {
      expect(codeOf(await same(what, body, sent)), what).toBe(code);
    }
    // A deadline in time changes nothing.
    const inTime = await same("in time", ok, {
      headers: { ...auth(), "connect-timeout-ms": "10000" },
    });
    expect(codeOf(inTime)).toBe("ok");
    // One of a millisecond, about what the append's flush takes: connect-node
    // does not cut a unary call its handler does not give up, nor does the path.
    const short = await same(
      "a deadline shorter than the append",
      request({ workspace: "ws", session: "s2", entries: [user("w2", "x".repeat(4000), "w1")] }),
      { headers: { ...auth(), "connect-timeout-ms": "1" } },
    );
    expect(codeOf(short)).toBe("ok");
  });

  test("left to connect-node, the same on both servers: JSON, a compressed request", async () => {
    const json = JSON.stringify({
      workspace: "ws",
      session: "s2",
      entries: [
        {
          id: "j1",
          parentId: "w1",
          timestamp: "2023-11-14T22:13:20.000000005Z",
          message: { role: "ROLE_USER", content: [{ text: "j" }] },
        },
      ],
    });
    expect(codeOf(await same("JSON", Buffer.from(json), { contentType: "application/json" }))).toBe(
      "ok",
    );
    const gz = gzipSync(
      request({ workspace: "ws", session: "s2", entries: [user("g1", "g", "j1")] }),
    );
    const a = await same("gzip", gz, { headers: { ...auth(), "content-encoding": "gzip" } });
    // The server takes no compressed requests unless --compression: connect-node says so.
    expect(codeOf(a)).toBe("unimplemented");
  });

  test("a request sent in many small pieces", async () => {
    const body = request({
      workspace: "ws",
      session: "s2",
      entries: [user("p1", "x".repeat(3000), "j1")],
    });
    const a = await same("in pieces", body, { send: inPieces(body) });
    expect(codeOf(a)).toBe("ok");
  });

  test("the same metrics: requests by method and code", async () => {
    expect(await appendCounts(direct)).toEqual(await appendCounts(generic));
    expect((await appendCounts(direct)).length).toBeGreaterThan(3);
  });
});
