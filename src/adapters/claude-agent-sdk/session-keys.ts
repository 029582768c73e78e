import { createHash } from "node:crypto";
import type { SessionKey } from "@anthropic-ai/claude-agent-sdk";
import { SESSION_ID_PATTERN } from "../../core/ids.js";

/**
 * Where a SessionStore key lives in sessiond. The session id is the
 * sessiond session id (Claude's ids are UUIDs, valid sessiond ids: `sessiond
 * show <id>` finds a Claude session by its own id), a subpath a subagent
 * session of it, and the project key a tag: project keys are sanitised
 * paths of up to ~210 characters, often starting with "-", which no
 * workspace name may be, and the workspace stays what it is everywhere
 * else in sessiond: the tenant and token boundary the operator chooses.
 */

/** Tag holding the key's project key (on the main session and its subagent sessions). */
export const PROJECT_TAG = "claude.project";
/** Tag holding the key's session id, as the SDK gave it. */
export const SESSION_TAG = "claude.session";
/** Tag holding a subagent session's subpath. */
export const SUBPATH_TAG = "claude.subpath";
/** The agent type of the subagent sessions of subpaths. */
export const SUBAGENT_TYPE = "claude-subagent";

function hash(text: string, chars: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, chars);
}

/** The sessiond id of a key's main session: the SDK's id when it is a valid one. */
export function mainSessionId(sessionId: string): string {
  return SESSION_ID_PATTERN.test(sessionId) ? sessionId : `claude-${hash(sessionId, 32)}`;
}

/**
 * The sessiond id of a key's session: the main one, or for a subpath a
 * subagent session `sub-<hash of the subpath>-<main>`. The subpath's part
 * comes first: an id that began with the main session's would make every
 * prefix of the main id (`sessiond show 5a1c9e3e`) ambiguous with its
 * subagents.
 */
export function sessionIdOf(key: SessionKey): string {
  const main = mainSessionId(key.sessionId);
  if (key.subpath === undefined) return main;
  const readable = `sub-${hash(key.subpath, 16)}-${main}`;
  return SESSION_ID_PATTERN.test(readable) ? readable : `sub-${hash(`${main}/${key.subpath}`, 32)}`;
}

/**
 * The id stores before `sessionIdOf`'s gave a subpath's session
 * (`<main>-<hash>`): such sessions are read and appended to where they are.
 * Undefined for a main key.
 */
export function legacySessionIdOf(key: SessionKey): string | undefined {
  if (key.subpath === undefined) return undefined;
  const main = mainSessionId(key.sessionId);
  const readable = `${main}-${hash(key.subpath, 16)}`;
  return SESSION_ID_PATTERN.test(readable)
    ? readable
    : `claude-${hash(`${main}/${key.subpath}`, 32)}`;
}

/** The tags a key's session is created with. */
export function tagsOf(key: SessionKey): Record<string, string> {
  const tags: Record<string, string> = {
    [PROJECT_TAG]: key.projectKey,
    [SESSION_TAG]: key.sessionId,
  };
  if (key.subpath !== undefined) tags[SUBPATH_TAG] = key.subpath;
  return tags;
}

/** A string naming a key, for the store's per-key maps. */
export function keyName(key: SessionKey): string {
  return JSON.stringify([key.projectKey, key.sessionId, key.subpath ?? null]);
}
