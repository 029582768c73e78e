import { createHash } from "node:crypto";
import { SESSION_ID_PATTERN } from "../../core/ids.js";

/**
 * The session ids of the subagent sessions an import makes, readable where
 * Claude Code's names allow (`agent-<id>-<session>`, `sc-<first 8 of the
 * first uuid>-<session>`) and a hash where they would make no valid id (too
 * long, characters an id may not hold) or two would collide, so that every
 * mapped session imports and re-importing the same files gives the same ids.
 * The subagent's own part comes first: an id that began with its session's
 * would make every prefix of the session's id (`sessiond show 5a1c9e3e`)
 * ambiguous with its subagents.
 */

function sha256(text: string, chars: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, chars);
}

/** `readable` when it is a valid session id, else `<kind>-<32 hex of key>`. */
function validOr(readable: string, kind: string, key: string): string {
  return SESSION_ID_PATTERN.test(readable) ? readable : `${kind}-${sha256(key, 32)}`;
}

/** The session of a subagent transcript (`agent-<id>.jsonl`) of session `parent`. */
export function subagentId(parent: string, agentId: string): string {
  return validOr(`agent-${agentId}-${parent}`, "agent", `${parent}/${agentId}`);
}

/**
 * The session of an inline sidechain whose first record is `root`;
 * `prefixes`: the first 8 characters of every sidechain root of the file.
 */
export function sidechainId(sessionId: string, root: string, prefixes: readonly string[]): string {
  const prefix = root.slice(0, 8);
  const unique = prefixes.indexOf(prefix) === prefixes.lastIndexOf(prefix);
  const readable = `sc-${prefix}-${sessionId}`;
  if (unique && SESSION_ID_PATTERN.test(readable)) return readable;
  return validOr(`sc-${sha256(root, 16)}-${sessionId}`, "sc", `${sessionId}/${root}`);
}
