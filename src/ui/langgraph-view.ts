import type { JsonValue } from "@bufbuild/protobuf";
import { h } from "./dom.js";
import {
  type LangGraphEntry,
  type LgCheckpoint,
  type LgValue,
  type LgWrites,
  shortId,
  taskName,
  writeIndex,
} from "./langgraph.js";

/** Makes a link to another entry of the same session. */
type EntryLink = (entryId: string, text?: string) => HTMLElement;

function field(name: string, ...value: (Node | string | undefined)[]): HTMLElement {
  return h("div", { class: "field" }, h("span", { class: "k" }, name), " ", ...value);
}

function pre(value: JsonValue): HTMLElement {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A short JSON value on one line; a longer one folded, its size in the summary. */
function jsonValue(type: string, json: JsonValue, bytes: number | undefined): HTMLElement {
  const line = JSON.stringify(json);
  if (line.length <= 80) return h("code", { class: "lg-json" }, line);
  return h(
    "details",
    { class: "lg-value" },
    h("summary", null, `${type}, ${size(bytes ?? line.length)}`),
    pre(json),
  );
}

/**
 * A stored value: decoded when it is JSON text, else its type and size;
 * one held elsewhere says where. Always text, never markup.
 */
function valueView(v: LgValue, link: EntryLink): HTMLElement {
  if (v.json !== undefined) return jsonValue(v.type, v.json, v.bytes);
  if (v.ref !== undefined) {
    return h("span", { class: "lg-size" }, `${v.type}, its text in entry `, link(v.ref));
  }
  if (v.base !== undefined) {
    const { checkpoint, keep, tail } = v.base;
    return h(
      "details",
      { class: "lg-value" },
      h(
        "summary",
        { title: `checkpoint ${checkpoint}` },
        `${v.type}: the first ${keep} characters of checkpoint ${shortId(checkpoint)}'s value, then ${tail.length} more`,
      ),
      h("pre", { class: "wrap" }, tail),
    );
  }
  return h(
    "span",
    { class: "lg-size" },
    v.bytes === 0 ? `${v.type}, empty` : `${v.type}, ${size(v.bytes ?? 0)}`,
  );
}

function table(head: string[], rows: (Node | string)[][], cls: string): HTMLElement {
  return h(
    "table",
    { class: `lg-table ${cls}` },
    h("thead", null, h("tr", null, ...head.map((c) => h("th", null, c)))),
    h("tbody", null, ...rows.map((r) => h("tr", null, ...r.map((c) => h("td", null, c))))),
  );
}

const SHOWN_METADATA = new Set(["step", "source"]);

function metadataView(c: LgCheckpoint, link: EntryLink): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (c.step !== undefined) out.push(field("step", String(c.step)));
  if (c.source !== undefined) out.push(field("source", c.source));
  const m = c.metadata.json;
  if (typeof m === "object" && m !== null && !Array.isArray(m)) {
    const rest = Object.entries(m).filter(([k]) => !SHOWN_METADATA.has(k));
    if (rest.length > 0) {
      out.push(
        table(
          ["metadata", "value"],
          rest.map(([k, v]) => [h("code", null, k), jsonValue("json", v, undefined)]),
          "lg-metadata",
        ),
      );
    }
  } else {
    out.push(field("metadata", valueView(c.metadata, link)));
  }
  return out;
}

/** The checkpoint's own fields (format, time, channel versions) when they are JSON. */
function versionsOf(c: LgCheckpoint): Record<string, string> | undefined {
  const cp = c.checkpoint.json;
  if (typeof cp !== "object" || cp === null || Array.isArray(cp)) return undefined;
  const versions = cp.channel_versions;
  if (typeof versions !== "object" || versions === null || Array.isArray(versions))
    return undefined;
  return Object.fromEntries(Object.entries(versions).map(([ch, v]) => [ch, String(v)]));
}

function checkpointView(c: LgCheckpoint, parentId: string | undefined, link: EntryLink) {
  const cp = c.checkpoint.json as { v?: JsonValue; ts?: JsonValue } | undefined;
  const stored = new Map(c.values.map((v) => [v.channel, v]));
  const versions = versionsOf(c);
  const rows: (Node | string)[][] = c.values.map((v) => [
    h("code", null, v.channel),
    v.version,
    valueView(v.value, link),
  ]);
  for (const [ch, ver] of Object.entries(versions ?? {})) {
    if (stored.has(ch)) continue;
    rows.push([
      h("code", null, ch),
      ver,
      h("span", { class: "muted" }, "unchanged: stored by an earlier checkpoint"),
    ]);
  }
  return h(
    "section",
    { class: "langgraph checkpoint", "data-checkpoint": c.id },
    h("div", { class: "banner lg" }, "LangGraph checkpoint"),
    field("checkpoint id", h("code", null, c.id)),
    c.parent !== undefined
      ? field(
          "parent",
          parentId !== undefined ? link(parentId, c.parent) : h("code", null, c.parent),
        )
      : field("parent", "none (the thread's first checkpoint)"),
    c.ns !== "" ? field("namespace", h("code", null, c.ns)) : undefined,
    c.threadId !== undefined ? field("thread", h("code", null, c.threadId)) : undefined,
    ...metadataView(c, link),
    cp !== undefined && typeof cp === "object" && typeof cp.ts === "string"
      ? field("time", cp.ts, typeof cp.v === "number" ? ` · format v${cp.v}` : undefined)
      : undefined,
    c.checkpoint.json === undefined
      ? field("checkpoint", valueView(c.checkpoint, link))
      : undefined,
    h(
      "h4",
      null,
      versions === undefined
        ? `Channels stored here (${c.values.length})`
        : `Channels (${rows.length}; ${c.values.length} stored here)`,
    ),
    rows.length === 0
      ? h("p", { class: "muted" }, "none")
      : table(["channel", "version", "value"], rows, "lg-channels"),
  );
}

function writesView(w: LgWrites, link: EntryLink, parentId: string | undefined) {
  const tasks = [...new Map(w.writes.map((x) => [`${x.task}\n${x.path}`, x])).values()];
  return h(
    "section",
    { class: "langgraph writes" },
    h("div", { class: "banner lg" }, "LangGraph pending writes"),
    field(
      "checkpoint",
      h("code", null, w.checkpoint),
      parentId !== undefined ? h("span", null, " · under ", link(parentId)) : undefined,
    ),
    w.ns !== undefined && w.ns !== "" ? field("namespace", h("code", null, w.ns)) : undefined,
    ...tasks.map((t) =>
      field(
        "task",
        h("b", null, taskName(t)),
        " ",
        h("code", { title: "task id" }, t.task),
        t.path !== "" ? h("span", { class: "muted" }, ` path ${t.path}`) : undefined,
      ),
    ),
    table(
      ["task", "channel", "index", "value"],
      w.writes.map((x) => [
        taskName(x),
        h("code", null, x.channel),
        writeIndex(x.idx),
        valueView(x.value, link),
      ]),
      "lg-writes",
    ),
  );
}

/** A LangGraph checkpoint or writes entry in the pane (its raw JSON stays below it). */
export function langGraphView(
  e: LangGraphEntry,
  parentId: string | undefined,
  link: EntryLink,
): HTMLElement {
  return e.kind === "checkpoint"
    ? checkpointView(e, parentId, link)
    : writesView(e, link, parentId);
}
