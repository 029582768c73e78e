import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { ATTEMPTS } from "./attempts.js";

export interface RetryOptions {
  /** Attempts in total, including the first (default 5). */
  maxAttempts?: number;
  /** First backoff, doubled each attempt with jitter (default 50 ms). */
  baseDelayMs?: number;
  /** Longest backoff (default 2 s). */
  maxDelayMs?: number;
}

/**
 * Waits `ms`, or less when `signal` aborts. The abort listener goes when the
 * wait ends either way: left on the call's signal, each retry would add one
 * (Node warns past ten, with maxAttempts above 10).
 */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });

/** Node error codes of a connection lost in the middle of a call. */
const DISCONNECTED = new Set([
  "ECONNRESET",
  "EPIPE",
  "ERR_STREAM_DESTROYED",
  "ERR_HTTP2_INVALID_STREAM",
  "ERR_HTTP2_STREAM_ERROR",
  "ERR_HTTP2_GOAWAY_SESSION",
]);

function nodeErrorCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
  }
  return codes;
}

/**
 * Node error codes of a connection that was never made: the request did
 * not reach the server, so it did nothing.
 */
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * Whether a retryable failure may have come after the server acted on the
 * request (a reset connection, a server-side UNAVAILABLE mid-operation), as
 * opposed to a request that never reached it.
 */
function outcomeUnknown(ce: ConnectError): boolean {
  if (ce.message.includes("NGHTTP2_REFUSED_STREAM")) return false;
  return !nodeErrorCodes(ce.cause).some((c) => NOT_CONNECTED.has(c));
}

/**
 * A DeleteSession retried after an attempt whose outcome is unknown, and
 * answered NOT_FOUND: that attempt most likely deleted the session. The
 * caller asked for it to be gone and it is, so the call succeeds, with no
 * deleted ids (which ones the lost attempt removed is not known). Every
 * other retried call is idempotent through the ids fixed before the first
 * attempt (idsInterceptor); a delete has no such id.
 */
function alreadyDeleted(req: UnaryRequest, ce: ConnectError): UnaryResponse | undefined {
  const isDelete =
    req.service.typeName === StoreService.typeName &&
    req.method.name === StoreService.method.deleteSession.name;
  if (ce.code !== Code.NotFound || !isDelete) return undefined;
  return {
    stream: false,
    service: req.service,
    method: req.method,
    header: new Headers(),
    trailer: new Headers(),
    message: create(req.method.output),
  };
}

/**
 * UNAVAILABLE, or a call cut off by the transport (the server died or reset
 * the connection mid-call: outcome unknown, like UNAVAILABLE). connect-node
 * reports a reset connection as ABORTED with the Node error as its cause, and
 * an HTTP/2 RST_STREAM CANCEL as CANCELED; a server-sent ABORTED (a
 * concurrency conflict) has no such cause and is never retried.
 */
function retryable(ce: ConnectError, signal: AbortSignal): boolean {
  if (ce.code === Code.Unavailable) return true;
  if (signal.aborted) return false;
  // HTTP/2 REFUSED_STREAM: the server did not process the stream (it was
  // going away); RFC 9113 §8.7 says such a request can be retried safely.
  if (ce.message.includes("NGHTTP2_REFUSED_STREAM")) return true;
  if (ce.code === Code.Canceled) return true;
  return ce.code === Code.Aborted && nodeErrorCodes(ce.cause).some((c) => DISCONNECTED.has(c));
}

/**
 * Retries unary calls that failed with UNAVAILABLE (server restarting,
 * shutting down, connection refused) or lost their connection mid-call,
 * with exponential backoff and jitter.
 * Safe because idsInterceptor has fixed every id before the first attempt,
 * and a retried DeleteSession that finds the session gone after an unknown
 * outcome succeeds (alreadyDeleted). An attempt whose outcome is unknown
 * is told to the ids layer (attempts.ts): a created=false after it is our
 * own lost attempt's session, not another caller's.
 * Streams are not retried here: watchEntriesResumable resumes them by seq.
 */
export function retryInterceptor(opts: RetryOptions = {}): Interceptor {
  const maxAttempts = opts.maxAttempts ?? 5;
  const base = opts.baseDelayMs ?? 50;
  const max = opts.maxDelayMs ?? 2000;
  return (next) => async (req) => {
    if (req.stream) return next(req);
    let unknown = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(req);
      } catch (err) {
        const ce = ConnectError.from(err);
        const gone = unknown ? alreadyDeleted(req, ce) : undefined;
        if (gone !== undefined) return gone;
        if (!retryable(ce, req.signal) || attempt >= maxAttempts || req.signal.aborted) throw err;
        if (!unknown && outcomeUnknown(ce)) {
          unknown = true;
          const told = req.contextValues.get(ATTEMPTS);
          if (told !== undefined) told.outcomeUnknown = true;
        }
        const delay = Math.min(max, base * 2 ** (attempt - 1));
        await sleep(delay / 2 + Math.random() * (delay / 2), req.signal);
      }
    }
  };
}
