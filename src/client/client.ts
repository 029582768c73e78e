import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { idsInterceptor } from "./ids-interceptor.js";
import { type RetryOptions, retryInterceptor } from "./retry-interceptor.js";

export type Protocol = "grpc" | "connect" | "grpc-web";

/** The server's default `--max-message-bytes`. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export interface SessiondClientOptions {
  /** e.g. http://127.0.0.1:50051 (h2c) or https://host:port (TLS). */
  baseUrl: string;
  /** Wire protocol (default "grpc"). */
  protocol?: Protocol;
  /** Bearer token, when the server requires one. */
  token?: string;
  /** Retry of UNAVAILABLE unary calls; `false` turns it off. */
  retry?: RetryOptions | false;
  /** Default deadline of unary calls, ms. */
  timeoutMs?: number;
  /**
   * Largest request message sent (default 4 MiB, the server's default
   * `--max-message-bytes`); a larger one fails here with RESOURCE_EXHAUSTED
   * without being sent. Set it to the server's limit: an oversize message
   * sent anyway is refused by the server, but connect-node keeps the rest
   * of its upload pending, and ~90 of those wedge the connection (see the
   * README, Limits).
   */
  maxMessageBytes?: number;
  /** TLS: CA to trust, and a client certificate for mTLS. */
  tls?: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer };
  /** Extra interceptors (run inside ids and retry). */
  interceptors?: Interceptor[];
}

export interface SessiondClient {
  readonly store: Client<typeof StoreService>;
  readonly session: Client<typeof SessionService>;
  readonly transport: Transport;
}

function bearer(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

/**
 * Typed clients for both services over one HTTP/2 connection. Ids left empty
 * are assigned here (so retries are idempotent) and UNAVAILABLE is retried
 * with backoff.
 */
export function createSessiondClient(opts: SessiondClientOptions): SessiondClient {
  const interceptors: Interceptor[] = [idsInterceptor()];
  if (opts.retry !== false) interceptors.push(retryInterceptor(opts.retry || {}));
  if (opts.token !== undefined) interceptors.push(bearer(opts.token));
  interceptors.push(...(opts.interceptors ?? []));
  const common = {
    baseUrl: opts.baseUrl,
    httpVersion: "2" as const,
    interceptors,
    nodeOptions: opts.tls,
    writeMaxBytes: opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
  };
  const protocol = opts.protocol ?? "grpc";
  const base =
    protocol === "grpc"
      ? createGrpcTransport(common)
      : protocol === "connect"
        ? createConnectTransport(common)
        : createGrpcWebTransport(common);
  const transport = unaryDeadline(base, opts.timeoutMs);
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
