/**
 * The TypeScript client of sessiond (Node). The generated messages and
 * enums (Role, View, the schemas) are re-exported, as `sessiond/web` does,
 * so a caller builds requests from this one import.
 */

export * from "../../gen/sessiond/v1/entry_pb.js";
export * from "../../gen/sessiond/v1/session_pb.js";
export * from "../../gen/sessiond/v1/session_service_pb.js";
export * from "../../gen/sessiond/v1/store_service_pb.js";
export { blobRefsOf, resolvedPart, SHA256_PATTERN } from "../core/blob-parts.js";
export * from "../core/entry-builders.js";
export * from "../core/message-text.js";
export {
  createSessiondClient,
  DEFAULT_KEEPALIVE,
  DEFAULT_MAX_MESSAGE_BYTES,
  type KeepaliveOptions,
  type Protocol,
  type SessiondClientOptions,
} from "./client.js";
export { readState, readTree } from "./read-pages.js";
export { type RequestTooLarge, requestTooLarge } from "./request-limit.js";
export type { RetryOptions } from "./retry-interceptor.js";
export type { CommonClientOptions, SessiondClient } from "./sessiond-client.js";
export { type ResumableWatchOptions, watchEntriesResumable } from "./watch.js";
