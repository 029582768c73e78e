/**
 * The one error vocabulary of sessiond. Every layer throws `SessiondError`
 * with one of these codes; the server maps them to gRPC codes in one place
 * (the names are the gRPC names on purpose, so the mapping is the identity).
 * Anything else that escapes is a bug and is reported as INTERNAL without
 * its message.
 */
export type ErrorCode =
  | "NOT_FOUND"
  | "INVALID_ARGUMENT"
  | "ALREADY_EXISTS"
  | "FAILED_PRECONDITION"
  | "ABORTED"
  | "RESOURCE_EXHAUSTED"
  | "DATA_LOSS"
  | "UNAVAILABLE"
  | "UNAUTHENTICATED"
  | "PERMISSION_DENIED"
  | "UNIMPLEMENTED"
  | "INTERNAL";

/** A domain error: its message is safe to show to clients and names the offending id. */
export class SessiondError extends Error {
  override readonly name = "SessiondError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True when `err` is a SessiondError, optionally with the given code. */
export function isSessiondError(err: unknown, code?: ErrorCode): err is SessiondError {
  return err instanceof SessiondError && (code === undefined || err.code === code);
}

export const notFound = (msg: string) => new SessiondError("NOT_FOUND", msg);
export const invalidArgument = (msg: string) => new SessiondError("INVALID_ARGUMENT", msg);
export const alreadyExists = (msg: string) => new SessiondError("ALREADY_EXISTS", msg);
export const failedPrecondition = (msg: string) => new SessiondError("FAILED_PRECONDITION", msg);
export const unimplemented = (msg: string) => new SessiondError("UNIMPLEMENTED", msg);
export const aborted = (msg: string) => new SessiondError("ABORTED", msg);
export const resourceExhausted = (msg: string) => new SessiondError("RESOURCE_EXHAUSTED", msg);
export const dataLoss = (msg: string, cause?: unknown) =>
  new SessiondError("DATA_LOSS", msg, { cause });
export const unavailable = (msg: string, cause?: unknown) =>
  new SessiondError("UNAVAILABLE", msg, { cause });
