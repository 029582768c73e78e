import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  BlobPart,
  type BlobRef,
  type ContentPart,
  type Entry,
  EntrySchema,
  type Message,
  Role,
  resolvedPart,
  roleName,
  type Usage,
} from "../web/index.js";
import { h, time } from "./dom.js";
import { langGraphEntry } from "./langgraph.js";
import { langGraphView } from "./langgraph-view.js";
import { markdown } from "./markdown.js";

/** Makes a link to another entry of the same session. */
export type EntryLink = (entryId: string, text?: string) => HTMLElement;

function json(value: JsonValue | undefined): HTMLElement {
  return h("pre", { class: "json" }, JSON.stringify(value ?? null, null, 2));
}

function field(name: string, ...value: (Node | string | undefined)[]): HTMLElement {
  return h("div", { class: "field" }, h("span", { class: "k" }, name), " ", ...value);
}

/** The blob: URLs of the images on the pane, released when it is drawn again. */
const imageUrls: string[] = [];

/** Frees the images of the previous pane (their bytes stay alive until revoked). */
export function releaseImages(): void {
  for (const url of imageUrls.splice(0)) URL.revokeObjectURL(url);
}

/** Image types a browser shows as images and nothing else (no SVG: it is a document). */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** Reads a blob of the session on view (set by the pane that draws it). */
export type BlobReader = (ref: BlobRef) => Promise<Uint8Array>;

let readBlob: BlobReader | undefined;

/** The blob reader of the session the next parts are drawn for. */
export function useBlobReader(reader: BlobReader): void {
  readBlob = reader;
}

