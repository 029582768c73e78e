import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import {
  type CommonClientOptions,
  clientInterceptors,
  clientsOver,
  type SessiondClient,
} from "./sessiond-client.js";

export type { SessiondClient } from "./sessiond-client.js";

export type Protocol = "grpc" | "connect" | "grpc-web";

/** The server's default `--max-message-bytes`. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export interface SessiondClientOptions extends CommonClientOptions {
  /** e.g. http://127.0.0.1:50051 (h2c) or https://host:port (TLS). */
  baseUrl: string;
  /** Wire protocol (default "grpc"). */
  protocol?: Protocol;
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
}

/**
 * Typed clients for both services over one HTTP/2 connection (Node). Ids
 * left empty are assigned here (so retries are idempotent) and UNAVAILABLE
 * is retried with backoff.
 */
export function createSessiondClient(opts: SessiondClientOptions): SessiondClient {
  const common = {
    baseUrl: opts.baseUrl,
    httpVersion: "2" as const,
    interceptors: clientInterceptors(opts),
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
  return clientsOver(base, opts.timeoutMs);
}
