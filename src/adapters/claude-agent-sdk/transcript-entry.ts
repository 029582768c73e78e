import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  assistantMessage,
  type ContentPartInit,
  customEntry,
  type EntryInit,
  imagePart,
  textPart,
  thinkingPart,
  toolCallPart,
  toolResult,
  userMessage,
} from "../../client/index.js";

/**
 * How a Claude Code transcript line becomes typed sessiond entries, and
 * back. User and assistant lines are Message entries (text, thinking, tool
 * use as tool calls, a lone tool result as a TOOL message), title lines
 * SessionInfo entries with the title, anything else a Custom entry. Every
 * line is kept verbatim in its *carrier* (the Message's or SessionInfo's
 * metadata, or the Custom's data, under NAMESPACE): the transcript format is
 * the CLI's own and changes with it, so `load` returns the line itself and
 * the typed form is for sessiond's readers (GetState, the CLI, search). A
 * compact boundary is a Compaction entry followed by its carrier.
 */

/** The Custom namespace and metadata key of this adapter. */
export const NAMESPACE = "claude-agent-sdk";

/**
 * Above this size (as JSON) a line's typed message holds no text: the line
 * is kept whole anyway, and text twice would push a big tool result over
 * the server's entry size limit.
 */
const TYPED_TEXT_MAX_CHARS = 512 * 1024;

type Json = Record<string, unknown>;

function blocks(content: unknown): Json[] {
  return Array.isArray(content)
    ? content.filter((b): b is Json => typeof b === "object" && b !== null)
    : [];
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return blocks(content)
    .flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []))
    .join("\n");
}

