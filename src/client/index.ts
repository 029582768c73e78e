/** The TypeScript client of sessiond. */
export {
  createSessiondClient,
  type Protocol,
  type SessiondClient,
  type SessiondClientOptions,
} from "./client.js";
export { readState, readTree } from "./read-pages.js";
export type { RetryOptions } from "./retry-interceptor.js";
export { type ResumableWatchOptions, watchEntriesResumable } from "./watch.js";
