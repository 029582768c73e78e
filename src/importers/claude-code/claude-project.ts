import { invalidArgument } from "../../core/errors.js";
import { readJsonl, str } from "../jsonl-records.js";
import type { MappedSession } from "../mapped-session.js";
import { agentTypesOf } from "./agent-types.js";
import { mapClaudeTranscript } from "./claude-transcript.js";
import { subagentId } from "./session-ids.js";

/** What one file of a Claude Code project directory holds, by its path. */
export type TranscriptFile =
  | { kind: "session"; sessionId: string }
  | { kind: "subagent"; agentId: string; parentSessionId: string | undefined };

const SESSION = /^([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.jsonl$/;
const AGENT = /^agent-([A-Za-z0-9_-]{1,64})\.jsonl$/;

/**
 * Classifies a path relative to the project directory: `<session>.jsonl`
 * is a session, `<session>/subagents/agent-<id>.jsonl` (Claude Code 2.1
 * and later) and `agent-<id>.jsonl` beside the sessions (earlier versions,
 * the parent named inside) are subagent transcripts. Anything else is not
 * a transcript (undefined).
 */
export function transcriptFileOf(relativePath: string): TranscriptFile | undefined {
  const parts = relativePath.split(/[\\/]/);
  const name = parts.at(-1) ?? "";
  const agent = AGENT.exec(name);
  if (agent !== null && parts.length === 3 && parts[1] === "subagents") {
    return { kind: "subagent", agentId: agent[1] as string, parentSessionId: parts[0] };
  }
  if (agent !== null && parts.length === 1) {
    return { kind: "subagent", agentId: agent[1] as string, parentSessionId: undefined };
  }
  const session = SESSION.exec(name);
  if (session !== null && parts.length === 1)
    return { kind: "session", sessionId: session[1] as string };
  return undefined;
}

/** What one transcript file gives: its sessions, and the agent types of the subagents it started. */
export interface MappedFile {
  sessions: MappedSession[];
  agentTypes: Map<string, string>;
}

/**
 * The sessions of one transcript file: a session file gives its session
 * and its inline sidechains (subagents); a subagent file gives the
 * subagent session `agent-<id>-<parent>`, whose parent is its folder's
 * session or, for the older layout, the sessionId its records carry, and
 * whose agent type is the one `agentTypes` (from the session files, mapped
 * first) knows for its id.
 */
export function mapClaudeFile(
  file: TranscriptFile,
  text: string,
  agentTypes: ReadonlyMap<string, string> = new Map(),
): MappedFile {
  if (file.kind === "session") {
    const { session, sidechains } = mapClaudeTranscript(text, { sessionId: file.sessionId });
    return {
      sessions: [session, ...sidechains],
      agentTypes: agentTypesOf(readJsonl(text).records),
    };
  }
  const parent = file.parentSessionId ?? recordedSessionId(text);
  if (parent === undefined) {
    throw invalidArgument(
      "a subagent transcript whose records name no session: its parent is unknown",
    );
  }
  const target = {
    sessionId: subagentId(parent, file.agentId),
    parentSessionId: parent,
    agentType: agentTypes.get(file.agentId),
  };
  return { sessions: [mapClaudeTranscript(text, target).session], agentTypes: new Map() };
}

function recordedSessionId(text: string): string | undefined {
  for (const r of readJsonl(text).records) {
    const id = str(r.value, "sessionId");
    if (id !== undefined) return id;
  }
  return undefined;
}