function sizeText(bytes: bigint): string {
  const n = Number(bytes);
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${Math.round(n / 1024)} KB`;
}

/**
 * A part kept as a blob: an image is fetched (GetBlob) and shown; a text or
 * thinking part shows its preview and a button that loads the rest and
 * draws it as the part it stands for.
 */
function blobPart(ref: BlobRef, text: TextAs): HTMLElement {
  const reader = readBlob;
  if (ref.part === BlobPart.IMAGE) {
    const label = `image (${ref.mediaType}, ${sizeText(ref.size)})`;
    if (!IMAGE_TYPES.has(ref.mediaType) || reader === undefined) {
      return h("div", { class: "part muted" }, label);
    }
    const img = h("img", { alt: label, "data-blob": ref.sha256 }) as HTMLImageElement;
    const box = h("div", { class: "part image" }, img);
    reader(ref).then(
      (data) => {
        const url = URL.createObjectURL(new Blob([data as BlobPart_], { type: ref.mediaType }));
        imageUrls.push(url);
        img.src = url;
      },
      (err: unknown) =>
        box.replaceWith(h("div", { class: "part error" }, `${label}: ${String(err)}`)),
    );
    return box;
  }
  const what = ref.part === BlobPart.THINKING ? "thinking" : "text";
  const load = h("button", { class: "link load-blob", "data-blob": ref.sha256 }, "load all");
  const box = h(
    "div",
    { class: `part blob ${what}` },
    h("pre", { class: "wrap" }, ref.preview),
    h(
      "div",
      { class: "muted" },
      `${what}: the first 200 characters of ${sizeText(ref.size)} `,
      load,
    ),
  );
  load.addEventListener("click", () => {
    if (reader === undefined) return;
    load.replaceWith(h("span", { class: "muted" }, "loading…"));
    reader(ref).then(
      (data) => box.replaceWith(part(resolvedPart(ref, data), text)),
      (err: unknown) => box.append(h("div", { class: "error" }, String(err))),
    );
  });
  return box;
}

/** The DOM's Blob part type (BlobPart is the proto enum here). */
type BlobPart_ = globalThis.BlobPart;

/**
 * How a message's text parts are drawn: a person's or a model's prose is
 * markdown; a tool's output (a file it read, a page it fetched, a command's
 * output) is what the tool returned, so it is shown as it is, never rendered.
 */
type TextAs = "markdown" | "output";

function part(p: ContentPart, text: TextAs): HTMLElement {
  switch (p.part.case) {
    case "blob":
      return blobPart(p.part.value, text);
    case "text":
      return text === "output"
        ? h("pre", { class: "part tool-output wrap" }, p.part.value)
        : h("div", { class: "part text" }, markdown(p.part.value));
    case "thinking":
      return h(
        "details",
        { class: "part thinking" },
        h("summary", null, "thinking"),
        h("pre", { class: "wrap" }, p.part.value.thinking),
      );
    case "image": {
      const { mimeType, data } = p.part.value;
      if (!IMAGE_TYPES.has(mimeType))
        return h("div", { class: "part muted" }, `image (${mimeType})`);
      const url = URL.createObjectURL(new Blob([data as BlobPart_], { type: mimeType }));
      imageUrls.push(url);
      return h("div", { class: "part image" }, h("img", { src: url, alt: `image (${mimeType})` }));
    }
    case "toolCall": {
      const { id, name, arguments: args } = p.part.value;
      return h(
        "div",
        { class: "part tool-call" },
        h(
          "div",
          null,
          h("span", { class: "badge tool" }, "tool call"),
          " ",
          h("b", null, name),
          " ",
          h("code", null, id),
        ),
        json(args === undefined ? null : toJson(ValueSchema, args)),
      );
    }
    default:
      return h("div", { class: "part muted" }, "empty part");
  }
}

function usage(u: Usage): string {
  const reasoning = u.reasoningTokens > 0n ? ` (reasoning ${u.reasoningTokens})` : "";
  const cost = u.cost === undefined ? "" : ` · cost ${u.cost.amount} ${u.cost.currency}`;
  return `in ${u.inputTokens} · out ${u.outputTokens}${reasoning} · cache read ${u.cacheReadTokens} · cache write ${u.cacheWriteTokens}${cost}`;
}

/** A message: role, model, tool call it answers, usage, then its parts in order. */
export function renderMessage(m: Message): HTMLElement {
  const role = roleName(m.role);
  return h(
    "div",
    { class: `message role-${role}` },
    h(
      "div",
      { class: "message-head" },
      h("span", { class: `badge role-${role}` }, role),
      m.model !== undefined && h("span", { class: "muted" }, ` ${m.provider ?? ""} ${m.model}`),
      m.toolName !== undefined && h("span", null, " ", h("b", null, m.toolName)),
      m.toolCallId !== undefined && h("span", null, " answers ", h("code", null, m.toolCallId)),
      m.isError && h("span", { class: "badge error" }, "error"),
      m.stopReason !== undefined && h("span", { class: "muted" }, ` stop: ${m.stopReason}`),
    ),
    ...m.content.map((p) => part(p, m.role === Role.TOOL ? "output" : "markdown")),
    m.usage !== undefined && h("div", { class: "usage muted" }, `usage: ${usage(m.usage)}`),
    m.metadata !== undefined && field("metadata", json(m.metadata)),
  );
}

function body(e: Entry, link: EntryLink, sessionLink: (id: string) => HTMLElement): HTMLElement {
  const k = e.kind;
  switch (k.case) {
    case "message":
      return renderMessage(k.value);
    case "sessionInfo": {
      const v = k.value;
      return h(
        "div",
        null,
        field("title", v.title),
        field("cwd", v.cwd),
        v.parentSessionId !== undefined && field("parent session", sessionLink(v.parentSessionId)),
        v.agentType !== undefined && field("agent type", v.agentType),
        v.forkedFrom !== undefined &&
          field(
            "forked from",
            sessionLink(v.forkedFrom.sessionId),
            " at ",
            h("code", null, v.forkedFrom.entryId),
          ),
        Object.keys(v.tags).length > 0 && field("tags", json(v.tags)),
        v.metadata !== undefined && field("metadata", json(v.metadata)),
      );
    }
    case "compaction":
      return h(
        "div",
        null,
        h(
          "div",
          { class: "banner compaction" },
          "Compaction: the entries it replaces are summarised for the model",
        ),
        markdown(k.value.summary),
        k.value.tokensBefore !== undefined && field("tokens before", String(k.value.tokensBefore)),
        field("replaces", ...k.value.replacesEntryIds.flatMap((id) => [link(id), " "])),
      );
    case "branchSummary":
      return h(
        "div",
        null,
        h("div", { class: "banner summary" }, "Branch summary of an abandoned branch"),
        markdown(k.value.summary),
        field("branch leaf", link(k.value.fromId)),
      );
    case "label":
      return field(
        "label",
        h("span", { class: "badge label" }, k.value.label),
        " on ",
        link(e.parentId ?? ""),
      );
    case "leaf":
      return field("leaf moved to", link(k.value.leafId));
    case "modelChange":
      return field("model", `${k.value.provider ?? ""} ${k.value.model}`);
    case "thinkingLevelChange":
      return field("thinking level", k.value.thinkingLevel);
    case "custom": {
      const lg = langGraphEntry(k.value.namespace, k.value.data);
      if (lg !== undefined) return langGraphView(lg, e.parentId, link);
      return h("div", null, field("namespace", k.value.namespace), json(k.value.data ?? null));
    }
    default:
      return h("div", { class: "muted" }, "entry of an unknown kind");
  }
}

/** An entry in full: where it sits, when, what it is, and its raw JSON. */
export function renderEntry(
  e: Entry,
  link: EntryLink,
  sessionLink: (id: string) => HTMLElement,
): HTMLElement {
  return h(
    "article",
    { class: "entry", "data-entry": e.id },
    h(
      "div",
      { class: "entry-head" },
      h("span", { class: "badge kind" }, e.kind.case ?? "unknown"),
      " ",
      h("code", null, e.id),
      " · seq ",
      String(e.seq),
      " · ",
      time(
        e.timestamp === undefined
          ? undefined
          : new Date(Number(e.timestamp.seconds) * 1000 + Math.floor(e.timestamp.nanos / 1e6)),
      ),
      e.parentId !== undefined && h("span", null, " · parent ", link(e.parentId)),
    ),
    body(e, link, sessionLink),
    h("details", { class: "raw" }, h("summary", null, "raw JSON"), json(toJson(EntrySchema, e))),
  );
}
