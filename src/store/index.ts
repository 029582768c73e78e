/** The repository layer: SessionStore over any engine, the Session facade, and watching. */

export type { PriceTable } from "../core/usage-sums.js";
export type { AppendResult, EntryPage } from "../storage/engine.js";
export {
  type EngineStats,
  NO_OBSERVER,
  type StorageObserver,
  tracingEnabled,
} from "../storage/observer.js";
export type { BlobStore } from "./blobs.js";
export { DEFAULT_LIMITS, type StoreLimits } from "./limits.js";
export { metaOf } from "./meta.js";
export type { PageRequest } from "./page-fill.js";
export { expireSessions } from "./retention.js";
export {
  type AppendOptions,
  type EntryInput,
  type RedactOptions,
  type RedactResult,
  Session,
  type SessionTree,
  type StateOptions,
  type StatePage,
  type StatePageRequest,
  type TreePage,
} from "./session.js";
export type { ListInput } from "./session-listing.js";
export {
  type CreateSessionInput,
  type ForkInput,
  SessionStore,
  type StoreOptions,
} from "./session-store.js";
export { sessionUsage, type UsageOptions } from "./usage.js";
export { checkUsageQuery, type UsageQuery, usageReport } from "./usage-report.js";
export {
  DEFAULT_HEARTBEAT_MS,
  type EntrySink,
  type EntryWatchEvent,
  type EntryWatchOptions,
  type SessionChange,
  type SessionWatchEvent,
  type SessionWatchOptions,
  StoreWatch,
  type WatchedStore,
} from "./watch/index.js";
export type { WorkspaceListInput, WorkspaceListPage } from "./workspace-listing.js";
