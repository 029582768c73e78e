/**
 * `sessiond/google-adk`: a sessiond server as the session service of
 * Google's ADK for JS (`@google/adk`, an optional peer dependency: the
 * service extends its BaseSessionService, so this module loads only
 * where it is installed).
 */
export { ENVELOPE_KEY, EVENT_NAMESPACE } from "./event-entry.js";
export { APP_TAG, KIND_TAG, STATE_NAMESPACE, USER_TAG } from "./scoped-state.js";
export {
  SessiondSessionService,
  type SessiondSessionServiceOptions,
  StaleSessionError,
} from "./sessiond-session-service.js";
