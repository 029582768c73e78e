import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { type BlobOptions, blobTransport } from "./blob-transport.js";
import { idsInterceptor } from "./ids-interceptor.js";
import { requestLimitInterceptor } from "./request-limit.js";
import { type RetryOptions, retryInterceptor } from "./retry-interceptor.js";
import { traceInterceptor } from "./trace-interceptor.js";

/**
 * What a sessiond client is, whatever carries it: the Node transports
 * (`sessiond/client`) and the browser's fetch (`sessiond/web`) build the
 * same pair of typed clients with the same interceptors here. Nothing in
 * this file may need Node: the browser build imports it.
 */
export interface SessiondClient {
  readonly store: Client<typeof StoreService>;
  readonly session: Client<typeof SessionService>;
  readonly transport: Transport;
}

/** Options every client has, over any transport. */
export interface CommonClientOptions extends BlobOptions {
  /** Bearer token, when the server requires one. */
  token?: string;
  /** Retry of UNAVAILABLE unary calls; `false` turns it off. */
  retry?: RetryOptions | false;
  /** Default deadline of unary calls, ms (watch streams are not cut by it). */
  timeoutMs?: number;
  /** Extra interceptors (run inside ids and retry). */
  interceptors?: Interceptor[];
}

function bearer(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

/**
 * The refusal of an oversize request outermost (it rewrites the message
 * every caller sees), ids next (so every retry carries the same ids and the
 * server de-duplicates it), the caller's trace context, then retry, then the
 * token and the caller's own.
 */
export function clientInterceptors(opts: CommonClientOptions): Interceptor[] {
  const interceptors: Interceptor[] = [
    requestLimitInterceptor(),
    idsInterceptor(),
    traceInterceptor(),
  ];
  if (opts.retry !== false) interceptors.push(retryInterceptor(opts.retry || {}));
  if (opts.token !== undefined) interceptors.push(bearer(opts.token));
  interceptors.push(...(opts.interceptors ?? []));
  return interceptors;
}

/** Typed clients for both services over one transport. */
export function clientsOver(base: Transport, opts: CommonClientOptions): SessiondClient {
  const transport = blobTransport(unaryDeadline(base, opts.timeoutMs), opts);
  return {
    store: createClient(StoreService, transport),
    session: createClient(SessionService, transport),
    transport,
  };
}

/**
 * Applies a default deadline to unary calls only. connect's
 * `defaultTimeoutMs` would also end every watch stream after that time
 * (DEADLINE_EXCEEDED), which is never what a watcher wants. A deadline
 * given on a call still wins.
 */
function unaryDeadline(base: Transport, timeoutMs: number | undefined): Transport {
  if (timeoutMs === undefined) return base;
  return {
    unary: (method, signal, callTimeoutMs, header, input, contextValues) =>
      base.unary(method, signal, callTimeoutMs ?? timeoutMs, header, input, contextValues),
    stream: (method, signal, callTimeoutMs, header, input, contextValues) =>
      base.stream(method, signal, callTimeoutMs, header, input, contextValues),
  };
}
