import type { JsonObject } from "@bufbuild/protobuf";
import { type JsonRecord, obj, str } from "../jsonl-records.js";

/** How a Task tool result names the subagent it ran: "agentId: a1b2c3d" in its text. */
const AGENT_ID = /agentId: ([A-Za-z0-9_-]{1,64})/;

function resultText(block: JsonObject): string {
  const c = block.content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  return (c as JsonObject[]).map((b) => str(b, "text") ?? "").join("\n");
}

/**
 * The agent type of each subagent a transcript started: a Task (or Agent)
 * tool call names it (`subagent_type`), and its result names the agent id
 * (`toolUseResult.agentId`, or "agentId: <id>" in the result's text), which
 * is the `<id>` of the subagent's transcript `agent-<id>.jsonl`. Subagent
 * transcripts do not name their type themselves.
 */
export function agentTypesOf(records: readonly JsonRecord[]): Map<string, string> {
  const calls = new Map<string, string>();
  const out = new Map<string, string>();
  for (const { value: r } of records) {
    const content = obj(r, "message")?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content as JsonObject[]) {
      const type = str(obj(block, "input"), "subagent_type");
      if (block?.type === "tool_use" && type !== undefined) calls.set(str(block, "id") ?? "", type);
      if (block?.type !== "tool_result") continue;
      const called = calls.get(str(block, "tool_use_id") ?? "");
      const agentId =
        str(obj(r, "toolUseResult"), "agentId") ?? AGENT_ID.exec(resultText(block))?.[1];
      if (called !== undefined && agentId !== undefined) out.set(agentId, called);
    }
  }
  return out;
}
