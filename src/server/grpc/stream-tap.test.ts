/**
 * The tap on a native gRPC stream: the log sees the status as sent, after
 * the incomplete-envelope fix-up (which needs the bytes the client sent),
 * and a stream closed with no status is logged as such. A stand-in stream
 * whose prototype has respond / sendTrailers, as Http2Stream's does.
 */
import { EventEmitter } from "node:events";
import type { OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { describe, expect, it } from "vitest";
import type { StreamCallLog } from "../ops/call-log.js";
import { tapStream } from "./stream-tap.js";

class FakeStream extends EventEmitter {
  readonly sent: unknown[] = [];
  respond(headers: OutgoingHttpHeaders, options?: { endStream?: boolean }) {
    this.sent.push(["respond", headers, options?.endStream === true]);
  }
  sendTrailers(trailers: OutgoingHttpHeaders) {
    this.sent.push(["trailers", trailers]);
  }
}

function tapped() {
  const logged: unknown[] = [];
  const log = {
    responded: (h: OutgoingHttpHeaders | undefined, end: boolean) =>
      logged.push(["responded", h, end]),
    done: (t: OutgoingHttpHeaders | undefined) => logged.push(["done", t]),
  } as unknown as StreamCallLog;
  const stream = new FakeStream();
  tapStream(stream as unknown as ServerHttp2Stream, log);
  return { stream, logged };
}

const noMessage = {
  ":status": 200,
  "grpc-status": "12",
  "grpc-message": "Received%20no%20request%20message",
};
const invalid = {
  ":status": 200,
  "grpc-status": "3",
  "grpc-message": "protocol%20error:%20incomplete%20envelope",
};

describe("tapStream", () => {
  it("sends and logs INVALID_ARGUMENT for 'no request message' once the client sent bytes", () => {
    const { stream, logged } = tapped();
    stream.emit("data", Buffer.from([0, 0, 0]));
    (stream as unknown as ServerHttp2Stream).respond(noMessage, { endStream: true });
    expect(stream.sent).toEqual([["respond", invalid, true]]);
    expect(logged).toEqual([["responded", invalid, true]]);
  });

  it("leaves the status alone when the client sent nothing, and logs the trailers as sent", () => {
    const { stream, logged } = tapped();
    const s = stream as unknown as ServerHttp2Stream;
    s.respond({ ":status": 200 });
    s.sendTrailers({ "grpc-status": "0" });
    expect(stream.sent).toEqual([
      ["respond", { ":status": 200 }, false],
      ["trailers", { "grpc-status": "0" }],
    ]);
    expect(logged).toEqual([
      ["responded", { ":status": 200 }, false],
      ["done", { "grpc-status": "0" }],
    ]);
  });

  it("fixes the trailers too, and logs a stream closed with no status", () => {
    const { stream } = tapped();
    stream.emit("data", Buffer.from([1]));
    (stream as unknown as ServerHttp2Stream).sendTrailers({
      "grpc-status": "12",
      "grpc-message": "Received%20no%20request%20message",
    });
    expect(stream.sent).toEqual([
      ["trailers", { "grpc-status": "3", "grpc-message": invalid["grpc-message"] }],
    ]);
    const other = tapped();
    other.stream.emit("close");
    expect(other.logged).toEqual([["done", undefined]]);
  });
});
