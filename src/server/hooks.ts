import type { RouteHook } from "./server.js";

/** Services mounted next to ours on every server (health and reflection). */
export const serverHooks: readonly RouteHook[] = [];
