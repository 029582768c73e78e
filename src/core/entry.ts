import { type Timestamp, timestampFromDate, timestampMs } from "@bufbuild/protobuf/wkt";
import {
  BlobPart,
  type ContentPart,
  type Entry,
  type Message,
  Role,
} from "../../gen/sessiond/v1/entry_pb.js";
import { EntryKind } from "../../gen/sessiond/v1/session_pb.js";

/** The `case` names of Entry's oneof, e.g. "message" or "leaf". */
export type EntryCase = NonNullable<Entry["kind"]["case"]>;

/** Current on-disk / in-log format version written into SessionInfo. */
export const FORMAT_VERSION = 1;

const KIND_BY_CASE: Record<EntryCase, EntryKind> = {
  sessionInfo: EntryKind.SESSION_INFO,
  message: EntryKind.MESSAGE,
  modelChange: EntryKind.MODEL_CHANGE,
  thinkingLevelChange: EntryKind.THINKING_LEVEL_CHANGE,
  compaction: EntryKind.COMPACTION,
  branchSummary: EntryKind.BRANCH_SUMMARY,
  label: EntryKind.LABEL,
  leaf: EntryKind.LEAF,
  custom: EntryKind.CUSTOM,
};

/** The EntryKind enum value of an entry (UNSPECIFIED when the oneof is unset). */
export function entryKind(entry: Entry): EntryKind {
  const c = entry.kind.case;
  return c === undefined ? EntryKind.UNSPECIFIED : KIND_BY_CASE[c];
}

export function toTimestamp(date: Date): Timestamp {
  return timestampFromDate(date);
}

/** Milliseconds since the epoch, or 0 when unset. */
export function timestampMillis(ts: Timestamp | undefined): number {
  return ts === undefined ? 0 : timestampMs(ts);
}

/** What a part says as text, and whether it is what the message said, did or thought. */
function partText(p: ContentPart): { text: string; role: "said" | "did" | "thought" } | undefined {
  switch (p.part.case) {
    case "text":
      return { text: p.part.value, role: "said" };
    case "thinking":
      return { text: p.part.value.thinking, role: "thought" };
    case "toolCall":
      return { text: `[tool call ${p.part.value.name}]`, role: "did" };
    case "image":
      return { text: `[image ${p.part.value.mimeType}]`, role: "did" };
    case "blob": {
      // A text blob shows its preview; an image blob as an inline image does.
      const ref = p.part.value;
      if (ref.part === BlobPart.IMAGE) return { text: `[image ${ref.mediaType}]`, role: "did" };
      return { text: ref.preview, role: ref.part === BlobPart.THINKING ? "thought" : "said" };
    }
    default:
      return undefined;
  }
}

/** The text parts of a message joined by newlines (tool calls shown by name). */
export function messageText(message: Message): string {
  const parts: string[] = [];
  for (const p of message.content) {
    const t = partText(p);
    if (t !== undefined) parts.push(t.text);
  }
  return parts.join("\n");
}

/**
 * A message as one line would show it: what it says before how it got there.
 * A reply that opens with pages of thinking still previews as the reply, so
 * its text parts come first, then its tool calls and images, its thinking
 * last (`messageText` keeps the parts' order, for reading a message whole).
 */
export function messagePreviewText(message: Message): string {
  const by = { said: [] as string[], did: [] as string[], thought: [] as string[] };
  for (const p of message.content) {
    const t = partText(p);
    if (t !== undefined) by[t.role].push(t.text);
  }
  return [...by.said, ...by.did, ...by.thought].join("\n");
}

/** A one-line preview of an entry (at most `max` characters), for trees and listings. */
export function entryPreview(entry: Entry, max = 80): string {
  let text: string;
  const k = entry.kind;
  switch (k.case) {
    case "message":
      text = messagePreviewText(k.value);
      break;
    case "sessionInfo":
      text = k.value.title ?? "";
      break;
    case "modelChange":
      text = k.value.provider ? `${k.value.provider}/${k.value.model}` : k.value.model;
      break;
    case "thinkingLevelChange":
      text = k.value.thinkingLevel;
      break;
    case "compaction":
    case "branchSummary":
      text = k.value.summary;
      break;
    case "label":
      text = k.value.label;
      break;
    case "leaf":
      text = `→ ${k.value.leafId}`;
      break;
    case "custom":
      text = k.value.namespace;
      break;
    default:
      text = "";
  }
  // A lone CR is kept (a terminal shows it as \r, as in a whole message);
  // CRLF is a line break like LF.
  const line = text.replace(/(?:\r\n|[^\S\r])+/g, " ").replace(/^ | $/g, "");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function roleOf(entry: Entry): Role {
  return entry.kind.case === "message" ? entry.kind.value.role : Role.UNSPECIFIED;
}

/** Tool call ids made by an ASSISTANT message entry (empty for anything else). */
export function toolCallIds(entry: Entry): string[] {
  if (entry.kind.case !== "message" || entry.kind.value.role !== Role.ASSISTANT) return [];
  const ids: string[] = [];
  for (const p of entry.kind.value.content) {
    if (p.part.case === "toolCall") ids.push(p.part.value.id);
  }
  return ids;
}

/** The tool call a TOOL message entry answers, if it is one. */
export function toolResultCallId(entry: Entry): string | undefined {
  if (entry.kind.case !== "message" || entry.kind.value.role !== Role.TOOL) return undefined;
  return entry.kind.value.toolCallId;
}
