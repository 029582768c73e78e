/**
 * `sessiond/langgraph`: a sessiond server as LangGraph's checkpointer
 * (`@langchain/langgraph-checkpoint`, an optional peer dependency: the
 * saver extends its BaseCheckpointSaver, so this module loads only where
 * it is installed).
 */
export { SessiondSaver, type SessiondSaverOptions } from "./sessiond-saver.js";
export { CHECKPOINT_NAMESPACE, WRITES_NAMESPACE } from "./thread-entries.js";
export {
  CheckpointConflictError,
  KIND_TAG,
  THREAD_TAG,
  threadSessionId,
} from "./thread-session.js";
