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
import { str, without } from "../jsonl-records.js";

/** A pi message as a sessiond entry, and what of it could not be mapped. */
export interface MappedMessage {
  /** Undefined when the message has no place in the context (see piMessage). */
  entry: EntryInit | undefined;
  problems: string[];
}

/** One of pi's content blocks (text, image, thinking, tool call) as a content part. */
const piBlockPart: BlockPart = (block) => {
  switch (block.type) {
    case "text":
      return textPart(str(block, "text") ?? "");
    case "image":
      return imagePart(base64Decode(str(block, "data") ?? ""), str(block, "mimeType") ?? "");
    case "thinking":
      return thinkingPart(str(block, "thinking") ?? "", str(block, "thinkingSignature"));
    case "toolCall":
      return toolCallPart(str(block, "id") ?? "", str(block, "name") ?? "", block.arguments ?? {});
    default:
      return undefined;
  }
};

/** pi's content (a string or blocks) as content parts. */
function partsOf(content: JsonValue | undefined, problems: string[]): ContentPartInit[] {
  return contentParts(content, problems, piBlockPart);
}

/**
 * pi's command output as the user message pi's convertToLlm sends
 * (messages.ts, bashExecutionToText), so that the imported CONTEXT holds
 * the text pi gave the model. Written out here because pi is no runtime
 * dependency of sessiond.
 */
export function bashExecutionText(m: JsonObject): string {
  let text = `Ran \`${str(m, "command") ?? ""}\`\n`;
  const output = str(m, "output");
  text += output ? `\`\`\`\n${output}\n\`\`\`` : "(no output)";
  const exit = m.exitCode;
  if (m.cancelled) text += "\n\n(command cancelled)";
  else if (typeof exit === "number" && exit !== 0) text += `\n\nCommand exited with code ${exit}`;
  const full = str(m, "fullOutputPath");
  if (m.truncated && full) text += `\n\n[Output truncated. Full output: ${full}]`;
  return text;
}

/**
 * Maps one pi AgentMessage. user, assistant and toolResult become the
 * matching roles; pi's own kinds become the USER message pi's convertToLlm
 * makes of them (custom messages their content, bash executions their
 * output), with the original under metadata "pi". A bash execution pi
 * excludes from the context, and a role pi does not define, have no
 * message (entry undefined): the caller keeps them as Custom entries.
 */
export function piMessage(m: JsonObject): MappedMessage {
  const problems: string[] = [];
  const meta = (...mapped: string[]) => ({ pi: without(m, ...mapped) });
  switch (m.role) {
    case "user":
      return {
        entry: userMessage(partsOf(m.content, problems), { metadata: meta("role", "content") }),
        problems,
      };
    case "assistant": {
      const usage = (m.usage ?? {}) as JsonObject;
      const count = (k: string) => BigInt(Math.max(0, Math.trunc(Number(usage[k] ?? 0) || 0)));
      const entry: EntryInit = {
        kind: {
          case: "message",
          value: {
            role: Role.ASSISTANT,
            content: partsOf(m.content, problems),
            model: str(m, "model"),
            provider: str(m, "provider"),
            stopReason: str(m, "stopReason"),
            usage: {
              inputTokens: count("input"),
              outputTokens: count("output"),
              cacheReadTokens: count("cacheRead"),
              cacheWriteTokens: count("cacheWrite"),
            },
            metadata: meta("role", "content", "model", "provider", "stopReason"),
          },
        },
      };
      return { entry, problems };
    }
    case "toolResult":
      return {
        entry: toolResult(str(m, "toolCallId") ?? "", partsOf(m.content, problems), {
          toolName: str(m, "toolName"),
          isError: m.isError === true,
          metadata: meta("role", "content", "toolCallId", "toolName", "isError"),
        }),
        problems,
      };
    case "custom":
      return {
        entry: userMessage(partsOf(m.content, problems), { metadata: meta("content") }),
        problems,
      };
    case "bashExecution":
      if (m.excludeFromContext === true) return { entry: undefined, problems };
      return { entry: userMessage(bashExecutionText(m), { metadata: { pi: m } }), problems };
    default:
      problems.push(`message role ${JSON.stringify(m.role)} is not one pi defines`);
      return { entry: undefined, problems };
  }
}
