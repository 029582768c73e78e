/**
 * `sessiond/openai-agents`: a sessiond session as the conversation memory
 * of the OpenAI Agents SDK (`@openai/agents-core`, an optional peer
 * dependency: only its types are imported here).
 */
export { NAMESPACE } from "./item-entry.js";
export { SessiondSession, type SessiondSessionOptions } from "./sessiond-session.js";
