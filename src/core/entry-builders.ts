import {
  fromJson,
  type JsonObject,
  type JsonValue,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  type ContentPartSchema,
  type EntrySchema,
  type MessageSchema,
  Role,
  type UsageSchema,
} from "../../gen/sessiond/v1/entry_pb.js";

/**
 * Builders for the entries an agent appends most, so that callers do not
 * spell out `{ kind: { case: "message", value: { role, content: [{ part:
 * { case: "text", value } }] } } }` by hand. They return the generated
 * init shapes (plain objects, as protobuf-es users pass to `create()` or to
 * a client): the generated types stay the truth, and anything a builder
 * does not cover is one spread away (`{ ...userMessage("hi"), id: "u1" }`).
 *
 * Browser-safe (no Node APIs): `sessiond`, `sessiond/client` and
 * `sessiond/web` export them.
 */

export type EntryInit = MessageInitShape<typeof EntrySchema>;
export type ContentPartInit = MessageInitShape<typeof ContentPartSchema>;
type MessageInit = MessageInitShape<typeof MessageSchema>;

/** Where an entry goes: its id (chosen by you, or by the client before sending) and parent. */
export interface EntryPlacement {
  /** The entry id; set it when you retry by hand, leave it out otherwise. */
  id?: string;
  /** The parent entry; left out, the entry hangs under the session's current leaf. */
  parentId?: string;
}

/** Content: a plain string is one text part ("" is none: e.g. an assistant turn of tool calls only). */
export type Content = string | ContentPartInit[];

/** A text part. */
export function textPart(text: string): ContentPartInit {
  return { part: { case: "text", value: text } };
}

/** A thinking part (the model's reasoning, with the provider's signature when it gives one). */
export function thinkingPart(thinking: string, signature?: string): ContentPartInit {
  return { part: { case: "thinking", value: { thinking, signature } } };
}

/** An image part: raw bytes and their MIME type (e.g. "image/png"). */
export function imagePart(data: Uint8Array, mimeType: string): ContentPartInit {
  return { part: { case: "image", value: { data, mimeType } } };
}

/** A tool call part of an assistant message; `args` is any JSON value. */
export function toolCallPart(id: string, name: string, args: JsonValue = {}): ContentPartInit {
  return {
    part: { case: "toolCall", value: { id, name, arguments: fromJson(ValueSchema, args) } },
  };
}

/**
 * Only the placement fields of an options object (the rest are not Entry
 * fields). Left out, they are undefined: the client and the store treat that
 * as unset (an id assigned, the entry under the current leaf).
 */
function placement(at: EntryPlacement): EntryPlacement {
  return { id: at.id, parentId: at.parentId };
}

function contentOf(content: Content): ContentPartInit[] {
  if (typeof content !== "string") return content;
  return content === "" ? [] : [textPart(content)];
}

function messageEntry(message: MessageInit, at: EntryPlacement): EntryInit {
  return { ...placement(at), kind: { case: "message", value: message } };
}

/** A USER message. */
export function userMessage(
  content: Content,
  opts: EntryPlacement & { metadata?: JsonObject } = {},
): EntryInit {
  return messageEntry(
    { role: Role.USER, content: contentOf(content), metadata: opts.metadata },
    opts,
  );
}

/** What an ASSISTANT message may carry besides its content. */
export interface AssistantOptions extends EntryPlacement {
  /** Tool calls, after the content: `{ id, name, args }` each. */
  toolCalls?: ReadonlyArray<{ id: string; name: string; args?: JsonValue }>;
  /** Reasoning, put before the content as a thinking part. */
  thinking?: string;
  model?: string;
  provider?: string;
  usage?: MessageInitShape<typeof UsageSchema>;
  stopReason?: string;
  metadata?: JsonObject;
}

/** An ASSISTANT message: content (text or parts), then its tool calls. */
export function assistantMessage(content: Content, opts: AssistantOptions = {}): EntryInit {
  const parts: ContentPartInit[] = [];
  if (opts.thinking !== undefined) parts.push(thinkingPart(opts.thinking));
  parts.push(...contentOf(content));
  for (const call of opts.toolCalls ?? []) parts.push(toolCallPart(call.id, call.name, call.args));
  return messageEntry(
    {
      role: Role.ASSISTANT,
      content: parts,
      model: opts.model,
      provider: opts.provider,
      usage: opts.usage,
      stopReason: opts.stopReason,
      metadata: opts.metadata,
    },
    opts,
  );
}

/** A TOOL message: the result of the tool call `toolCallId`. */
export function toolResult(
  toolCallId: string,
  content: Content,
  opts: EntryPlacement & { toolName?: string; isError?: boolean; metadata?: JsonObject } = {},
): EntryInit {
  return messageEntry(
    {
      role: Role.TOOL,
      toolCallId,
      toolName: opts.toolName,
      isError: opts.isError ?? false,
      content: contentOf(content),
      metadata: opts.metadata,
    },
    opts,
  );
}

/** A ModelChange entry: the model (and provider) for the rest of the path. */
export function modelChange(
  model: string,
  opts: EntryPlacement & { provider?: string } = {},
): EntryInit {
  return {
    ...placement(opts),
    kind: { case: "modelChange", value: { model, provider: opts.provider } },
  };
}

/** A Label entry: names its parent entry, so rewind / fork can use the label. */
export function labelEntry(label: string, opts: EntryPlacement = {}): EntryInit {
  return { ...placement(opts), kind: { case: "label", value: { label } } };
}

/** A Custom entry: your own data under your namespace (folded into the state's `custom`). */
export function customEntry(
  namespace: string,
  data: JsonObject,
  opts: EntryPlacement = {},
): EntryInit {
  return { ...placement(opts), kind: { case: "custom", value: { namespace, data } } };
}
