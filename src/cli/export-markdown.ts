import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  BlobPart,
  type BlobRef,
  type ContentPart,
  type Entry,
  type Message,
  Role,
} from "../client/index.js";
import { CliError } from "./command.js";
import type { SessionSnapshot } from "./export-read.js";

/**
 * `sessiond export --format markdown`: a readable transcript of one path
 * of a session (root to the current leaf, or to --leaf ENTRY). Each message
 * is a `##` heading with its role, then a line in italics with its entry id,
 * model and time; user and assistant text as written (it is markdown);
 * tool calls (their arguments as JSON) and tool results in fenced blocks
 * whose fence is longer than any run of backticks inside; thinking only
 * with --thinking; a blob part by its hash, size and preview. The other
 * entries on the path (compactions, branch summaries, labels, model and
 * thinking-level changes, title changes, custom entries) are one short
 * line or block each. The same session and flags always give the same text.
 */

export interface MarkdownExportOptions {
  /** The path's last entry; default the session's current leaf. */
  readonly leaf?: string | undefined;
  /** Include thinking parts. */
  readonly thinking: boolean;
}

/** A fenced block: the fence is longer than any run of backticks in the text (3 at least). */
export function fenced(text: string, info = ""): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${text}${text.endsWith("\n") || text === "" ? "" : "\n"}${fence}`;
}

/**
 * Prose as written, with a code fence it leaves open closed at its end: an
 * unclosed fence would swallow the rest of the transcript (CommonMark runs
 * it to the end of the document).
 */
export function closedProse(text: string): string {
  let open: { char: string; length: number } | undefined;
  for (const line of text.split("\n")) {
    const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (m === null) continue;
    const fence = m[1] as string;
    const rest = (m[2] as string).trim();
    if (open === undefined) {
      // A backtick fence's info string may not hold a backtick.
      if (!(fence[0] === "`" && rest.includes("`"))) {
        open = { char: fence[0] as string, length: fence.length };
      }
    } else if (fence[0] === open.char && fence.length >= open.length && rest === "") {
      open = undefined;
    }
  }
  if (open === undefined) return text;
  return `${text}${text.endsWith("\n") ? "" : "\n"}${open.char.repeat(open.length)}`;
}

/** Inline code that survives backticks inside (CommonMark: a longer delimiter, padded). */
function code(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const tick = "`".repeat(longest + 1);
  return longest === 0 ? `${tick}${text}${tick}` : `${tick} ${text} ${tick}`;
}

function time(e: Entry): string | undefined {
  return iso(e.timestamp);
}

function iso(ts: Entry["timestamp"]): string | undefined {
  if (ts === undefined) return undefined;
  return new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6)).toISOString();
}

/** The italic line under a heading: entry id, then what else is known. */
function about(e: Entry, ...more: (string | undefined)[]): string {
  return `_${[code(e.id), ...more, time(e)].filter((s) => s !== undefined && s !== "").join(" · ")}_`;
}

function sizeText(bytes: bigint): string {
  return `${bytes} bytes`;
}

function blobPart(ref: BlobRef): string {
  const what =
    ref.part === BlobPart.IMAGE ? "image" : ref.part === BlobPart.THINKING ? "thinking" : "text";
  const head = `_[${what} blob ${ref.mediaType ? `${ref.mediaType}, ` : ""}${sizeText(ref.size)}, sha256 ${ref.sha256}]_`;
  if (ref.part === BlobPart.IMAGE || ref.preview === "") return head;
  return `${head} preview:\n\n${fenced(ref.preview, "text")}`;
}

function contentPart(p: ContentPart, role: Role, thinking: boolean): string | undefined {
  const v = p.part;
  switch (v.case) {
    case "text":
      // A tool's output is what the tool returned: shown as it is, never as markdown.
      return role === Role.TOOL ? fenced(v.value, "text") : closedProse(v.value);
    case "thinking":
      return thinking ? `**Thinking**\n\n${fenced(v.value.thinking, "text")}` : undefined;
    case "image":
      return `_[image ${v.value.mimeType}, ${sizeText(BigInt(v.value.data.length))}]_`;
    case "toolCall": {
      const args =
        v.value.arguments === undefined
          ? "null"
          : JSON.stringify(toJson(ValueSchema, v.value.arguments), null, 2);
      return `**Tool call** ${code(v.value.name)} · ${code(v.value.id)}\n\n${fenced(args, "json")}`;
    }
    case "blob":
      if (v.value.part === BlobPart.THINKING && !thinking) return undefined;
      return blobPart(v.value);
    default:
      return undefined;
  }
}

