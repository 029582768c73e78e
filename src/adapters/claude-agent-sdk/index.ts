/**
 * `sessiond/claude-agent-sdk`: sessiond as the `SessionStore` of the Claude
 * Agent SDK (`@anthropic-ai/claude-agent-sdk`, an optional peer dependency:
 * its types are imported here, and its `foldSessionSummary` on first use,
 * so this module loads without it).
 */
export { PROJECT_TAG, SESSION_TAG, SUBAGENT_TYPE, SUBPATH_TAG } from "./session-keys.js";
export {
  SessiondSessionStore,
  type SessiondSessionStoreOptions,
} from "./sessiond-session-store.js";
export { NAMESPACE } from "./transcript-entry.js";
