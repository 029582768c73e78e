/**
 * `sessiond/web`: the client for browsers, over fetch (Connect or gRPC-Web).
 * Nothing reachable from here may import a Node module:
 * test/web/browser-bundle.test.ts checks it by bundling this entry for the
 * browser, and dependency-cruiser's `browser-safe` rule checks our imports.
 */
export * from "../../gen/sessiond/v1/entry_pb.js";
export * from "../../gen/sessiond/v1/session_pb.js";
export * from "../../gen/sessiond/v1/session_service_pb.js";
export * from "../../gen/sessiond/v1/store_service_pb.js";
export { readState, readTree } from "../client/read-pages.js";
export type { RetryOptions } from "../client/retry-interceptor.js";
export type { CommonClientOptions, SessiondClient } from "../client/sessiond-client.js";
export { type ResumableWatchOptions, watchEntriesResumable } from "../client/watch.js";
export { blobRefsOf, resolvedPart, SHA256_PATTERN } from "../core/blob-parts.js";
export { amountUnits, costProblem, formatUnits } from "../core/cost.js";
export { entryKind, entryPreview } from "../core/entry.js";
export * from "../core/entry-builders.js";
export { foldPath } from "../core/fold.js";
export * from "../core/message-text.js";
export { rollUpEntries, usageResponseOf } from "../core/usage-rollup.js";
export { NO_PRICES } from "../core/usage-sums.js";
export {
  createSessiondClient,
  type SessiondWebClientOptions,
  type WebProtocol,
} from "./client.js";
