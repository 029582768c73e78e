import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { toBinary } from "@bufbuild/protobuf";
import type { Code } from "@connectrpc/connect";
import type { Span } from "@opentelemetry/api";
import {
  type AppendRequest,
  AppendResponseSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import { decodeAppendRequest } from "../../core/codec/append-request-binary.js";
import {
  type AppendOutcome,
  appendResponseFrame,
  appendResponseOf,
} from "../../core/codec/append-response-binary.js";
import { startAppend } from "../ops/append-start.js";
import type { StreamCallLog } from "../ops/call-log.js";
import { endRpcSpan } from "../ops/trace-context.js";
import { restated, toConnectError } from "../wire/errors.js";
import { responseTooLarge } from "../wire/response-size.js";
import type { SentStatus } from "../wire/sent-status.js";
import { deadlineMs } from "./wire-status.js";

/**
 * SessionService/Append over native gRPC, answered on its HTTP/2 stream by
 * this file alone: the hot path of every agent turn, designed as one piece.
 *
 * The request's bytes are gathered as they come, framed and decoded once
 * (core/codec/append-request-binary.ts: the protobuf-es messages the store
 * keeps, without reflection), and handed to the store (`append`, the
 * same checks as the interceptors and the handler: rpc/session-service.ts
 * appendCall). The answer is encoded from the store's result straight
 * into the frame the stream sends (core/codec/append-response-binary.ts),
 * behind headers and trailers made once for every call. The call is
 * logged and counted (ops/call-log.ts), traced when an SDK is registered,
 * counted in flight for shutdown and held to its deadline, like every other
 * call; no handler context, interceptor request or grpc-js call object is
 * made for it.
 *
 * What a client sees is what grpc-js and the shared handlers answer (the
 * same headers, statuses and messages, test/integration/direct-append.test.ts
 * compares the two paths case by case): a request over the max message
 * size is RESOURCE_EXHAUSTED as soon as its length is read, no message
 * UNIMPLEMENTED (logged as the client's cancel), a cut-short one
 * INVALID_ARGUMENT, a second one UNIMPLEMENTED, an undecodable one
 * INVALID_ARGUMENT "parse binary: ...", an expired deadline
 * DEADLINE_EXCEEDED; the front (front.ts) has refused a bad grpc-timeout
 * already, and leaves a compressed request (grpc-encoding other than
 * identity) to grpc-js.
 */

/** What the store answers an append with (its AppendResult). */
export type AppendAnswer = AppendOutcome;

export interface DirectAppendOptions {
  /** The append itself, given the request's `authorization` header (rpc/session-service.ts appendCall). */
  readonly append: (authorization: string | undefined, req: AppendRequest) => Promise<AppendAnswer>;
  /** Shutdown waits for the calls counted here (edge.ts counts the other unary calls). */
  readonly inFlight: { enter(): void; leave(): void };
  /** Largest request or response message, bytes. */
  readonly maxMessageBytes: number;
}

/** The method's path and its name in logs and metrics. */
export const APPEND_PATH = "/sessiond.v1.SessionService/Append";

/** grpc-js's response headers (and their content type), the same for every call. */
const RESPONSE_HEADERS: OutgoingHttpHeaders = {
  ":status": 200,
  "content-type": "application/grpc+proto",
  "grpc-accept-encoding": "identity,deflate,gzip",
  "grpc-encoding": "identity",
};
const OK_TRAILERS: OutgoingHttpHeaders = { "grpc-status": 0, "grpc-message": "OK" };
/** The status the request log reads from those trailers (wire/sent-status.ts). */
const OK_STATUS: SentStatus = { code: 0, message: "" };
const RESPOND_OPTIONS = { waitForTrailers: true };
const END_STREAM = { endStream: true };

// grpc-js's own codes and texts for what it refuses before any handler.
const UNIMPLEMENTED = 12;
const INVALID_ARGUMENT = 3;
const RESOURCE_EXHAUSTED = 8;
const DEADLINE_EXCEEDED = 4;

/** True when the direct path takes a stream: Append, sent uncompressed. */
export function takesDirectly(headers: IncomingHttpHeaders): boolean {
  if (headers[":path"] !== APPEND_PATH) return false;
  const encoding = headers["grpc-encoding"];
  return encoding === undefined || encoding === "identity";
}

/** Serves one Append stream (see takesDirectly); `log` is its request log record. */
export function directAppend(
  o: DirectAppendOptions,
): (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, log: StreamCallLog) => void {
  return (stream, headers, log) => {
    new AppendStream(o, stream, headers, log).start();
  };
}

/**
 * One Append call: its request bytes as they come, then its one answer.
 * The stream's listeners are this object's (bound once per call); what it
 * holds while the store works is the request, the stream and the log.
 */
class AppendStream {
  /** The request's bytes so far: one chunk (the usual case), or several. */
  private chunks: Buffer | Buffer[] | undefined;
  private received = 0;
  /** Where the next message header starts; whole messages so far. */
  private next = 0;
  private messages = 0;
  /** The answer is sent (or the stream is gone): nothing more is sent. */
  private answered = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly o: DirectAppendOptions,
    private readonly stream: ServerHttp2Stream,
    private readonly headers: IncomingHttpHeaders,
    private readonly log: StreamCallLog,
  ) {}

  start(): void {
    const stream = this.stream;
    // `on`, not `once`, for the events a stream emits once: no wrapper per listener.
    stream.on("data", this.onData);
    stream.on("end", this.onEnd);
    stream.on("close", this.onClose);
    stream.on("error", ignore);
    const ms = deadlineMs(this.headers["grpc-timeout"]);
    if (ms !== undefined) this.timer = setTimeout(this.onDeadline, ms);
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.answered) return;
    this.received += chunk.length;
    const c = this.chunks;
    if (c === undefined) this.chunks = chunk;
    else if (Array.isArray(c)) c.push(chunk);
    else this.chunks = [c, chunk];
    // Messages are framed as their bytes come, as grpc-js's decoder does: a
    // length over the limit is refused once it is read, a second message
    // once it is whole.
    while (this.received >= this.next + 5) {
      const length = this.lengthAt(this.next);
      if (length > this.o.maxMessageBytes) {
        this.fail(
          RESOURCE_EXHAUSTED,
          restatedText(
            RESOURCE_EXHAUSTED,
            `Received message larger than max (${length} vs ${this.o.maxMessageBytes})`,
          ),
        );
        return;
      }
      if (this.received < this.next + 5 + length) return;
      this.next += 5 + length;
      if (++this.messages > 1) {
        this.fail(
          UNIMPLEMENTED,
          `Received a second request message for server streaming method ${APPEND_PATH}`,
        );
        return;
      }
    }
  };

  /** The length field of the message header at byte `at` of the request (5 bytes are in). */
  private lengthAt(at: number): number {
    const c = this.chunks as Buffer | Buffer[];
    if (!Array.isArray(c)) return c.readUInt32BE(at + 1);
    // The header's 5 bytes, from the chunks that hold them.
    const header = Buffer.allocUnsafe(5);
    let start = 0;
    for (const chunk of c) {
      const end = start + chunk.length;
      for (let i = Math.max(at, start); i < Math.min(at + 5, end); i++) {
        header[i - at] = chunk[i - start] as number;
      }
      start = end;
      if (start >= at + 5) break;
    }
    return header.readUInt32BE(1);
  }

  private readonly onEnd = (): void => {
    if (this.answered) return;
    const c = this.chunks;
    this.chunks = undefined;
    if (this.messages === 0) {
      this.noMessage(this.received);
      return;
    }
    const bytes = Array.isArray(c) ? Buffer.concat(c) : (c as Buffer);
    // Bytes after the one message: the start of another, cut short (grpc-js drops them).
    let req: AppendRequest;
    try {
      req = decodeAppendRequest(bytes.subarray(5, this.next));
    } catch (err) {
      // As the front answers an undecodable request: before anything is recorded of it.
      this.fail(
        INVALID_ARGUMENT,
        `parse binary: ${err instanceof Error ? err.message : String(err)}`,
      );
      return;
    }
    this.run(req);
  };

  /** grpc-js's answer to a call that half-closed without a whole message. */
  private noMessage(received: number): void {
    // A cut-short envelope is a malformed request (wire-status.ts restatedStatus).
    if (received > 0) this.fail(INVALID_ARGUMENT, "protocol error: incomplete envelope");
    else {
      this.fail(
        UNIMPLEMENTED,
        `Received no request message for server streaming method ${APPEND_PATH}`,
      );
    }
  }

  /** The call itself: what the edge interceptor does for a unary call, then the append. */
  private run(req: AppendRequest): void {
    const record = this.log.record;
    const inFlight = this.o.inFlight;
    const { answer, span } = startAppend(this.o.append, inFlight, record, this.headers, req);
    answer.then(
      (result) => {
        inFlight.leave();
        this.succeed(result, span);
      },
      (err: unknown) => {
        inFlight.leave();
        record.error = err;
        const e = toConnectError(err);
        if (span !== undefined) endRpcSpan(span, e.code);
        this.fail(e.code, e.rawMessage);
      },
    );
  }

  private succeed(result: AppendAnswer, span: Span | undefined): void {
    let frame = appendResponseFrame(result);
    if (frame === undefined) frame = genericFrame(result);
    const size = frame.length - 5;
    if (size > this.o.maxMessageBytes) {
      // The edge's response size check (wire/response-size.ts), in its words.
      const err = toConnectError(responseTooLarge(size, this.o.maxMessageBytes));
      this.log.record.error = err;
      if (span !== undefined) endRpcSpan(span, err.code);
      this.fail(err.code, err.rawMessage);
      return;
    }
    this.log.record.succeeded = true;
    if (span !== undefined) endRpcSpan(span, 0);
    if (this.answered) return;
    this.answered = true;
    this.clearTimer();
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    stream.on("wantTrailers", this.sendOk);
    stream.respond(RESPONSE_HEADERS, RESPOND_OPTIONS);
    this.log.responded(RESPONSE_HEADERS, false);
    stream.end(frame);
  }

  private readonly sendOk = (): void => {
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    stream.sendTrailers(OK_TRAILERS);
    this.log.answered(OK_STATUS);
  };

  /** A trailers-only answer with `code` and `message`, as grpc-js sends one. */
  private fail(code: number, message: string): void {
    if (this.answered) return;
    this.answered = true;
    this.chunks = undefined;
    this.clearTimer();
    const stream = this.stream;
    // Whatever else the client sends is read and dropped (grpc-js resumes the stream too).
    stream.off("data", this.onData);
    stream.resume();
    if (stream.destroyed || stream.closed || stream.headersSent) return;
    const headers: OutgoingHttpHeaders = {
      "grpc-status": code,
      "grpc-message": encodeURI(message),
      ":status": 200,
      "content-type": "application/grpc+proto",
    };
    stream.respond(headers, END_STREAM);
    this.log.responded(headers, false);
    // The status as sentStatus would read it back from those headers.
    this.log.answered({ code: code as Code, message });
  }

  private readonly onDeadline = (): void => {
    this.timer = undefined;
    this.fail(DEADLINE_EXCEEDED, "Deadline exceeded");
  };

  /** Closed: the client left before an answer (logged from the record), or the call is over. */
  private readonly onClose = (): void => {
    this.clearTimer();
    this.answered = true;
    this.chunks = undefined;
    this.log.done(undefined);
  };

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function ignore(): void {}

/** An answer `appendResponseFrame` declines (a timestamp with a client's unknown fields). */
function genericFrame(result: AppendAnswer): Buffer {
  const bytes = toBinary(AppendResponseSchema, appendResponseOf(result));
  const frame = Buffer.allocUnsafe(5 + bytes.length);
  frame[0] = 0;
  frame.writeUInt32BE(bytes.length, 1);
  frame.set(bytes, 5);
  return frame;
}

function restatedText(code: number, message: string): string {
  return restated(code, message)?.rawMessage ?? message;
}
