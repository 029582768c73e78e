/** The JSONL storage engine: one append-only file per session (see README.md here). */

/** What `sessiond fsck` needs: the data dir check and the read-only scan of its files, judged by the engine's own reader. */
export { checkDataDir, type DataDirNeed } from "./data-dir.js";
export type { FsOps } from "./fs-ops.js";
export { nodeFs } from "./fs-ops.js";
export {
  type BlobProblem,
  type BlobUse,
  checkBlobs,
  checkFile,
  type FileReport,
  type FileStatus,
  findSessionFiles,
  type SessionFile,
} from "./fsck-scan.js";
export { JsonlEngine, type JsonlEngineOptions } from "./jsonl-engine.js";
export {
  rewrapBlobs,
  type SealOptions,
  type SealOutcome,
  sealBlobs,
  sealSession,
  sealSessions,
} from "./seal-sessions.js";
export type { EncryptionOptions } from "./session-keys.js";
