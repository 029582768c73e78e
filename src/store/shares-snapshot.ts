import {
  BlobPart,
  type ContentPart,
  type Entry,
  type Message,
  Role,
} from "../../gen/sessiond/v1/entry_pb.js";

/**
 * A share's omissions applied to one entry of its path (a copy; the log's
 * entries are shared and never changed):
 *
 * - omit tool output: a TOOL message keeps its role, tool_call_id,
 *   tool_name and is_error (so the tool call it answers still pairs up)
 *   and loses its content and metadata;
 * - omit thinking: every thinking part, and every blob reference standing
 *   for one, leaves every message.
 *
 * Other entries are returned as they are.
 */
export function omitFromEntry(e: Entry, omitToolOutput: boolean, omitThinking: boolean): Entry {
  if (e.kind.case !== "message") return e;
  const m = e.kind.value;
  let next: Message = m;
  if (omitToolOutput && m.role === Role.TOOL) {
    next = { ...m, content: [] };
    delete (next as { metadata?: unknown }).metadata;
  }
  if (omitThinking && next.content.some(isThinking)) {
    next = { ...next, content: next.content.filter((p) => !isThinking(p)) };
  }
  return next === m ? e : { ...e, kind: { case: "message", value: next } };
}

function isThinking(p: ContentPart): boolean {
  return (
    p.part.case === "thinking" ||
    (p.part.case === "blob" && p.part.value.part === BlobPart.THINKING)
  );
}
