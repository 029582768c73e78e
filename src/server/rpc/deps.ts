import type { SessionStore } from "../../store/index.js";
import type { ServerConfig } from "../config.js";
import type { HealthStatus } from "./health.js";
import type { WatchSlots } from "./watch-slots.js";

/** What the service implementations share; built once by the server. */
export interface ServiceDeps {
  readonly store: SessionStore;
  readonly slots: WatchSlots;
  readonly health: HealthStatus;
  readonly config: ServerConfig;
}
