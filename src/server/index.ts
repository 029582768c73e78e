/** The network layer: Connect services over the store, auth, limits, watch streams. */
export { parseTokensFile } from "./auth.js";
export type { ServerConfig, ServerLimits, TlsConfig, TokenGrant } from "./config.js";
export * from "./defaults.js";
export { type RunningServer, startServer } from "./server.js";
