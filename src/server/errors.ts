import { Code, ConnectError } from "@connectrpc/connect";
import { type ErrorCode, isSessiondError } from "../core/errors.js";

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
  INTERNAL: Code.Internal,
};

/** Converts anything thrown by a handler into the ConnectError a client may see. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (isSessiondError(err)) {
    const code = CODES[err.code];
    return new ConnectError(code === Code.Internal ? "internal error" : err.message, code);
  }
  return new ConnectError("internal error", Code.Internal);
}

/** True when the error is one we did not expect (worth a log line with details). */
export function isUnexpected(err: unknown): boolean {
  if (err instanceof ConnectError) return err.code === Code.Internal || err.code === Code.Unknown;
  return !isSessiondError(err) || err.code === "INTERNAL";
}
