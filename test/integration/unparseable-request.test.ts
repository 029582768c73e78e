/**
 * A request message that does not parse is bad input: INVALID_ARGUMENT
 * "parse binary: ...", whatever the protocol, the HTTP version, the method
 * kind and the server path (grpc-js front or connect-node for native gRPC).
 * connect-es answers it INTERNAL by itself for unary methods, before any
 * interceptor (src/server/wire/connect-refusals.ts corrects that answer); a
 * streaming method reads its request inside the interceptor chain
 * (src/server/wire/errors.ts). The request log says InvalidArgument too, and
 * the server keeps answering.
 */
import http2 from "node:http2";
import { describe, expect, test } from "vitest";
import { envelope } from "../reliability/lib/hostile-wire.js";
import { expectNoLeak } from "./support/errors.js";
import { ownServers } from "./support/own-servers.js";
import { type Exchange, envelopes, exchange } from "./support/raw-http2.js";
import { requestLog } from "./support/request-log.js";
import { EXTERNAL, skipExternal } from "./support/server.js";
import { eventually } from "./support/stream.js";

if (EXTERNAL) skipExternal("unparseable requests (needs its own --grpc-server connect)");

const own = ownServers();
const UNARY = "/sessiond.v1.StoreService/GetSession";
const STREAMING = "/sessiond.v1.SessionService/WatchEntries";
/** Field number 0: never valid protobuf. */
const GARBAGE = Buffer.from([0x00, 0x01, 0x02]);
/** A length-delimited field 255 bytes long with 1 byte there. */
const CUT_SHORT = Buffer.from([0x0a, 0xff, 0x01, 0x41]);

interface Answer {
  code: string;
  message: string;
}

/** The status of a native gRPC answer (trailers, or headers when trailers-only). */
function grpcAnswer(x: Exchange): Answer {
  const status = x.trailers["grpc-status"] ?? x.headers["grpc-status"];
  const message = x.trailers["grpc-message"] ?? x.headers["grpc-message"];
  return { code: String(status), message: decodeURIComponent(String(message ?? "")) };
}

/** The status in a gRPC-Web body's trailer frame. */
function grpcWebAnswer(body: Buffer): Answer {
  const frame = envelopes(body).find(([flags]) => flags === 0x80);
  const fields = new Map(
    (frame?.[1].toString("utf8") ?? "")
      .split("\r\n")
      .filter((l) => l.includes(":"))
      .map((l) => [l.slice(0, l.indexOf(":")).trim(), l.slice(l.indexOf(":") + 1).trim()]),
  );
  return {
    code: String(fields.get("grpc-status")),
    message: decodeURIComponent(fields.get("grpc-message") ?? ""),
  };
}

/** Connect unary: the HTTP status and the JSON error body. */
function connectUnaryAnswer(status: number, body: Buffer): Answer & { status: number } {
  const j = JSON.parse(body.toString("utf8")) as { code?: string; message?: string };
  return { status, code: String(j.code), message: String(j.message) };
}

/** Connect streaming: the error of the end-of-stream frame. */
function connectStreamAnswer(body: Buffer): Answer {
  const end = envelopes(body).find(([flags]) => (flags & 0x02) !== 0);
  const j = JSON.parse(end?.[1].toString("utf8") ?? "{}") as {
    error?: { code?: string; message?: string };
  };
  return { code: String(j.error?.code), message: String(j.error?.message) };
}

function expectParseError(a: Answer, code: string): void {
  expect(a.code).toBe(code);
  expect(a.message).toMatch(/^parse binary: /);
  expectNoLeak(a.message);
}

for (const grpcServer of ["grpc-js", "connect"] as const) {
  describe(`native gRPC answered by ${grpcServer}`, () => {
    test("over HTTP/2: gRPC, gRPC-Web and Connect, unary and streaming, answer INVALID_ARGUMENT", async () => {
      const srv = await own.server(["--grpc-server", grpcServer]);
      const session = http2.connect(srv.url);
      try {
        for (const junk of [GARBAGE, CUT_SHORT]) {
          for (const path of [UNARY, STREAMING]) {
            const grpc = await exchange(session, path, "application/grpc", envelope(junk));
            expectParseError(grpcAnswer(grpc), "3");
            const web = await exchange(session, path, "application/grpc-web+proto", envelope(junk));
            expect(web.headers[":status"]).toBe(200);
            expectParseError(grpcWebAnswer(web.body), "3");
          }
          const unary = await exchange(session, UNARY, "application/proto", junk, {
            "connect-protocol-version": "1",
          });
          const u = connectUnaryAnswer(Number(unary.headers[":status"]), unary.body);
          expect(u.status).toBe(400);
          expectParseError(u, "invalid_argument");
          const stream = await exchange(
            session,
            STREAMING,
            "application/connect+proto",
            envelope(junk),
            {
              "connect-protocol-version": "1",
            },
          );
          expect(stream.headers[":status"]).toBe(200);
          expectParseError(connectStreamAnswer(stream.body), "invalid_argument");
        }
      } finally {
        session.close();
      }
      // 2 inputs x (gRPC 2 + gRPC-Web 2 + Connect 2) calls, each logged as the client saw it
      // (a line is written once the answer has gone out: wait for the last ones).
      const logged = () =>
        requestLog(srv).filter(
          (l) => l.method.endsWith("GetSession") || l.method.endsWith("WatchEntries"),
        );
      await eventually(() => logged().length >= 12, 5_000, "12 request log lines");
      expect(logged().map((l) => l.code)).toEqual(Array(12).fill("InvalidArgument"));
      // The server still answers: a health check over gRPC.
      const again = http2.connect(srv.url);
      try {
        const ok = await exchange(again, UNARY, "application/proto", Buffer.alloc(0), {
          "connect-protocol-version": "1",
        });
        // An empty GetSessionRequest parses: the server answers it (no session named).
        expect(connectUnaryAnswer(Number(ok.headers[":status"]), ok.body).code).toBe(
          "invalid_argument",
        );
      } finally {
        again.close();
      }
    });

    test("over HTTP/1.1: Connect and gRPC-Web unary answer INVALID_ARGUMENT", async () => {
      const srv = await own.server(["--grpc-server", grpcServer]);
      const connect = await fetch(`${srv.url}${UNARY}`, {
        method: "POST",
        headers: { "content-type": "application/proto", "connect-protocol-version": "1" },
        body: GARBAGE,
      });
      const u = connectUnaryAnswer(connect.status, Buffer.from(await connect.arrayBuffer()));
      expect(u.status).toBe(400);
      expectParseError(u, "invalid_argument");
      const web = await fetch(`${srv.url}${UNARY}`, {
        method: "POST",
        headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
        body: envelope(GARBAGE),
      });
      expect(web.status).toBe(200);
      expectParseError(grpcWebAnswer(Buffer.from(await web.arrayBuffer())), "3");
    });
  });
}
