import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";

/**
 * Claude Code transcript lines as the SDK hands them to a SessionStore
 * (the on-disk JSONL format: user / assistant lines chained by parentUuid,
 * one content block per assistant line, tool results as user lines, title
 * lines, a compact boundary followed by its summary, lines without uuid).
 */

let counter = 0;
/** A fresh UUID-shaped id, distinct within the test run. */
export function uuid(): string {
  counter++;
  return `00000000-0000-4000-8000-${counter.toString(16).padStart(12, "0")}`;
}

function base(sessionId: string, parentUuid: string | null) {
  return {
    uuid: uuid(),
    parentUuid,
    sessionId,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, counter)).toISOString(),
    cwd: "/work/proj",
    isSidechain: false,
    userType: "external",
    version: "2.1.0",
    gitBranch: "main",
  };
}

/** A conversation: prompt, thinking, a tool use and its result, an answer, titles, a compaction. */
export function transcript(sessionId: string): SessionStoreEntry[] {
  const lines: SessionStoreEntry[] = [];
  const add = (line: Record<string, unknown>) => {
    lines.push(line as SessionStoreEntry);
    return line.uuid as string;
  };
  const u1 = add({
    ...base(sessionId, null),
    type: "user",
    message: { role: "user", content: "List the files." },
  });
  const assistant = (parent: string, block: unknown) => ({
    ...base(sessionId, parent),
    type: "assistant",
    requestId: "req_1",
    message: {
      id: "msg_01",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [block],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        output_tokens: 3,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 0,
        service_tier: "standard",
      },
    },
  });
  const a1 = add(assistant(u1, { type: "thinking", thinking: "Use ls.", signature: "sig==" }));
  const a2 = add(
    assistant(a1, {
      type: "tool_use",
      id: "toolu_01",
      name: "Bash",
      input: { command: "ls", description: "list" },
    }),
  );
  const r1 = add({
    ...base(sessionId, a2),
    type: "user",
    message: {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_01", content: "a.txt\nb.txt", is_error: false },
      ],
    },
    toolUseResult: { stdout: "a.txt\nb.txt", stderr: "", interrupted: false },
  });
  const a3 = add(assistant(r1, { type: "text", text: "Two files: a.txt and b.txt." }));
  lines.push({
    type: "custom-title",
    customTitle: "Listing files",
    sessionId,
  } as SessionStoreEntry);
  lines.push({ type: "ai-title", aiTitle: "File listing", sessionId } as SessionStoreEntry);
  const boundary = add({
    ...base(sessionId, null),
    type: "system",
    subtype: "compact_boundary",
    content: "Conversation compacted",
    level: "info",
    isMeta: false,
    logicalParentUuid: a3,
    compactMetadata: { trigger: "manual", preTokens: 1234 },
  });
  const summary = add({
    ...base(sessionId, boundary),
    type: "user",
    isCompactSummary: true,
    isVisibleInTranscriptOnly: true,
    message: {
      role: "user",
      content: "This session is being continued. Summary: two files listed.",
    },
  });
  add({
    ...base(sessionId, summary),
    type: "user",
    message: {
      role: "user",
      content: [
        { type: "text", text: "Thanks!" },
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
        },
      ],
    },
  });
  lines.push({
    type: "queue-operation",
    operation: "enqueue",
    timestamp: "2026-01-01T00:01:00.000Z",
    sessionId,
    content: "next",
  } as SessionStoreEntry);
  lines.push({
    type: "file-history-snapshot",
    messageId: a3,
    snapshot: { trackedFileBackups: {}, timestamp: "2026-01-01T00:01:00.000Z" },
    isSnapshotUpdate: false,
  } as SessionStoreEntry);
  return lines;
}

/** A subagent's transcript (a sidechain): a prompt and an answer. */
export function subagentTranscript(sessionId: string, agentId: string): SessionStoreEntry[] {
  const u = {
    ...base(sessionId, null),
    isSidechain: true,
    agentId,
    type: "user",
    message: { role: "user", content: "Search for TODOs." },
  };
  const a = {
    ...base(sessionId, u.uuid),
    isSidechain: true,
    agentId,
    type: "assistant",
    message: {
      id: "msg_s1",
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [{ type: "text", text: "None found." }],
      stop_reason: "end_turn",
      usage: { input_tokens: 5, output_tokens: 2 },
    },
  };
  return [u, a] as SessionStoreEntry[];
}
