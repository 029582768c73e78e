import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
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
  /** Counts the usage of the entries an append wrote (the usage metrics); unset: not counted. */
  readonly countUsage?: ((workspace: string, written: readonly Entry[]) => void) | undefined;
}
