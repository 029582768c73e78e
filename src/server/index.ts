/** The network layer: Connect services over the store, auth, limits, watch streams. */

import type { ServerConfig } from "./config.js";
import {
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_SERVER_LIMITS,
  DEFAULT_SHUTDOWN_GRACE_MS,
} from "./defaults.js";

export type { ServerConfig, ServerLimits, TlsConfig, TokenGrant } from "./config.js";
export * from "./defaults.js";
export { LOG_LEVELS, type LogLevel } from "./ops/logger.js";
export { ServerMetrics } from "./ops/metrics.js";
export type { RetentionConfig } from "./ops/retention-sweeper.js";
export {
  capYoungGeneration,
  SERVE_BUSY_LOAD,
  SERVE_SEMI_SPACE_MB,
} from "./ops/young-generation.js";
export { parseTokensFile } from "./rpc/auth.js";
export { type RunningServer, startServer } from "./server.js";

/**
 * A ServerConfig with the defaults `sessiond serve` uses (127.0.0.1:50051, no
 * tokens, every limit at its default), overridden by `overrides`: for starting
 * the server in-process, e.g. `startServer(store, serverConfig({ port: 0 }))`.
 */
export function serverConfig(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    host: "127.0.0.1",
    port: 50051,
    tokens: [],
    insecure: false,
    compression: false,
    limits: DEFAULT_SERVER_LIMITS,
    heartbeatMs: DEFAULT_HEARTBEAT_MS,
    idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
    shutdownGraceMs: DEFAULT_SHUTDOWN_GRACE_MS,
    ...overrides,
  };
}
