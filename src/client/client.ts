import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./blob-transport.js";
import { clientSessionOptions, SessionManager } from "./session-manager.js";
import {
  type CommonClientOptions,
  clientInterceptors,
  clientsOver,
  type SessiondClient,
} from "./sessiond-client.js";

export type { SessiondClient } from "./sessiond-client.js";

export type Protocol = "grpc" | "connect" | "grpc-web";

export { DEFAULT_MAX_MESSAGE_BYTES } from "./blob-transport.js";

export interface SessiondClientOptions extends CommonClientOptions {
  /** e.g. http://127.0.0.1:50051 (h2c) or https://host:port (TLS). */
  baseUrl: string;
  /** Wire protocol (default "grpc"). */
  protocol?: Protocol;
  /**
   * Largest request message sent (default 4 MiB, the server's default
   * `--max-message-bytes`); a larger one fails here with RESOURCE_EXHAUSTED
   * without being sent. Set it to the server's limit: an oversize message
   * sent anyway is uploaded whole only to be refused by the server, and
   * where the server stops reading it, Node keeps counting its unsent rest
   * against the connection (see the README, Limits).
   */
  maxMessageBytes?: number;
  /** TLS: CA to trust, and a client certificate for mTLS. */
  tls?: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer };
  /**
   * HTTP/2 keepalive while a call is open (default on: see KeepaliveOptions);
   * `false` turns it off.
   */
  keepalive?: KeepaliveOptions | false;
}

/**
 * A connection that dies without a word (the server's host lost power, a
 * NAT or proxy dropped it, a network partition) sends no FIN and no RST: a
 * call on it, a watch above all, would wait forever. So while a call is
 * open and nothing has arrived for `intervalMs`, the client sends an HTTP/2
 * PING; no answer within `timeoutMs` closes the connection and fails its
 * calls with UNAVAILABLE, which the retry of unary calls and
 * watchEntriesResumable both take up on a new connection. A dead connection
 * is thus found within intervalMs + timeoutMs of silence. A watch's
 * heartbeats are traffic, so a healthy watch sends no PING at all; an idle
 * connection (no open call) is never pinged.
 */
export interface KeepaliveOptions {
  /** Silence on a connection with open calls before a PING, ms (default 20,000). */
  intervalMs?: number;
  /** How long the PING may go unanswered, ms (default 10,000). */
  timeoutMs?: number;
}

/** The keepalive a client uses when not told otherwise. */
export const DEFAULT_KEEPALIVE: Required<KeepaliveOptions> = {
  intervalMs: 20_000,
  timeoutMs: 10_000,
};

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
    sessionManager: new SessionManager(
      opts.baseUrl,
      pingOptions(opts.keepalive),
      clientSessionOptions(opts.tls),
    ),
  };
  const protocol = opts.protocol ?? "grpc";
  const base =
    protocol === "grpc"
      ? createGrpcTransport(common)
      : protocol === "connect"
        ? createConnectTransport(common)
        : createGrpcWebTransport(common);
  return clientsOver(base, opts);
}

/** connect-node's ping options (its default is no PING at all). */
function pingOptions(k: KeepaliveOptions | false | undefined) {
  if (k === false) return {};
  return {
    pingIntervalMs: k?.intervalMs ?? DEFAULT_KEEPALIVE.intervalMs,
    pingTimeoutMs: k?.timeoutMs ?? DEFAULT_KEEPALIVE.timeoutMs,
  };
}
