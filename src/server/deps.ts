import type { SessionStore } from "../store/session-store.js";
import type { ServerConfig } from "./config.js";
import type { EventHub } from "./event-hub.js";
import type { HealthStatus } from "./health.js";
import type { SessionFeed } from "./session-feed.js";
import type { WatchSlots } from "./watch-slots.js";

/** What the service implementations share; built once by the server. */
export interface ServiceDeps {
  readonly store: SessionStore;
  readonly hub: EventHub;
  readonly feed: SessionFeed;
  readonly slots: WatchSlots;
  readonly health: HealthStatus;
  readonly config: ServerConfig;
}
