/** The repository layer: SessionStore over any engine, and the Session facade. */
export { DEFAULT_LIMITS, type StoreLimits } from "./limits.js";
export { metaOf } from "./meta.js";
export type { PageRequest } from "./page-fill.js";
export {
  type AppendOptions,
  type EntryInput,
  Session,
  type SessionTree,
  type StateOptions,
  type StatePage,
  type StatePageRequest,
  type TreePage,
} from "./session.js";
export {
  type CreateSessionInput,
  type ForkInput,
  type ListInput,
  SessionStore,
  type StoreOptions,
} from "./session-store.js";
