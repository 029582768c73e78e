/**
 * Watching a store: what "miss nothing, see nothing twice" means, in one
 * place for every transport and for embedded callers. Subscribe first, then
 * replay from the log by seq, then follow wake-ups (events carry no data:
 * every entry is read back from the log), with heartbeats; a deleted
 * session ends its watch with NOT_FOUND.
 */
export type { EntrySink } from "./entry-follower.js";
export {
  DEFAULT_HEARTBEAT_MS,
  StoreWatch,
  type WatchedStore,
} from "./store-watch.js";
export type { EntryWatchEvent, EntryWatchOptions } from "./watch-entries.js";
export type { SessionChange, SessionWatchEvent, SessionWatchOptions } from "./watch-sessions.js";
