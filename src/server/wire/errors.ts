import { Code, ConnectError } from "@connectrpc/connect";
import { type ErrorCode, isSessiondError } from "../../core/errors.js";

/**
 * The one place where domain errors become gRPC status codes. Domain
 * messages are written for clients (they name the offending id) and pass
 * through; anything else is a bug: it is logged by the caller and reaches the
 * client as INTERNAL "internal error", never with a stack trace or a path.
 */
const CODES: Record<ErrorCode, Code> = {
  NOT_FOUND: Code.NotFound,
  INVALID_ARGUMENT: Code.InvalidArgument,
  ALREADY_EXISTS: Code.AlreadyExists,
  FAILED_PRECONDITION: Code.FailedPrecondition,
  ABORTED: Code.Aborted,
  RESOURCE_EXHAUSTED: Code.ResourceExhausted,
  DATA_LOSS: Code.DataLoss,
  UNAVAILABLE: Code.Unavailable,
  UNAUTHENTICATED: Code.Unauthenticated,
  PERMISSION_DENIED: Code.PermissionDenied,
  UNIMPLEMENTED: Code.Unimplemented,
  INTERNAL: Code.Internal,
};

/** Converts anything thrown by a handler into the ConnectError a client may see. */
export function toConnectError(err: unknown): ConnectError {
  if (clientGone(err)) return new ConnectError("the client went away", Code.Canceled);
  if (err instanceof ConnectError) return restated(err.code, err.rawMessage) ?? err;
  if (isSessiondError(err)) {
    const code = CODES[err.code];
    return new ConnectError(code === Code.Internal ? "internal error" : err.message, code);
  }
  return new ConnectError("internal error", Code.Internal);
}

/**
 * Node's errors for a stream the client has already reset or closed.
 * connect-node throws them into a streaming handler's generator when its
 * next message cannot be written, or wraps them (as `cause`) in the
 * ABORTED ConnectError it aborts an HTTP/1.1 call with when the socket
 * resets: either way the call ended from the client's side, CANCELED.
 */
const CLIENT_GONE = new Set([
  "ECONNRESET",
  "ERR_HTTP2_INVALID_STREAM",
  "ERR_HTTP2_STREAM_CANCEL",
  "ERR_STREAM_DESTROYED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_STREAM_WRITE_AFTER_END",
]);

/**
 * Whether `err` says the client went away: one of Node's errors above (or
 * a ConnectError caused by one), or an AbortError, the reason of a call's
 * signal that was aborted with none. Only connect-node does that, when the
 * client's HTTP/1.1 response or HTTP/2 stream closes without an error code
 * (a browser tab navigating away from a watch stream); sessiond aborts its
 * own signals with a reason (deadline, shutdown).
 */
function clientGone(err: unknown): boolean {
  for (let e = err, depth = 0; e !== null && typeof e === "object" && depth < 8; depth++) {
    const { code, name, cause } = e as { code?: unknown; name?: unknown; cause?: unknown };
    if (typeof code === "string" && CLIENT_GONE.has(code)) return true;
    if (name === "AbortError" && !(e instanceof ConnectError)) return true;
    e = cause;
  }
  return false;
}

/** True when the error is one we did not expect (worth a log line with details). */
export function isUnexpected(err: unknown): boolean {
  if (clientGone(err)) return false;
  if (err instanceof ConnectError) return err.code === Code.Internal || err.code === Code.Unknown;
  return !isSessiondError(err) || err.code === "INTERNAL";
}

/**
 * The refusals connect-es and grpc-js make by themselves, in sessiond's
 * terms; undefined for any other status, which stays as it is:
 * - a request message that does not parse: connect-es answers INTERNAL
 *   "parse binary: ...", but it is bad input, INVALID_ARGUMENT (as the
 *   grpc-js path answers it, grpc/wire-status.ts);
 * - a request over the max message size: the libraries name their own
 *   option (`readMaxBytes`, "larger than max"); the operator needs the flag
 *   that raises it, and the entry limit that a message that large meets next.
 * A streaming method reads its request inside the interceptor chain, so
 * toConnectError restates it; a unary method's answer is made before any
 * interceptor and restated by connect-refusals.ts, grpc-js's by
 * grpc/wire-status.ts.
 */
export function restated(code: Code, message: string): ConnectError | undefined {
  if (code === Code.Internal && message.startsWith("parse binary: ")) {
    return new ConnectError(message, Code.InvalidArgument);
  }
  if (code !== Code.ResourceExhausted) return undefined;
  const over = OVERSIZE.map((re) => re.exec(message)).find((m) => m !== null);
  if (over?.groups === undefined) return undefined;
  const { size, limit } = over.groups;
  return new ConnectError(oversizeRequest(size, limit ?? "?"), Code.ResourceExhausted);
}

/** connect-es's (protocol/limit-io.ts) and grpc-js's (stream-decoder, server-interceptors) texts. */
const OVERSIZE = [
  /^message size (?:(?<size>\d+) )?is larger than configured readMaxBytes (?<limit>\d+)$/,
  /^Received message larger than max \((?<size>\d+) vs\.? (?<limit>\d+)\)$/,
  /^Received message that decompresses to a size larger than (?<limit>\d+)$/,
];

function oversizeRequest(size: string | undefined, limit: string): string {
  const what = size === undefined ? "request" : `request of ${size} bytes`;
  return `${what} is over the server's max message size of ${limit} bytes: raise the server's --max-message-bytes (an entry that large also needs --max-entry-bytes)`;
}

/**
 * Whether a status is grpc-js's or connect-es's answer to a call whose
 * client sent no request message at all. Every client sends one message to
 * a unary method (an empty one is a 5-byte envelope); a call with none is
 * one the client gave up before sending: connect-node's client opens the
 * stream, refuses its own oversize message and resets the stream. The
 * answer (UNIMPLEMENTED, as both libraries give it) reaches no one, so the
 * call is logged and counted as the client's cancel, not as a method the
 * server lacks.
 */
export function sentNoRequest(code: Code | 0, message: string): boolean {
  return (
    code === Code.Unimplemented &&
    (message.startsWith("Received no request message") ||
      message.startsWith("protocol error: missing input message"))
  );
}
