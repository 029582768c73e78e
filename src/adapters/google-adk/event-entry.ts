import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Event } from "@google/adk";
import type { Entry, EntryInit } from "../../client/index.js";
import { Role } from "../../client/index.js";
import { ENTRY_ID_PATTERN, newEntryId } from "../../core/ids.js";

/** Custom namespace of an event kept whole (no typed form). */
export const EVENT_NAMESPACE = "adk.event";
/** Key (of a typed message's metadata, or a Custom entry's data) holding the event as JSON text. */
export const ENVELOPE_KEY = "adk_event";

/** The entry id an event is stored under: its own id when sessiond accepts it (retries and forks name it). */
export function entryIdOf(eventId: string): string {
  return ENTRY_ID_PATTERN.test(eventId ?? "") ? eventId : newEntryId();
}

interface Part {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name?: string; args?: unknown };
  functionResponse?: { id?: string; name?: string; response?: unknown };
}

/**
 * The entry that stores `event`: a typed message where its content maps
 * (user text as USER; model text and function calls as ASSISTANT; a lone
 * function response answering a call of `openCalls` as TOOL), so the
 * viewer and other languages read the conversation; else a Custom entry.
 * Either way the event itself rides along as JSON text (ADK's own fields,
 * exact: a Struct would turn integers into floats), which is what is read
 * back.
 */
export function eventEntry(event: Event, openCalls: ReadonlySet<string>): EntryInit {
  const json = JSON.stringify(event);
  const id = entryIdOf(event.id);
  const parts = (event.content?.parts ?? []) as Part[];
  const role = event.content?.role;
  const response = parts.length === 1 ? parts[0]?.functionResponse : undefined;
  if (response?.id !== undefined && openCalls.has(response.id)) {
    return message(id, json, {
      role: Role.TOOL,
      toolCallId: response.id,
      toolName: response.name ?? "",
      content: [{ part: { case: "text", value: JSON.stringify(response.response ?? null) } }],
    });
  }
  const typed = parts.every((p) => p.text !== undefined || (role === "model" && p.functionCall));
  if (parts.length > 0 && typed && (role === "user" || role === "model")) {
    const content = parts.map((p) =>
      p.functionCall
        ? {
            part: {
              case: "toolCall" as const,
              value: {
                id: p.functionCall.id ?? "",
                name: p.functionCall.name ?? "",
                arguments: fromJson(ValueSchema, (p.functionCall.args ?? {}) as JsonValue),
              },
            },
          }
        : p.thought && role === "model"
          ? { part: { case: "thinking" as const, value: { thinking: p.text ?? "" } } }
          : { part: { case: "text" as const, value: p.text ?? "" } },
    );
    if (content.every((c) => c.part.case !== "toolCall" || c.part.value.id !== "")) {
      return message(id, json, { role: role === "user" ? Role.USER : Role.ASSISTANT, content });
    }
  }
  return {
    id,
    kind: { case: "custom", value: { namespace: EVENT_NAMESPACE, data: { [ENVELOPE_KEY]: json } } },
  };
}

function message(id: string, json: string, value: Record<string, unknown>): EntryInit {
  return {
    id,
    kind: { case: "message", value: { ...value, metadata: { [ENVELOPE_KEY]: json } } },
  } as EntryInit;
}

/** The event an entry stores (as JSON), or undefined for entries that are not events. */
export function eventJsonOf(entry: Entry): string | undefined {
  if (entry.kind.case === "custom" && entry.kind.value.namespace === EVENT_NAMESPACE) {
    const v = entry.kind.value.data?.[ENVELOPE_KEY];
    return typeof v === "string" ? v : undefined;
  }
  if (entry.kind.case === "message") {
    const v = entry.kind.value.metadata?.[ENVELOPE_KEY];
    return typeof v === "string" ? v : undefined;
  }
  return undefined;
}

/** The function calls an event makes (their ids), and the ones it answers. */
export function callsOf(event: Event): { made: string[]; answered: string[] } {
  const parts = (event.content?.parts ?? []) as Part[];
  return {
    made: parts.flatMap((p) => (p.functionCall?.id ? [p.functionCall.id] : [])),
    answered: parts.flatMap((p) => (p.functionResponse?.id ? [p.functionResponse.id] : [])),
  };
}