function message(e: Entry, m: Message, thinking: boolean): string {
  let heading: string;
  let meta: (string | undefined)[];
  switch (m.role) {
    case Role.USER:
      heading = "User";
      meta = [];
      break;
    case Role.ASSISTANT:
      heading = "Assistant";
      meta = [m.model === undefined ? undefined : [m.provider, m.model].filter(Boolean).join("/")];
      break;
    case Role.TOOL:
      heading = `Tool result${m.toolName ? ` · ${m.toolName}` : ""}`;
      meta = [
        m.toolCallId === undefined ? undefined : `call ${code(m.toolCallId)}`,
        m.isError ? "error" : undefined,
      ];
      break;
    default:
      heading = "Message";
      meta = [];
  }
  const parts = m.content
    .map((p) => contentPart(p, m.role, thinking))
    .filter((s): s is string => s !== undefined);
  return [`## ${heading}`, about(e, ...meta), ...parts].join("\n\n");
}

function entryBlock(e: Entry, isRoot: boolean, thinking: boolean): string | undefined {
  const k = e.kind;
  switch (k.case) {
    case "message":
      return message(e, k.value, thinking);
    case "compaction":
      return [
        "## Compaction",
        about(e, `replaces ${k.value.replacesEntryIds.length} entries`),
        k.value.summary,
      ].join("\n\n");
    case "branchSummary":
      return [
        "## Branch summary",
        about(e, `of the branch at ${code(k.value.fromId)}`),
        k.value.summary,
      ].join("\n\n");
    case "modelChange":
      return `_Model: ${[k.value.provider, k.value.model].filter(Boolean).join("/")}_ (${code(e.id)})`;
    case "thinkingLevelChange":
      return `_Thinking level: ${k.value.thinkingLevel}_ (${code(e.id)})`;
    case "label":
      return `_Label: ${code(k.value.label)}_ (${code(e.id)})`;
    case "sessionInfo":
      if (isRoot || k.value.title === undefined) return undefined;
      return `_Title: ${k.value.title}_ (${code(e.id)})`;
    case "custom":
      return `_Custom entry ${code(k.value.namespace)}_ (${code(e.id)})`;
    default:
      return undefined;
  }
}

/** The entries from the root to `leaf`, in order. */
function pathTo(snap: SessionSnapshot, leaf: string): Entry[] {
  const byId = new Map(snap.entries.map((e) => [e.id, e]));
  const target = byId.get(leaf);
  if (target === undefined) {
    throw new CliError(`entry "${leaf}" is not in session "${snap.meta.id}"`);
  }
  if (target.kind.case === "leaf") {
    throw new CliError(
      `entry "${leaf}" is a Leaf entry (a move of the leaf), not on a path: name the entry it moved to, "${target.kind.value.leafId}"`,
    );
  }
  const path: Entry[] = [];
  for (let e: Entry | undefined = target; e !== undefined; ) {
    path.push(e);
    e = e.parentId === undefined ? undefined : byId.get(e.parentId);
  }
  return path.reverse();
}

/** The transcript (see the top of this file). */
export function exportMarkdown(snap: SessionSnapshot, opts: MarkdownExportOptions): string {
  const leaf = opts.leaf ?? snap.leafId;
  const path = leaf === "" ? [] : pathTo(snap, leaf);
  const m = snap.meta;
  const lines = [`# ${m.title ?? m.id}`, ""];
  lines.push(`- Session: ${code(m.id)} in workspace ${code(m.workspace)}`);
  if (m.createdAt !== undefined) lines.push(`- Created: ${iso(m.createdAt)}`);
  const tags = Object.entries(m.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (tags.length > 0) lines.push(`- Tags: ${tags.map(([k, v]) => code(`${k}=${v}`)).join(", ")}`);
  lines.push(
    path.length === 0
      ? "- Path: empty"
      : `- Path: ${path.length} entries, ${code((path[0] as Entry).id)} to ${code(leaf)}${leaf === snap.leafId ? " (the current leaf)" : ""}`,
  );
  const blocks = path
    .map((e, i) => entryBlock(e, i === 0, opts.thinking))
    .filter((b): b is string => b !== undefined);
  return `${[lines.join("\n"), ...blocks].join("\n\n")}\n`;
}
