/**
 * The native gRPC front answers Append on its stream by itself
 * (src/server/grpc/direct-append.ts) instead of through grpc-js's call
 * objects and the interceptor chain. A client must not be able to tell:
 * every case below is sent, byte for byte, to a server with the direct path
 * and to one without it (`directAppend: false`, Append through grpc-js like
 * every other method), and both must answer the same headers, trailers and
 * body and write the same request log line (and the same metrics).
 */
import type http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create, fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { AppendResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import { envelope } from "../reliability/lib/hostile-wire.js";
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

let direct: Side;
let generic: Side;

beforeAll(async () => {
  direct = await side("direct", true);
  generic = await side("generic", false);
});

afterAll(async () => {
  for (const s of [direct, generic]) await closeSide(s);
});

/** The envelope of a request message, uncompressed. */
const framed = (message: Buffer, flag = 0) => envelope(message, flag);

interface Answer {
  readonly headers: Record<string, unknown>;
  readonly trailers: Record<string, unknown>;
  readonly body: Buffer;
  readonly line: Record<string, unknown> | undefined;
}

/** One raw exchange; what came back (the date header aside) and the log line it wrote. */
async function ask(
  s: Side,
  body: Buffer,
  headers: http2.OutgoingHttpHeaders,
  send?: (stream: http2.ClientHttp2Stream) => void,
): Promise<Answer> {
  const before = s.lines.length;
  const x = await exchange(s.session, PATH, "application/grpc", body, headers, send);
  const { date: _, ...rest } = x.headers;
  const logged = await lineAfter(s, before);
  return {
    headers: sameRoots(s, rest),
    trailers: sameRoots(s, { ...x.trailers }),
    body: sameRootBytes(s, x.body),
    line: logged,
  };
}

/** Sends the same request to both servers (the direct one first) and expects the same answers. */
async function same(
  what: string,
  body: Buffer,
  headers: http2.OutgoingHttpHeaders = auth(),
  send?: (stream: http2.ClientHttp2Stream) => void,
): Promise<Answer> {
  const a = await ask(direct, body, headers, send);
  const b = await ask(generic, body, headers, send);
  expect(a.headers, `${what}: headers`).toEqual(b.headers);
  expect(a.trailers, `${what}: trailers`).toEqual(b.trailers);
  expect(a.body.equals(b.body), `${what}: body`).toBe(true);
  expect(a.line, `${what}: log line`).toEqual(b.line);
  return a;
}

const status = (a: Answer) => ({
  code: Number(a.trailers["grpc-status"] ?? a.headers["grpc-status"]),
  message: decodeURI(String(a.trailers["grpc-message"] ?? a.headers["grpc-message"] ?? "")),
});

describe("native gRPC Append: the direct path answers as grpc-js and the handlers do", () => {
  test("appends, a batch, a retry (deduplicated), a traced call", async () => {
    let a = await same(
      "one entry",
      framed(request({ workspace: "ws", session: "s1", entries: [user("m1")] })),
    );
    expect(status(a)).toEqual({ code: 0, message: "OK" });
    const res = fromBinary(AppendResponseSchema, a.body.subarray(5));
    expect(res.entries.map((e) => [e.id, e.seq])).toEqual([["m1", 2n]]);
    expect(a.line).toMatchObject({ method: "sessiond.v1.SessionService/Append", code: "ok" });
    expect(a.line?.via).toBe("grpc-js");

    const batch = [user("m2", "two", "m1"), user("m3", "three", "m2"), user("m4", "four")];
    a = await same(
      "a batch",
      framed(request({ workspace: "ws", session: "s1", entries: batch, expectedSeq: 2n })),
    );
    expect(fromBinary(AppendResponseSchema, a.body.subarray(5)).headSeq).toBe(5n);
    a = await same("a retry", framed(request({ workspace: "ws", session: "s1", entries: batch })));
    expect(fromBinary(AppendResponseSchema, a.body.subarray(5)).deduplicated).toBe(true);

    a = await same(
      "traced",
      framed(request({ workspace: "ws", session: "s1", entries: [user("m5", "t", "m4")] })),
      { ...auth(), traceparent: TRACEPARENT },
    );
    expect(a.line?.trace).toBe("0af7651916cd43dd8448eb211c80319c");
  });

  test("the store's and the handler's refusals: codes and messages", async () => {
    const cases: [string, Buffer, number][] = [
      [
        "a parent that is not there",
        framed(request({ workspace: "ws", session: "s2", entries: [user("x1", "a", "nope")] })),
        3,
      ],
      [
        "expected seq moved",
        framed(request({ workspace: "ws", session: "s2", entries: [user("x2")], expectedSeq: 9n })),
        10,
      ],
      [
        "expected leaf moved",
        framed(
          request({ workspace: "ws", session: "s2", entries: [user("x3")], expectedLeafId: "q" }),
        ),
        10,
      ],
      [
        "an unknown session",
        framed(request({ workspace: "ws", session: "nope", entries: [user("y")] })),
        5,
      ],
      [
        "a bad workspace",
        framed(request({ workspace: "Bad Name!", session: "s2", entries: [user("y")] })),
        3,
      ],
      ["no entries", framed(request({ workspace: "ws", session: "s2", entries: [] })), 3],
      [
        "a bad entry id",
        framed(request({ workspace: "ws", session: "s2", entries: [user("bad id")] })),
        3,
      ],
      [
        "no kind",
        framed(
          request({ workspace: "ws", session: "s2", entries: [create(EntrySchema, { id: "k" })] }),
        ),
        3,
      ],
    ];
    for (const [what, body, code] of cases) {
      const a = await same(what, body);
      expect(status(a).code, what).toBe(code);
    }
  });

  test("auth: no token, a wrong one, one without the workspace", async () => {
    const body = framed(request({ workspace: "ws", session: "s2", entries: [user("z1")] }));
    expect(status(await same("no token", body, {})).code).toBe(16);
    expect(status(await same("a wrong token", body, auth("wrong-token-0123456789"))).code).toBe(16);
    const narrow = await same("outside the grant", body, auth(NARROW));
    expect(status(narrow)).toMatchObject({ code: 5 });
  });

  test("what grpc-js refuses before any handler: undecodable, cut short, none, two, too large", async () => {
    const ok = request({ workspace: "ws", session: "s2", entries: [user("w1")] });
    const cases: [string, Buffer, number][] = [
      ["undecodable", framed(Buffer.from([0x0a, 0x7f, 0x61])), 3],
      ["no message", Buffer.alloc(0), 1],
      ["a cut-short header", Buffer.from([0, 0, 0]), 3],
      ["a cut-short message", framed(ok).subarray(0, 20), 3],
      ["two messages", Buffer.concat([framed(ok), framed(ok)]), 12],
      ["over --max-message-bytes", framed(Buffer.alloc(MAX_MESSAGE + 1)), 8],
    ];
    for (const [what, body, code] of cases) {
      const a = await same(what, body);
      // "no message" is UNIMPLEMENTED on the wire, logged as the client's cancel.
      if (what === "no message") expect(status(a).code).toBe(12);
      else expect(status(a).code, what).toBe(code);
    }
  });

  test("a compressed request (gzip) and a set flag with identity are served alike", async () => {
    const ok = request({ workspace: "ws", session: "s2", entries: [user("g1")] });
    const a = await same("gzip", envelope(gzipSync(ok), 1), {
      ...auth(),
      "grpc-encoding": "gzip",
    });
    expect(status(a).code).toBe(0);
    const b = await same(
      "flag set, identity",
      framed(request({ workspace: "ws", session: "s2", entries: [user("g2", "x", "g1")] }), 1),
    );
    expect(status(b).code).toBe(0);
  });

  test("deadlines: one that passes before the request is whole is DEADLINE_EXCEEDED", async () => {
    const body = framed(request({ workspace: "ws", session: "s2", entries: [user("d1")] }));
    const a = await same("late body", body, { ...auth(), "grpc-timeout": "20m" }, (stream) => {
      stream.write(body.subarray(0, 7));
      setTimeout(() => stream.end(body.subarray(7)), 150);
    });
    expect(status(a)).toEqual({ code: 4, message: "Deadline exceeded" });
    // A deadline that is not reached changes nothing.
    const b = await same("in time", body, { ...auth(), "grpc-timeout": "10S" });
    expect(status(b).code).toBe(0);
  });

  test("a request sent in many small pieces", async () => {
    const body = framed(
      request({ workspace: "ws", session: "s2", entries: [user("p1", "x".repeat(3000), "d1")] }),
    );
    const a = await same("in pieces", body, auth(), inPieces(body));
    expect(status(a).code).toBe(0);
  });

  test("the same metrics: requests by method and code", async () => {
    expect(await appendCounts(direct)).toEqual(await appendCounts(generic));
    expect((await appendCounts(direct)).length).toBeGreaterThan(3);
  });
});
