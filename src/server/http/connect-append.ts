import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { readAllBytes } from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  errorToJsonBytes,
  parseTimeout,
} from "@connectrpc/connect/protocol-connect";
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
import { type AppendWith, startAppend } from "../ops/append-start.js";
import type { CallRecord } from "../ops/call-log.js";
import { endRpcSpan } from "../ops/trace-context.js";
import { restated, toConnectError } from "../wire/errors.js";
import { headerText } from "../wire/header-text.js";
import { responseTooLarge } from "../wire/response-size.js";

/**
 * SessionService/Append over the Connect protocol (unary, binary
 * `application/proto`, uncompressed), answered here instead of by
 * connect-node: the call of every agent turn from a browser or a Connect
 * client. connect-node spends most of such a call on its own machinery
 * (abort controllers and signals per call, the universal request and
 * response, async iterables, reflection-based decoding, the interceptor
 * chain): measured with bench row 2's load (64 in flight, 64 sessions),
 * ~540 µs of server CPU per durable Append against ~215 µs for
 * connect-node answering an echo that does nothing. Same design as the
 * native gRPC path (grpc/direct-append.ts): the request decoded once by
 * core/codec/append-request-binary.ts, the store's append with the same
 * checks (rpc/session-service.ts appendCall, given as `append`), the answer
 * encoded straight from the store's result.
 *
 * What a client sees is what connect-node answers (test/integration/
 * direct-connect-append.test.ts sends every case to both and compares
 * status, headers, body, log line and metrics): the same refusals, built by
 * connect's own functions (readAllBytes for the body and its length,
 * parseTimeout, codeToHttpStatus, errorToJsonBytes) and restated as the
 * server restates connect-node's (wire/errors.ts `restated`), the same
 * record for the request log (call-log.ts), span, in-flight count and
 * response size check as the edge interceptor. Anything else (JSON,
 * compression, GET, another path or method) goes to connect-node before a
 * byte of the body is read. A deadline (`connect-timeout-ms`) is checked
 * as connect-node checks it and not enforced, as connect-node does not for
 * this method (the append is not cancellable once planned).
 */

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;
type Handler = (req: Request, res: Response) => void;

export interface ConnectAppendOptions {
  /** The append itself, given the request's `authorization` header (rpc/session-service.ts appendCall). */
  readonly append: AppendWith;
  /** Shutdown waits for the calls counted here. */
  readonly inFlight: { enter(): void; leave(): void };
  /** Largest request or response message, bytes (connect-node's readMaxBytes and writeMaxBytes). */
  readonly maxMessageBytes: number;
  /** connect-node's maxTimeoutMs (undefined: no limit). */
  readonly maxTimeoutMs: number | undefined;
  /** The request log's record of a request (call-log.ts). */
  readonly recordOf: (req: Request) => CallRecord | undefined;
}

const PATH = "/sessiond.v1.SessionService/Append";
const PROTO = "application/proto";
const JSON_TYPE = "application/json";

/** True for what this path answers; the rest is connect-node's. */
function takes(req: Request): boolean {
  const h = req.headers;
  if (req.method !== "POST" || req.url !== PATH || h["content-type"] !== PROTO) return false;
  const encoding = h["content-encoding"];
  return encoding === undefined || encoding === "identity";
}

/** `next` with Connect Appends answered by this file first (see above). */
export function connectAppend(o: ConnectAppendOptions, next: Handler): Handler {
  // connect-node's default when it is given none.
  const maxTimeoutMs = o.maxTimeoutMs ?? Number.MAX_SAFE_INTEGER;
  return (req, res) => {
    if (!takes(req)) {
      next(req, res);
      return;
    }
    const timeout = headerText(req.headers["connect-timeout-ms"]);
    if (timeout !== undefined) {
      const parsed = parseTimeout(timeout, maxTimeoutMs);
      if (parsed.error !== undefined) {
        answerError(res, parsed.error);
        return;
      }
    }
    serve(o, req, res).catch((err: unknown) => broken(res, err));
  };
}

