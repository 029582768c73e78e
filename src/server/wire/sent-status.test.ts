import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type SentResponse, sentStatus } from "./sent-status.js";

const answered = (over: Partial<SentResponse>): SentResponse => ({
  httpStatus: 200,
  headers: undefined,
  trailers: {},
  last: undefined,
  ...over,
});

/** A whole envelope: flags, big-endian length, payload. */
function frame(flags: number, payload: string): Uint8Array {
  const data = Buffer.from(payload);
  const b = Buffer.alloc(5 + data.length);
  b[0] = flags;
  b.writeUInt32BE(data.length, 1);
  data.copy(b, 5);
  return b;
}

describe("sentStatus reads the status each protocol sends", () => {
  it("gRPC: the grpc-status trailer, with grpc-message percent-decoded", () => {
    const sent = answered({
      trailers: { "grpc-status": "8", "grpc-message": "response%20too%20big" },
    });
    expect(sentStatus("application/grpc", sent)).toEqual({
      code: Code.ResourceExhausted,
      message: "response too big",
    });
  });

  it("gRPC: a trailers-only answer carries its status in the headers", () => {
    const sent = answered({ headers: { ":status": 200, "grpc-status": "0" } });
    expect(sentStatus("application/grpc+proto", sent)).toEqual({ code: 0, message: "" });
  });

  it("gRPC: no status when the stream ended before its trailers (the client left)", () => {
    expect(sentStatus("application/grpc", answered({ headers: { ":status": 200 } }))).toBe(
      undefined,
    );
  });

  it("gRPC-Web: the trailer frame at the end of the body", () => {
    const last = frame(0x80, "grpc-status: 5\r\ngrpc-message: session%20x%20not%20found\r\n");
    expect(sentStatus("application/grpc-web+proto", answered({ last }))).toEqual({
      code: Code.NotFound,
      message: "session x not found",
    });
  });

  it("Connect streaming: the end-of-stream message, with or without an error", () => {
    const failed = frame(0x02, '{"error":{"code":"resource_exhausted","message":"too big"}}');
    expect(sentStatus("application/connect+json", answered({ last: failed }))).toEqual({
      code: Code.ResourceExhausted,
      message: "too big",
    });
    const ok = frame(0x02, "{}");
    expect(sentStatus("application/connect+proto", answered({ last: ok }))).toEqual({
      code: 0,
      message: "",
    });
  });

  it("Connect unary: HTTP 200 is OK, an error status carries its code in the JSON body", () => {
    expect(sentStatus("application/proto", answered({}))).toEqual({ code: 0, message: "" });
    const last = Buffer.from('{"code":"failed_precondition","message":"leaf moved"}');
    expect(sentStatus("application/json", answered({ httpStatus: 400, last }))).toEqual({
      code: Code.FailedPrecondition,
      message: "leaf moved",
    });
  });

  it("a refusal before any RPC (unknown path, wrong content type) is its HTTP status", () => {
    expect(sentStatus("application/grpc", answered({ httpStatus: 404 }))).toEqual({ http: 404 });
    expect(sentStatus("text/plain", answered({ httpStatus: 415 }))).toEqual({ http: 415 });
  });

  it("a compressed end frame cannot be read: no status rather than a wrong one", () => {
    const compressed = frame(0x03, "\x1f\x8b...");
    expect(sentStatus("application/connect+json", answered({ last: compressed }))).toBe(undefined);
  });
});
