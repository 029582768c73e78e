/**
 * sessiond as a library: open a store on a directory (JSONL files) or in
 * memory and use it in-process, with no server. The generated protobuf types
 * are re-exported so callers build entries with `create(EntrySchema, …)`.
 */

import { type EncryptionOptions, JsonlEngine } from "./storage/jsonl/index.js";
import { MemoryEngine } from "./storage/memory.js";
import { SessionStore, type StoreOptions } from "./store/session-store.js";

export * from "../gen/sessiond/v1/entry_pb.js";
export * from "../gen/sessiond/v1/session_pb.js";
export * from "../gen/sessiond/v1/store_service_pb.js";
export { blobRefsOf, resolvedPart, SHA256_PATTERN } from "./core/blob-parts.js";
export * from "./core/entry-builders.js";
export {
  type ErrorCode,
  isSessiondError,
  SessiondError,
} from "./core/errors.js";
export { BRANCH_SUMMARY_PREFIX, COMPACTION_PREFIX, foldPath } from "./core/fold.js";
export { shortId } from "./core/ids.js";
export * from "./core/message-text.js";
export { type PriceTable, parsePriceTable } from "./core/usage-sums.js";
export type { StorageEngine } from "./storage/engine.js";
export { type EncryptionOptions, JsonlEngine } from "./storage/jsonl/index.js";
export {
  type AeadImplementation,
  aeadImplementation,
  type KeyContext,
  type KeyProvider,
  LocalKeyring,
  type WrappedKey,
} from "./storage/keys/index.js";
export { MemoryEngine } from "./storage/memory.js";
export * from "./store/index.js";

export type OpenStoreOptions = StoreOptions &
  (
    | {
        dataDir: string;
        memory?: undefined;
        /**
         * Encryption at rest: the new sessions of these workspaces are sealed
         * under data keys wrapped by `keys` (e.g. `await LocalKeyring.open(file)`).
         */
        encryption?: EncryptionOptions | undefined;
      }
    | { memory: true; dataDir?: undefined; encryption?: undefined }
  );

/**
 * Opens a SessionStore: `{ dataDir }` for durable JSONL files (the embedded
 * default), `{ memory: true }` for an ephemeral store. Close it when done so
 * that leases on session files are released.
 */
export function openStore(options: OpenStoreOptions): SessionStore {
  const engine = options.memory
    ? new MemoryEngine()
    : new JsonlEngine({ dataDir: options.dataDir, encryption: options.encryption });
  return new SessionStore(engine, options);
}