async function serve(o: ConnectAppendOptions, req: Request, res: Response): Promise<void> {
  let bytes: Uint8Array;
  let appendReq: AppendRequest;
  try {
    // connect's own reader: its length checks and their messages.
    bytes = await readAllBytes(
      req as AsyncIterable<Uint8Array>,
      o.maxMessageBytes,
      headerText(req.headers["content-length"]) ?? null,
    );
  } catch (err) {
    answerError(res, refusal(err));
    return;
  }
  try {
    appendReq = decodeAppendRequest(bytes);
  } catch (err) {
    // As connect-node refuses an undecodable request: before anything is recorded of it.
    answerError(
      res,
      new ConnectError(
        `parse binary: ${err instanceof Error ? err.message : String(err)}`,
        Code.InvalidArgument,
      ),
    );
    return;
  }
  await run(o, req, res, appendReq);
}

/** What the edge interceptor does for a unary call, then the append and its answer. */
function run(
  o: ConnectAppendOptions,
  req: Request,
  res: Response,
  appendReq: AppendRequest,
): Promise<void> {
  const record = o.recordOf(req) ?? {};
  const { answer, span } = startAppend(o.append, o.inFlight, record, req.headers, appendReq);
  return answer.then(
    (result) => {
      o.inFlight.leave();
      const body = responseBytes(result);
      if (body.length > o.maxMessageBytes) {
        // The edge's response size check (wire/response-size.ts), in its words.
        const err = toConnectError(responseTooLarge(body.length, o.maxMessageBytes));
        record.error = err;
        if (span !== undefined) endRpcSpan(span, err.code);
        answerError(res, err);
        return;
      }
      record.succeeded = true;
      if (span !== undefined) endRpcSpan(span, 0);
      if (gone(res)) return;
      res.writeHead(200, { "content-type": PROTO, "content-length": String(body.length) });
      res.end(body);
    },
    (err: unknown) => {
      o.inFlight.leave();
      record.error = err;
      const e = toConnectError(err);
      if (span !== undefined) endRpcSpan(span, e.code);
      answerError(res, e);
    },
  );
}

/**
 * What is left to do when answering failed itself (a response Node
 * refused to write): an INTERNAL answer if nothing was sent yet, else the
 * stream or connection closed; never an unhandled rejection.
 */
function broken(res: Response, err: unknown): void {
  try {
    answerError(res, internalError(err));
  } catch {
    ("stream" in res ? res.stream : res).destroy();
  }
}

/** The answer's message bytes. */
function responseBytes(result: AppendOutcome): Uint8Array {
  const frame = appendResponseFrame(result);
  // A frame is the gRPC message with its 5-byte prefix; declined: toBinary.
  return frame !== undefined
    ? frame.subarray(5)
    : toBinary(AppendResponseSchema, appendResponseOf(result));
}

/** connect-node's refusal of a body it could not read, restated as the server restates it. */
function refusal(err: unknown): ConnectError {
  if (!(err instanceof ConnectError)) return internalError(err);
  return restated(err.code, err.rawMessage) ?? err;
}

/** connect-node's answer to a failure that is no ConnectError (its handler factory's words). */
function internalError(cause: unknown): ConnectError {
  return new ConnectError("internal error", Code.Internal, undefined, undefined, cause);
}

/** A Connect unary error, as connect-node's handler answers one (protocol-connect handler-factory). */
function answerError(res: Response, error: ConnectError): void {
  if (gone(res)) return;
  const headers: Record<string, string> = { "content-type": JSON_TYPE };
  error.metadata.forEach((value, key) => {
    headers[key] = value;
  });
  const body = errorToJsonBytes(error, undefined);
  headers["content-length"] = String(body.byteLength);
  res.writeHead(codeToHttpStatus(error.code), headers);
  res.end(body);
}

/** The response is sent or its stream gone: nothing more to write. */
function gone(res: Response): boolean {
  if (res.headersSent || res.writableEnded) return true;
  return "stream" in res ? res.stream.destroyed : res.destroyed;
}
