import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { type Entry, type Message, Role } from "../../gen/sessiond/v1/entry_pb.js";
import type { SessionState, StateMessage } from "../../gen/sessiond/v1/session_pb.js";

/**
 * Reading a state or an entry back as text: what a caller wants to show or
 * hand to a model without walking oneofs. Browser-safe, like the builders.
 */

type HasMessage = Message | StateMessage | Entry | undefined;

function messageOf(source: HasMessage): Message | undefined {
  if (source === undefined) return undefined;
  switch (source.$typeName) {
    case "sessiond.v1.Message":
      return source;
    case "sessiond.v1.StateMessage":
      return source.message;
    default:
      // Stryker disable next-line ConditionalExpression: no other entry kind has `content`, so reading another kind's value as a message finds no parts either way
      return source.kind.case === "message" ? source.kind.value : undefined;
  }
}

/**
 * The text parts of a message (or of a state message, or of a message
 * entry) joined by `separator`; "" when it has none or is no message.
 * Thinking, images and tool calls are not text.
 */
export function textOf(source: HasMessage, separator = "\n"): string {
  const texts: string[] = [];
  for (const c of messageOf(source)?.content ?? [])
    if (c.part.case === "text") texts.push(c.part.value);
  return texts.join(separator);
}

/** A tool call with its arguments as plain JSON. */
export interface ToolCallOf {
  id: string;
  name: string;
  args: JsonValue;
}

/** The tool calls of an assistant message, arguments as JSON (null when none were sent). */
export function toolCallsOf(source: HasMessage): ToolCallOf[] {
  const calls: ToolCallOf[] = [];
  for (const c of messageOf(source)?.content ?? []) {
    if (c.part.case !== "toolCall") continue;
    const { id, name, arguments: args } = c.part.value;
    calls.push({ id, name, args: args === undefined ? null : toJson(ValueSchema, args) });
  }
  return calls;
}

export type RoleName = "user" | "assistant" | "tool" | "unspecified";

/** "user", "assistant", "tool" (or "unspecified" for a role this version does not know). */
export function roleName(role: Role): RoleName {
  switch (role) {
    case Role.USER:
      return "user";
    case Role.ASSISTANT:
      return "assistant";
    case Role.TOOL:
      return "tool";
    default:
      return "unspecified";
  }
}

/** One line of a transcript. */
export interface TranscriptLine {
  entryId: string;
  role: RoleName;
  text: string;
  toolCalls: ToolCallOf[];
  /** For a tool result: the call it answers. */
  toolCallId?: string;
}

/**
 * A state's messages as plain lines, in order: what the model gets in the
 * CONTEXT view (compaction summaries included, as the fold puts them), the
 * whole path in the HISTORY view.
 */
export function transcript(state: Pick<SessionState, "messages">): TranscriptLine[] {
  return state.messages.map((m) => ({
    entryId: m.entryId,
    role: roleName(m.message?.role ?? Role.UNSPECIFIED),
    text: textOf(m),
    toolCalls: toolCallsOf(m),
    ...(m.message?.toolCallId === undefined ? {} : { toolCallId: m.message.toolCallId }),
  }));
}
