import { isDeepStrictEqual } from "node:util";
import { create, type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { AgentInputItem } from "@openai/agents-core";
import { type Entry, EntrySchema, type Message, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  assistantMessage,
  type ContentPartInit,
  customEntry,
  type EntryInit,
  imagePart,
  textPart,
  thinkingPart,
  toolResult,
  userMessage,
} from "../../client/index.js";
import { asUtf8, carried, carry } from "./exact-json.js";

/**
 * How an Agents SDK item becomes a typed sessiond entry and back. Messages,
 * function calls and their results, and reasoning become Message entries
 * (USER, ASSISTANT with a tool call or thinking, TOOL), so that GetState,
 * the CLI and every other client read the conversation; any other item
 * (hosted tools, computer / shell calls, system messages, ...) is a Custom
 * entry under NAMESPACE holding the item.
 *
 * Lossless by construction: an item is written as its typed projection
 * plus a *residual*, the top-level fields in which the item differs from
 * what the projection reads back as (usually its provider `id` and
 * `providerData`), kept in the message's metadata under NAMESPACE. Reading
 * applies the residual, so `getItems` returns items deep-equal to those
 * added, whatever fields the SDK adds in later versions. The typed entry is
 * planned as the server stores it (text with a lone UTF-16 surrogate holds
 * U+FFFD there), so such text differs from the item and the residual keeps
 * it, as JSON text (see exact-json.ts).
 */

/** The Custom namespace and the metadata key of this adapter. */
export const NAMESPACE = "openai-agents";

type Item = Record<string, unknown>;

/**
 * What an item has beyond its projection: fields to set (`set`, or
 * `set_json` when they hold text UTF-8 cannot, see exact-json.ts), and
 * fields the item lacks.
 */
interface Residual {
  set?: JsonObject;
  set_json?: string;
  unset?: string[];
}

function texts(content: unknown, type: string): string[] | undefined {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return undefined;
  return content.flatMap((p: Item) =>
    p?.type === type && typeof p.text === "string" ? [p.text] : [],
  );
}

/** A data-URL image as its bytes, when the URL reads back exactly (canonical base64). */
function dataUrlImage(url: unknown): { data: Buffer; mimeType: string } | undefined {
  const m = typeof url === "string" ? DATA_URL.exec(url) : null;
  if (m === null) return undefined;
  const data = Buffer.from(m[2] as string, "base64");
  return data.toString("base64") === m[2] ? { data, mimeType: m[1] as string } : undefined;
}

/**
 * A tool output as content parts: a string or text as a text part, an
 * array (what a tool returning a text and a screenshot gives) part by part,
 * its texts as text parts and its data-URL images as image parts; anything
 * else (files, image URLs) is no part, and the residual keeps it.
 */
function outputParts(output: unknown): ContentPartInit[] {
  if (typeof output === "string") return [textPart(output)];
  if (Array.isArray(output)) return output.flatMap(outputParts);
  const part = output as Item | undefined;
  if ((part?.type === "text" || part?.type === "input_text") && typeof part.text === "string") {
    return [textPart(part.text)];
  }
  const image =
    part?.type === "input_image" || part?.type === "image" ? dataUrlImage(part.image) : undefined;
  return image === undefined ? [] : [imagePart(image.data, image.mimeType)];
}

function callArguments(text: unknown): JsonValue {
  if (typeof text !== "string") return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** A string field's value, or "" for anything else (the residual keeps the original). */
function stringOr(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function isMessage(item: Item, role: string): boolean {
  return (item.type === "message" || item.type === undefined) && item.role === role;
}

/** A data URL of base64 content: `data:<mime>;base64,<data>`. */
const DATA_URL = /^data:([^;,]+);base64,([A-Za-z0-9+/]*={0,2})$/;

/**
 * A user message's content as typed parts when it holds images given as
 * data URLs (screenshots): texts as text parts, each image as an image part
 * of its bytes, so that the store keeps a large one once, as a blob, and
 * every client reads it as an image. Only content that reads back exactly
 * (`input_text` and `input_image` with nothing but a canonical base64 data
 * URL) is mapped; anything else is left to the texts-and-residual path.
 */
function userContent(content: unknown): ContentPartInit[] | undefined {
  if (!Array.isArray(content)) return undefined;
  if (!content.some((p: Item) => p?.type === "input_image")) return undefined;
  const parts: ContentPartInit[] = [];
  for (const p of content as Item[]) {
    const keys = Object.keys(p ?? {}).filter((k) => p[k] !== undefined);
    if (p?.type === "input_text" && typeof p.text === "string" && keys.length === 2) {
      parts.push(textPart(p.text));
      continue;
    }
    const m =
      p?.type === "input_image" && keys.length === 2 ? DATA_URL.exec(String(p.image)) : null;
    if (m === null) return undefined;
    const data = Buffer.from(m[2] as string, "base64");
    if (data.toString("base64") !== m[2]) return undefined; // not canonical: would not read back
    parts.push(imagePart(data, m[1] as string));
  }
  return parts;
}

/** The typed entry an item is stored as, without its residual (none: no message type holds it). */
function project(item: Item): EntryInit | undefined {
  const callId = item.callId;
  if (item.type === "function_call" && typeof callId === "string" && callId !== "") {
    const call = { id: callId, name: stringOr(item.name), args: callArguments(item.arguments) };
    return assistantMessage("", { toolCalls: [call] });
  }
  if (item.type === "function_call_result" && typeof callId === "string" && callId !== "") {
    const parts = outputParts(item.output);
    return toolResult(callId, parts.length > 0 ? parts : "", { toolName: stringOr(item.name) });
  }
  const thinking = item.type === "reasoning" ? texts(item.content, "input_text") : undefined;
  if (thinking !== undefined && thinking.length > 0) {
    return assistantMessage(thinking.map((t) => thinkingPart(t)));
  }
  const userParts = isMessage(item, "user") ? userContent(item.content) : undefined;
  if (userParts !== undefined) return userMessage(userParts);
  const user = isMessage(item, "user") ? texts(item.content, "input_text") : undefined;
  if (user !== undefined) return userMessage(user.map(textPart));
  const assistant = isMessage(item, "assistant") ? texts(item.content, "output_text") : undefined;
  if (assistant !== undefined) return assistantMessage(assistant.map(textPart));
  return undefined;
}

/**
 * The Custom entry that keeps an item whole, `{ item }` (`{ item_json }`
 * when UTF-8 cannot hold its text): for items no message type holds.
 */
export function customEntryOf(item: AgentInputItem): EntryInit {
  return customEntry(NAMESPACE, carry("item", item as unknown as JsonObject));
}

/** A message's text and image parts as the SDK's input parts (images as base64 data URLs). */
function inputParts(message: Message): Item[] {
  return message.content.flatMap((p): Item[] =>
    p.part.case === "text"
      ? [{ type: "input_text", text: p.part.value }]
      : p.part.case === "image"
        ? [
            {
              type: "input_image",
              image: `data:${p.part.value.mimeType};base64,${Buffer.from(p.part.value.data).toString("base64")}`,
            },
          ]
        : [],
  );
}

function messageItems(message: Message): Item[] {
  const textOf = (m: Message) =>
    m.content.flatMap((p) => (p.part.case === "text" ? [p.part.value] : []));
  switch (message.role) {
    case Role.USER: {
      if (message.content.some((p) => p.part.case === "image")) {
        return [{ type: "message", role: "user", content: inputParts(message) }];
      }
      const t = textOf(message);
      const content = t.length === 1 ? t[0] : t.map((text) => ({ type: "input_text", text }));
      return [{ type: "message", role: "user", content }];
    }
    case Role.TOOL: {
      // One text reads back as the SDK's text output; more parts, or an image, as an array.
      const [only, ...more] = message.content;
      const output =
        only?.part.case === "text" && more.length === 0
          ? { type: "text", text: only.part.value }
          : message.content.length === 0
            ? { type: "text", text: "" }
            : inputParts(message);
      return [
        {
          type: "function_call_result",
          name: message.toolName ?? "",
          callId: message.toolCallId ?? "",
          status: "completed",
          output,
        },
      ];
    }
    case Role.ASSISTANT: {
      const parts = message.content;
      if (parts.length > 0 && parts.every((p) => p.part.case === "thinking")) {
        const content = parts.map((p) => ({
          type: "input_text",
          text: p.part.case === "thinking" ? p.part.value.thinking : "",
        }));
        return [{ type: "reasoning", content }];
      }
      const calls = parts.flatMap((p) =>
        p.part.case === "toolCall"
          ? [
              {
                type: "function_call",
                callId: p.part.value.id,
                name: p.part.value.name,
                arguments: JSON.stringify(
                  p.part.value.arguments ? toJson(ValueSchema, p.part.value.arguments) : null,
                ),
                status: "completed",
              },
            ]
          : [],
      );
      const t = textOf(message);
      const content = t.map((text) => ({ type: "output_text", text }));
      const reply = { type: "message", role: "assistant", status: "completed", content };
      return t.length > 0 || calls.length === 0 ? [reply, ...calls] : calls;
    }
    default:
      return [];
  }
}

/** The items an entry reads back as, before its residual (none for entries that are no item). */
function readBack(entry: Entry): Item[] {
  const kind = entry.kind;
  if (kind.case === "custom" && kind.value.namespace === NAMESPACE) {
    const item = carried(kind.value.data, "item");
    return item !== undefined ? [item as Item] : [];
  }
  return kind.case === "message" ? messageItems(kind.value) : [];
}

function residualOf(item: Item, canonical: Item): Residual | undefined {
  const set: JsonObject = {};
  for (const [key, value] of Object.entries(item)) {
    if (value !== undefined && !isDeepStrictEqual(value, canonical[key])) {
      set[key] = value as JsonValue;
    }
  }
  const unset = Object.keys(canonical).filter((key) => item[key] === undefined);
  if (Object.keys(set).length === 0 && unset.length === 0) return undefined;
  return {
    ...(Object.keys(set).length > 0 ? carry("set", set) : {}),
    ...(unset.length > 0 ? { unset } : {}),
  };
}

function withResidual(item: Item, residual: Residual | undefined): Item {
  if (residual === undefined) return item;
  const set = carried(residual as unknown as JsonObject, "set") as JsonObject | undefined;
  const out: Item = { ...item, ...set };
  for (const key of residual.unset ?? []) delete out[key];
  return out;
}

/** The entry an item is stored as: typed, with its residual in the message's metadata. */
export function itemEntry(item: AgentInputItem): EntryInit {
  const typed = project(item as Item);
  if (typed === undefined) return customEntryOf(item);
  const entry = asUtf8(typed);
  if (entry.kind?.case !== "message") return entry;
  const residual = residualOf(item as Item, readBack(create(EntrySchema, entry))[0] ?? {});
  if (residual !== undefined) entry.kind.value.metadata = { [NAMESPACE]: residual as JsonObject };
  return entry;
}

/** The items an entry holds (one for the entries this adapter writes; more for a foreign message). */
export function entryItems(entry: Entry): AgentInputItem[] {
  const items = readBack(entry);
  const meta = entry.kind.case === "message" ? entry.kind.value.metadata?.[NAMESPACE] : undefined;
  const last = items.length - 1;
  return items.map(
    (item, i) =>
      withResidual(item, i === last ? (meta as Residual | undefined) : undefined) as AgentInputItem,
  );
}
