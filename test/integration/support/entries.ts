import {
  fromJson,
  type JsonObject,
  type JsonValue,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { type EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";

/** An entry as the Append request takes it. */
export type EntryInit = MessageInitShape<typeof EntrySchema>;

/** Where an entry goes: its own id and / or an explicit parent (both optional). */
export interface Place {
  id?: string;
  parentId?: string;
}

const text = (value: string) => ({ part: { case: "text" as const, value } });

export function user(value: string, at: Place = {}): EntryInit {
  return { ...at, kind: { case: "message", value: { role: Role.USER, content: [text(value)] } } };
}

export function assistant(
  value: string,
  at: Place = {},
  toolCalls: Array<{ id: string; name: string; arguments?: JsonValue }> = [],
): EntryInit {
  return {
    ...at,
    kind: {
      case: "message",
      value: {
        role: Role.ASSISTANT,
        model: "m-1",
        provider: "p-1",
        content: [
          text(value),
          ...toolCalls.map((c) => ({
            part: {
              case: "toolCall" as const,
              value: {
                id: c.id,
                name: c.name,
                arguments: fromJson(ValueSchema, c.arguments ?? null),
              },
            },
          })),
        ],
        usage: { inputTokens: 10n, outputTokens: 5n },
        stopReason: toolCalls.length > 0 ? "tool_use" : "stop",
      },
    },
  };
}

export function toolResult(callId: string, value: string, at: Place = {}): EntryInit {
  return {
    ...at,
    kind: {
      case: "message",
      value: { role: Role.TOOL, toolCallId: callId, toolName: "t", content: [text(value)] },
    },
  };
}

export function label(name: string, at: Place = {}): EntryInit {
  return { ...at, kind: { case: "label", value: { label: name } } };
}

export function compaction(summary: string, replaces: string[], at: Place = {}): EntryInit {
  return { ...at, kind: { case: "compaction", value: { summary, replacesEntryIds: replaces } } };
}

export function modelChange(model: string, provider: string, at: Place = {}): EntryInit {
  return { ...at, kind: { case: "modelChange", value: { model, provider } } };
}

export function thinking(level: string, at: Place = {}): EntryInit {
  return { ...at, kind: { case: "thinkingLevelChange", value: { thinkingLevel: level } } };
}

export function custom(namespace: string, data: JsonObject, at: Place = {}): EntryInit {
  return { ...at, kind: { case: "custom", value: { namespace, data } } };
}

export function retitle(title: string, at: Place = {}): EntryInit {
  return { ...at, kind: { case: "sessionInfo", value: { title } } };
}

/** The text of a message's first text part ("" when none). */
export function textOf(
  message: { content: Array<{ part: { case?: string; value?: unknown } }> } | undefined,
): string {
  const p = message?.content.find((c) => c.part.case === "text");
  return typeof p?.part.value === "string" ? p.part.value : "";
}
