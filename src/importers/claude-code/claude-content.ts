import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { Role } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  type ContentPartInit,
  type EntryInit,
  imagePart,
  textPart,
  thinkingPart,
  toolCallPart,
  toolResult,
  userMessage,
} from "../../core/entry-builders.js";
import { type BlockPart, contentParts } from "../content-blocks.js";
import { obj, str } from "../jsonl-records.js";

/** One Anthropic API content block as a content part (an image by URL is left out). */
const claudeBlockPart: BlockPart = (block) => {
  switch (block.type) {
    case "text":
      return textPart(str(block, "text") ?? "");
    case "thinking":
      return thinkingPart(str(block, "thinking") ?? "", str(block, "signature"));
    case "image": {
      const source = obj(block, "source");
      if (source?.type !== "base64") return "an image given by URL is left out";
      return imagePart(base64Decode(str(source, "data") ?? ""), str(source, "media_type") ?? "");
    }
    case "tool_use":
      return toolCallPart(str(block, "id") ?? "", str(block, "name") ?? "", block.input ?? {});
    default:
      return undefined;
  }
};

/** Anthropic API content (a string or blocks) as content parts; blocks with no part are named in `problems`. */
function partsOf(content: JsonValue | undefined, problems: string[]): ContentPartInit[] {
  return contentParts(content, problems, claudeBlockPart);
}

/**
 * One user line as entries, in order: Claude Code puts a turn's tool
 * results (and any text beside them) into one user message, while a
 * sessiond TOOL message answers one call, so each tool_result block becomes
 * its own TOOL entry and the other blocks a USER entry between them. A
 * tool_result names only its call's id: `toolNames` (call id → the name
 * its tool_use gave) names the tool, as readers of a TOOL message expect.
 */
export function userPieces(
  message: JsonObject,
  problems: string[],
  toolNames: ReadonlyMap<string, string> = new Map(),
): EntryInit[] {
  const content = message.content;
  if (!Array.isArray(content)) return [userMessage(partsOf(content, problems))];
  const pieces: EntryInit[] = [];
  let pending: JsonObject[] = [];
  const flush = () => {
    if (pending.length > 0) pieces.push(userMessage(partsOf(pending, problems)));
    pending = [];
  };
  for (const block of content as JsonObject[]) {
    if (block?.type !== "tool_result") {
      pending.push(block);
      continue;
    }
    flush();
    const callId = str(block, "tool_use_id") ?? "";
    pieces.push(
      toolResult(callId, partsOf(block.content, problems), {
        toolName: toolNames.get(callId),
        isError: block.is_error === true,
      }),
    );
  }
  flush();
  return pieces.length > 0 ? pieces : [userMessage([])];
}

/** The tool names of a transcript's tool_use blocks, by call id. */
export function toolNamesOf(messages: readonly (JsonObject | undefined)[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) {
    const content = m?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content as JsonObject[]) {
      const id = str(block, "id");
      const name = str(block, "name");
      if (block?.type === "tool_use" && id !== undefined && name !== undefined) names.set(id, name);
    }
  }
  return names;
}

/** An assistant line: its content blocks, model, stop reason and token usage. */
export function assistantEntry(message: JsonObject, problems: string[]): EntryInit {
  const usage = obj(message, "usage") ?? {};
  const count = (k: string) => BigInt(Math.max(0, Math.trunc(Number(usage[k] ?? 0) || 0)));
  return {
    kind: {
      case: "message",
      value: {
        role: Role.ASSISTANT,
        content: partsOf(message.content, problems),
        model: str(message, "model"),
        provider: "anthropic",
        stopReason: str(message, "stop_reason"),
        usage: {
          inputTokens: count("input_tokens"),
          outputTokens: count("output_tokens"),
          cacheReadTokens: count("cache_read_input_tokens"),
          cacheWriteTokens: count("cache_creation_input_tokens"),
        },
      },
    },
  };
}

/** The text of a user message (a compact summary's): its string, or its text blocks joined. */
export function textOfContent(message: JsonObject | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as JsonObject[])
    .filter((b) => b?.type === "text")
    .map((b) => str(b, "text") ?? "")
    .join("\n");
}
