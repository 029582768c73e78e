import type { PriceTable, StoreLimits } from "../store/index.js";
import type { LogLevel } from "./ops/logger.js";
import type { ServerMetrics } from "./ops/metrics.js";
import type { RetentionConfig } from "./ops/retention-sweeper.js";

/** Limits of the network layer (the store's own limits are in StoreLimits). */
export interface ServerLimits extends StoreLimits {
  /** Largest request or response message, bytes. */
  maxMessageBytes: number;
  /** WatchEntries streams per session. */
  maxWatchersPerSession: number;
  /** Watch streams (WatchEntries + WatchSessions) in total. */
  maxWatchersTotal: number;
  /** HTTP/2 concurrent streams per connection. */
  maxConcurrentStreams: number;
  /** Largest deadline a client may ask for, ms (0 = no limit). */
  maxDeadlineMs: number;
}

/** A bearer token and the workspaces it may use ("*" = all). */
export interface TokenGrant {
  readonly token: string;
  readonly workspaces: readonly string[];
}

/**
 * Which server answers native gRPC (application/grpc, application/grpc+proto):
 * @grpc/grpc-js (the default, several times cheaper per call), or
 * connect-node, which serves Connect and gRPC-Web either way.
 */
export type GrpcServerKind = "grpc-js" | "connect";

/** TLS material, read from files at the edge (CLI). */
export interface TlsConfig {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** When set, clients must present a certificate signed by this CA (mTLS). */
  readonly clientCa?: Buffer | undefined;
}

/**
 * Everything the server needs, read once at the edge (CLI flags) and passed
 * down; nothing deeper reads process.env.
 */
export interface ServerConfig {
  /** Host to bind, e.g. 127.0.0.1. */
  readonly host: string;
  /** Port; 0 picks a free one. */
  readonly port: number;
  /** Bearer tokens; empty = no authentication (loopback only unless insecure). */
  readonly tokens: readonly TokenGrant[];
  /** Allow binding a non-loopback address without tokens. */
  readonly insecure: boolean;
  readonly tls?: TlsConfig | undefined;
  readonly limits: ServerLimits;
  /**
   * Compress responses (gzip / br) for clients that accept it. Off by
   * default: on loopback and LANs, compressing a large GetState costs more
   * CPU and latency than the bytes it saves.
   */
  readonly compression: boolean;
  /** Interval of watch heartbeats, ms. */
  readonly heartbeatMs: number;
  /**
   * A connection with no open stream and no traffic for this long is closed,
   * ms (0 = never): it cuts peers that connect and go silent, never a watch.
   */
  readonly idleTimeoutMs: number;
  /**
   * On the cleartext port, a new connection silent this long is taken for
   * HTTP/2 and gets the server's SETTINGS first, ms (0 = wait for the
   * client's first bytes, the default): see plaintext-port.ts.
   */
  readonly h2cSpeakFirstMs?: number | undefined;
  /**
   * A connection with open streams is PINGed this often, ms (0 = never), and
   * closed when the PING goes unanswered for `keepaliveTimeoutMs`: a client
   * that died without closing frees its watcher slots (keepalive.ts).
   * Default DEFAULT_KEEPALIVE_MS.
   */
  readonly keepaliveMs?: number | undefined;
  /** See keepaliveMs; default DEFAULT_KEEPALIVE_TIMEOUT_MS. */
  readonly keepaliveTimeoutMs?: number | undefined;
  /**
   * A connection this old is sent GOAWAY (new calls go to a new connection,
   * through the load balancer), ms; 0 (the default) = never. Its open
   * streams are cut `maxConnectionAgeGraceMs` later (connection-age.ts).
   */
  readonly maxConnectionAgeMs?: number | undefined;
  /** See maxConnectionAgeMs; default DEFAULT_MAX_CONNECTION_AGE_GRACE_MS. */
  readonly maxConnectionAgeGraceMs?: number | undefined;
  /** How long shutdown waits for in-flight calls before closing connections, ms. */
  readonly shutdownGraceMs: number;
  /** Which server answers native gRPC; default DEFAULT_GRPC_SERVER (grpc-js). */
  readonly grpcServer?: GrpcServerKind | undefined;
  /**
   * Append answered by a path of its own: over native gRPC on its stream by
   * the front itself (grpc/direct-append.ts), not through grpc-js's call
   * objects and the interceptor chain; over Connect (binary, uncompressed)
   * before connect-node (http/connect-append.ts). The same answers; default
   * true. false serves it like every other method: for comparisons (tests,
   * benchmarks).
   */
  readonly directAppend?: boolean | undefined;
  /** Retention policies swept in the background (none when unset). */
  readonly retention?: RetentionConfig | undefined;
  /** The built web viewer (dist/ui), served at /ui/; unset: no viewer. */
  readonly uiDir?: string | undefined;
  /** Where request logs go (one JSON line each); default stderr. */
  readonly log?: ((line: string) => void) | undefined;
  /** Lines below this level are not written; default "info" (every request). */
  readonly logLevel?: LogLevel | undefined;
  /**
   * The metrics served on /metrics; pass the same object's `storage` to the
   * engine for its metrics. Default: a new ServerMetrics without engine
   * or process metrics (an embedding process has its own); false: no
   * metrics at all (/metrics answers 404).
   */
  readonly metrics?: ServerMetrics | false | undefined;
  /**
   * Bearer token /metrics requires. Without it /metrics is open on a server
   * without API tokens and refused (403) on one with them.
   */
  readonly metricsToken?: string | undefined;
  /**
   * On shutdown, how long the server keeps accepting after /readyz turned
   * 503, ms (default 0): long enough for the load balancer to see it (a few
   * readiness periods) and stop sending new calls before the port closes.
   */
  readonly drainDelayMs?: number | undefined;
  /**
   * The operator's price table (serve --prices): GetUsage prices the
   * messages without a caller-set cost from it, and the cost counters count
   * them. Unset: those messages are unpriced.
   */
  readonly prices?: PriceTable | undefined;
}
