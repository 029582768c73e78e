import * as path from "node:path";
import { invalidArgument } from "../../core/errors.js";
import { quote, SESSION_ID_PATTERN, WORKSPACE_PATTERN } from "../../core/ids.js";

/**
 * Directory layout of a data dir:
 *
 *   <dataDir>/<workspace>/sessions/<id>.jsonl             top-level sessions
 *   <dataDir>/<workspace>/sessions/subagents/<id>.jsonl   subagent sessions
 *
 * Ids reach this module already validated, but every path is built from
 * the allowlist patterns again and checked to stay inside the data dir
 * (defence in depth: a bug upstream must not become a path traversal).
 */

export const SESSION_EXT = ".jsonl";
export const SUBAGENT_DIR = "subagents";
const TEMP_PREFIX = ".tmp-";

/**
 * Checked directories by data dir, workspace and kind: a listing builds the
 * path of every session of a workspace, and resolving and checking the
 * same directory each time cost more than the rest of a warm listing.
 */
const checkedDirs = new Map<string, string>();
const MAX_CHECKED_DIRS = 4096;

/** Directory of a workspace's sessions (top-level or subagents). */
export function sessionsDir(dataDir: string, workspace: string, subagent = false): string {
  const key = `${dataDir}\0${workspace}\0${subagent}`;
  const known = checkedDirs.get(key);
  if (known !== undefined) return known;
  if (!WORKSPACE_PATTERN.test(workspace)) {
    throw invalidArgument(`invalid workspace ${quote(workspace)}`);
  }
  const dir = inside(
    dataDir,
    subagent
      ? path.join(dataDir, workspace, "sessions", SUBAGENT_DIR)
      : path.join(dataDir, workspace, "sessions"),
  );
  if (checkedDirs.size >= MAX_CHECKED_DIRS) checkedDirs.clear();
  checkedDirs.set(key, dir);
  return dir;
}

/** Path of a session file. */
export function sessionPath(
  dataDir: string,
  workspace: string,
  sessionId: string,
  subagent: boolean,
): string {
  if (!SESSION_ID_PATTERN.test(sessionId) || sessionId.includes(path.sep)) {
    throw invalidArgument(`invalid session id ${quote(sessionId)}`);
  }
  // One more component below a checked directory: no separator in it, and
  // the extension keeps it from being "." or "..", so it stays inside.
  return `${sessionsDir(dataDir, workspace, subagent)}${path.sep}${sessionId}${SESSION_EXT}`;
}

/** The session id of a directory entry, or undefined when the name is not a session file. */
export function sessionIdOf(fileName: string): string | undefined {
  if (!fileName.endsWith(SESSION_EXT)) return undefined;
  const id = fileName.slice(0, -SESSION_EXT.length);
  return SESSION_ID_PATTERN.test(id) ? id : undefined;
}

/** Name of the temp file a create writes before linking it into place. */
export function tempName(sessionId: string, random: string): string {
  return `${TEMP_PREFIX}${sessionId}-${random}`;
}

export function isTempName(fileName: string): boolean {
  return fileName.startsWith(TEMP_PREFIX);
}

/** Resolves `p` and refuses it unless it lies inside `dataDir`. */
export function inside(dataDir: string, p: string): string {
  const root = path.resolve(dataDir);
  const resolved = path.resolve(p);
  const rel = path.relative(root, resolved);
  if (rel === "" || rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
    throw invalidArgument(`path ${quote(p)} escapes the data directory`);
  }
  return resolved;
}
