import { DEFAULT_LIMITS } from "../store/index.js";
import type { GrpcServerKind, ServerLimits } from "./config.js";

/** Safe defaults for every server limit (each has a flag). */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  ...DEFAULT_LIMITS,
  maxMessageBytes: 4 * 1024 * 1024,
  maxWatchersPerSession: 1000,
  maxWatchersTotal: 10_000,
  maxConcurrentStreams: 1000,
  maxDeadlineMs: 0,
};

/** Watch heartbeats: the store's default is the server's (flag --heartbeat-ms). */
export { DEFAULT_HEARTBEAT_MS } from "../store/index.js";
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
/** PING connections with open streams every 30 s; 10 s without an answer closes one (keepalive.ts). */
export const DEFAULT_KEEPALIVE_MS = 30_000;
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 10_000;
/** Connections live for ever unless --max-connection-age-ms says otherwise (connection-age.ts). */
export const DEFAULT_MAX_CONNECTION_AGE_MS = 0;
export const DEFAULT_MAX_CONNECTION_AGE_GRACE_MS = 30_000;
export const DEFAULT_LISTEN = "127.0.0.1:50051";
export const DEFAULT_DATA_DIR = "./.sessiond";
/** Native gRPC is served by @grpc/grpc-js unless `--grpc-server connect` asks otherwise. */
export const DEFAULT_GRPC_SERVER: GrpcServerKind = "grpc-js";
