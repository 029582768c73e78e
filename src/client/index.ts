/** The TypeScript client of sessiond. */
export {
  createSessiondClient,
  DEFAULT_MAX_MESSAGE_BYTES,
  type Protocol,
  type SessiondClient,
  type SessiondClientOptions,
} from "./client.js";
export { readState, readTree } from "./read-pages.js";
export type { RetryOptions } from "./retry-interceptor.js";
export { type ResumableWatchOptions, watchEntriesResumable } from "./watch.js";
