/** The JSONL storage engine: one append-only file per session (see README.md here). */
export type { FsOps } from "./fs-ops.js";
export { nodeFs } from "./fs-ops.js";
export { JsonlEngine, type JsonlEngineOptions } from "./jsonl-engine.js";