function usageOf(usage: unknown) {
  const u = (usage ?? {}) as Json;
  const n = (v: unknown) =>
    BigInt(typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  return {
    inputTokens: n(u.input_tokens),
    outputTokens: n(u.output_tokens),
    cacheReadTokens: n(u.cache_read_input_tokens),
    cacheWriteTokens: n(u.cache_creation_input_tokens),
  };
}

function assistantParts(content: unknown): ContentPartInit[] {
  if (typeof content === "string") return [textPart(content)];
  return blocks(content).flatMap((b): ContentPartInit[] => {
    if (b.type === "text" && typeof b.text === "string") return [textPart(b.text)];
    if (b.type === "thinking" && typeof b.thinking === "string") {
      return [thinkingPart(b.thinking, typeof b.signature === "string" ? b.signature : undefined)];
    }
    if (b.type === "tool_use" && typeof b.id === "string" && b.id !== "") {
      return [
        toolCallPart(b.id, typeof b.name === "string" ? b.name : "", (b.input ?? {}) as JsonValue),
      ];
    }
    return [];
  });
}

/** The tool_use id a user line answers, when the line is exactly one tool result. */
export function answeredCall(line: SessionStoreEntry): string | undefined {
  if (line.type !== "user") return undefined;
  const content = (line.message as Json | undefined)?.content;
  const all = blocks(content);
  const only = all.length === 1 ? all[0] : undefined;
  const id = only?.type === "tool_result" ? only.tool_use_id : undefined;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** The message a user or assistant line is, without its carrier metadata (undefined: none). */
function messageOf(line: SessionStoreEntry, withText: boolean): EntryInit | undefined {
  const message = line.message as Json | undefined;
  if (message === undefined || typeof message !== "object") return undefined;
  const content = withText ? message.content : "";
  if (line.type === "assistant") {
    const parts = withText ? assistantParts(content) : [];
    return assistantMessage(parts, {
      model: typeof message.model === "string" ? message.model : undefined,
      stopReason: typeof message.stop_reason === "string" ? message.stop_reason : undefined,
      usage: usageOf(message.usage),
    });
  }
  if (line.type !== "user") return undefined;
  const callId = answeredCall(line);
  if (callId === undefined) return userMessage(textOf(content));
  const result = blocks(message.content)[0] as Json;
  return toolResult(callId, withText ? textOf(result.content) : "", {
    isError: result.is_error === true,
  });
}

/** The SessionInfo title a title line sets. */
function titleOf(line: SessionStoreEntry): string | undefined {
  const title =
    line.type === "custom-title"
      ? line.customTitle
      : line.type === "ai-title"
        ? line.aiTitle
        : undefined;
  return typeof title === "string" ? title : undefined;
}

/** True for a compact boundary (a system line of subtype compact_boundary). */
export function isCompactBoundary(line: SessionStoreEntry): boolean {
  return line.type === "system" && line.subtype === "compact_boundary";
}

/** The Compaction a compact boundary stands for, replacing `replaced` (entries on its path). */
export function compactionOf(line: SessionStoreEntry, replaced: string[]): EntryInit {
  const meta = (line.compactMetadata ?? {}) as Json;
  const tokens = meta.preTokens;
  return {
    kind: {
      case: "compaction",
      value: {
        summary:
          typeof line.content === "string" && line.content !== ""
            ? line.content
            : "Conversation compacted",
        replacesEntryIds: replaced,
        tokensBefore:
          typeof tokens === "number" && Number.isSafeInteger(tokens) && tokens >= 0
            ? BigInt(tokens)
            : undefined,
      },
    },
  };
}

/** The Custom carrier of a line that no typed entry holds. */
export function customCarrier(line: SessionStoreEntry): EntryInit {
  return customEntry(NAMESPACE, { line: line as JsonObject });
}

/**
 * Where an image's base64 data was in a carried line: the index of the
 * message's image part that holds its bytes (see carrierOf).
 */
const PART_KEY = "$sessiondPart";

/** The image blocks of a user line's content, top-level and in tool results, in order. */
function imageBlocks(content: unknown): Json[] {
  const out: Json[] = [];
  for (const b of blocks(content)) {
    if (b.type === "image") out.push(b);
    else if (b.type === "tool_result") {
      for (const inner of blocks(b.content)) if (inner.type === "image") out.push(inner);
    }
  }
  return out;
}

/** An image source of canonical base64 (it reads back the same), decoded; else undefined. */
function base64Image(
  source: unknown,
): { mediaType: string; data: Buffer; base64Length: number } | undefined {
  const s = source as Json | undefined;
  if (s?.type !== "base64" || typeof s.data !== "string" || typeof s.media_type !== "string") {
    return undefined;
  }
  if (Object.keys(s).length !== 3) return undefined;
  const data = Buffer.from(s.data, "base64");
  return data.toString("base64") === s.data
    ? { mediaType: s.media_type, data, base64Length: s.data.length }
    : undefined;
}

/**
 * The carrier of a line: a typed Message or SessionInfo with the line in its
 * metadata, or a Custom (compact boundaries, and every other kind of line).
 *
 * Screenshots are not kept twice: a user line's base64 images become image
 * parts of the message (blobs once over the store's threshold, stored once
 * however many lines repeat them), and the carried line holds, where each
 * one's data was, the index of its part; `lineOf` puts the data back.
 */
export function carrierOf(line: SessionStoreEntry): EntryInit {
  const title = titleOf(line);
  if (title !== undefined) {
    const original = { [NAMESPACE]: line as JsonObject };
    return { kind: { case: "sessionInfo", value: { title, metadata: original } } };
  }
  const images =
    line.type === "user" && !isCompactBoundary(line)
      ? imageBlocks((line.message as Json | undefined)?.content).map((b) => base64Image(b.source))
      : [];
  // What the carrier will weigh: the line without the image data that moves to parts
  // (base64 needs no JSON escaping, so its length is what it adds).
  const imageChars = images.reduce((n, i) => n + (i === undefined ? 0 : i.base64Length), 0);
  const withText = JSON.stringify(line).length - imageChars <= TYPED_TEXT_MAX_CHARS;
  const message = isCompactBoundary(line) ? undefined : messageOf(line, withText);
  if (message?.kind?.case !== "message") return customCarrier(line);
  const kept = images.some((i) => i !== undefined)
    ? (structuredClone(line) as SessionStoreEntry)
    : line;
  if (kept !== line) {
    const content = [...(message.kind.value.content ?? [])];
    const copies = imageBlocks((kept.message as Json).content);
    images.forEach((img, i) => {
      if (img === undefined) return;
      ((copies[i] as Json).source as Json).data = { [PART_KEY]: content.length };
      content.push(imagePart(img.data, img.mediaType));
    });
    message.kind.value.content = content;
  }
  message.kind.value.metadata = { [NAMESPACE]: kept as JsonObject };
  return message;
}

/** The carried line with the image data its message's parts hold put back. */
function withImages(held: SessionStoreEntry, entry: Entry): SessionStoreEntry {
  const parts = entry.kind.case === "message" ? entry.kind.value.content : [];
  const marked = imageBlocks((held.message as Json | undefined)?.content).filter(
    (b) => typeof (b.source as Json | undefined)?.data === "object",
  );
  if (marked.length === 0) return held;
  const line = structuredClone(held) as SessionStoreEntry;
  for (const b of imageBlocks((line.message as Json).content)) {
    const source = b.source as Json | undefined;
    const at = (source?.data as Json | null | undefined)?.[PART_KEY];
    const part = typeof at === "number" ? parts[at]?.part : undefined;
    if (source !== undefined && part?.case === "image") {
      source.data = Buffer.from(part.value.data).toString("base64");
    }
  }
  return line;
}

/** The transcript line an entry carries (undefined: the entry carries none). */
export function lineOf(entry: Entry): SessionStoreEntry | undefined {
  const k = entry.kind;
  const held =
    k.case === "custom" && k.value.namespace === NAMESPACE
      ? k.value.data?.line
      : k.case === "message" || k.case === "sessionInfo"
        ? k.value.metadata?.[NAMESPACE]
        : undefined;
  return held === undefined || held === null
    ? undefined
    : withImages(held as SessionStoreEntry, entry);
}
