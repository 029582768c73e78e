import type { JsonValue } from "@bufbuild/protobuf";

/**
 * LangGraph threads as the two savers keep them in a session, read for the
 * viewer (no DOM here). Both store a checkpoint as a Custom entry of
 * namespace `langgraph.checkpoint` under its parent checkpoint's entry, and
 * the pending writes of one task as a Custom entry of `langgraph.writes`;
 * their fields differ:
 *
 * - `sessiond/langgraph` (TypeScript, src/adapters/langgraph/thread-entries.ts):
 *   a checkpoint `{ns, id, parent?, checkpoint, metadata, values: {channel:
 *   {v, ...value}}}`, writes `{ns, checkpoint, writes: [{task, path, c, i,
 *   ...value}]}`, a value `{t, d?, b64?, ref?, base?, keep?}` (`d` the text,
 *   base64 when `b64`; `ref` a Message entry holding the text; `base` and
 *   `keep`: the first `keep` characters of checkpoint `base`'s value, then `d`);
 * - `sessiond.langgraph` (Python, clients/python/src/sessiond/langgraph_log.py):
 *   a checkpoint `{checkpoint_id, parent_checkpoint_id, thread_id,
 *   checkpoint_ns, source?, step?, checkpoint, metadata, values: [{channel,
 *   version, ...value}]}`, writes `{checkpoint_id, task_id, task_path,
 *   writes: [{idx, channel, ...value}]}`, a value `{type, json?}` (JSON text)
 *   or `{type, b64?}` (other bytes, usually msgpack).
 *
 * Data of neither shape reads as undefined: the entry is drawn as any
 * Custom entry.
 */

export const CHECKPOINT_NAMESPACE = "langgraph.checkpoint";
export const WRITES_NAMESPACE = "langgraph.writes";

/** Session tags both savers set. */
export const KIND_TAG = "langgraph.kind";
export const THREAD_TAG = "langgraph.thread";
export const NS_TAG = "langgraph.ns";

/** Which saver's shape an entry has. */
export type Saver = "js" | "python";

/** One serialized value as the viewer shows it. */
export interface LgValue {
  /** The serializer's type ("json", "msgpack", "bytes", ...). */
  type: string;
  /** Set when the value is JSON text: the value it stands for. */
  json?: JsonValue;
  /** The value's size in bytes when it is held here (the text's UTF-8 size, or the bytes'). */
  bytes?: number;
  /** JS saver: the Message entry whose text part holds the value. */
  ref?: string;
  /** JS saver: the value is the first `keep` characters of checkpoint `base`'s value, then `tail`. */
  base?: { checkpoint: string; keep: number; tail: string };
}

export interface LgChannel {
  channel: string;
  version: string;
  value: LgValue;
}

export interface LgCheckpoint {
  kind: "checkpoint";
  saver: Saver;
  id: string;
  parent: string | undefined;
  ns: string;
  /** Python saver: the thread id it stores in each checkpoint. */
  threadId: string | undefined;
  step: number | undefined;
  source: string | undefined;
  metadata: LgValue;
  /** The checkpoint without its channel values (JSON: v, ts, channel_versions, versions_seen). */
  checkpoint: LgValue;
  /** The channels whose value this checkpoint's entry holds (those new in it). */
  values: LgChannel[];
}

export interface LgWrite {
  task: string;
  path: string;
  channel: string;
  idx: number;
  value: LgValue;
}

export interface LgWrites {
  kind: "writes";
  saver: Saver;
  checkpoint: string;
  ns: string | undefined;
  writes: LgWrite[];
}

export type LangGraphEntry = LgCheckpoint | LgWrites;

type Obj = { readonly [k: string]: JsonValue };

function obj(v: unknown): Obj | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** A channel version: a string, or a number (the Python saver's ints). */
function version(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return undefined;
}

function utf8Size(s: string): number {
  return new TextEncoder().encode(s).length;
}

function base64Size(b64: string): number {
  const body = b64.replace(/\s+/g, "");
  const pad = body.endsWith("==") ? 2 : body.endsWith("=") ? 1 : 0;
  return Math.floor((body.length * 3) / 4) - pad;
}

/** The JSON a text stands for, or undefined when it is not JSON. */
function parsed(text: string): { json: JsonValue } | undefined {
  try {
    return { json: JSON.parse(text) as JsonValue };
  } catch {
    return undefined;
  }
}

/** A text value: decoded when it is JSON, else its size. */
function textValue(type: string, text: string): LgValue {
  const out: LgValue = { type, bytes: utf8Size(text) };
  const p = parsed(text);
  if (p !== undefined) out.json = p.json;
  return out;
}

/** A value of the JS saver (`{t, d?, b64?, ref?, base?, keep?}`). */
function jsValue(v: unknown): LgValue | undefined {
  const o = obj(v);
  const type = str(o?.t);
  if (o === undefined || type === undefined) return undefined;
  const d = str(o.d);
  if (typeof o.ref === "string") return { type, ref: o.ref };
  if (typeof o.base === "string" && typeof o.keep === "number") {
    return { type, base: { checkpoint: o.base, keep: o.keep, tail: d ?? "" } };
  }
  if (o.b64 === true) return { type, bytes: base64Size(d ?? "") };
  return textValue(type, d ?? "");
}

/** A value of the Python saver (`{type, json?}` or `{type, b64?}`). */
function pyValue(v: unknown): LgValue | undefined {
  const o = obj(v);
  const type = str(o?.type);
  if (o === undefined || type === undefined) return undefined;
  const text = str(o.json);
  if (text !== undefined) return textValue(type, text);
  const b64 = str(o.b64);
  return { type, bytes: b64 === undefined ? 0 : base64Size(b64) };
}

/** step and source from the metadata when it is JSON, else from the entry's own fields. */
function stepAndSource(
  metadata: LgValue,
  data: Obj,
): { step: number | undefined; source: string | undefined } {
  const m = obj(metadata.json);
  const step = typeof m?.step === "number" ? m.step : data.step;
  const source = typeof m?.source === "string" ? m.source : data.source;
  return {
    step: typeof step === "number" ? step : undefined,
    source: typeof source === "string" ? source : undefined,
  };
}

function jsCheckpoint(data: Obj): LgCheckpoint | undefined {
  const id = str(data.id);
  const ns = str(data.ns);
  const checkpoint = jsValue(data.checkpoint);
  const metadata = jsValue(data.metadata);
  if (id === undefined || ns === undefined || checkpoint === undefined || metadata === undefined)
    return undefined;
  const values: LgChannel[] = [];
  const held = data.values === undefined ? {} : obj(data.values);
  if (held === undefined) return undefined;
  for (const [channel, v] of Object.entries(held)) {
    const ver = version(obj(v)?.v);
    const value = jsValue(v);
    if (ver === undefined || value === undefined) return undefined;
    values.push({ channel, version: ver, value });
  }
  return {
    kind: "checkpoint",
    saver: "js",
    id,
    parent: str(data.parent),
    ns,
    threadId: undefined,
    ...stepAndSource(metadata, data),
    metadata,
    checkpoint,
    values,
  };
}

function pyCheckpoint(data: Obj): LgCheckpoint | undefined {
  const id = str(data.checkpoint_id);
  const checkpoint = pyValue(data.checkpoint);
  const metadata = pyValue(data.metadata);
  if (id === undefined || checkpoint === undefined || metadata === undefined) return undefined;
  const list = data.values ?? [];
  if (!Array.isArray(list)) return undefined;
  const values: LgChannel[] = [];
  for (const item of list) {
    const o = obj(item);
    const channel = str(o?.channel);
    const ver = version(o?.version);
    const value = pyValue(item);
    if (channel === undefined || ver === undefined || value === undefined) return undefined;
    values.push({ channel, version: ver, value });
  }
  return {
    kind: "checkpoint",
    saver: "python",
    id,
    parent: str(data.parent_checkpoint_id) || undefined,
    ns: str(data.checkpoint_ns) ?? "",
    threadId: str(data.thread_id),
    ...stepAndSource(metadata, data),
    metadata,
    checkpoint,
    values,
  };
}

function jsWrites(data: Obj): LgWrites | undefined {
  const checkpoint = str(data.checkpoint);
  if (checkpoint === undefined || !Array.isArray(data.writes)) return undefined;
  const writes: LgWrite[] = [];
  for (const item of data.writes) {
    const o = obj(item);
    const task = str(o?.task);
    const channel = str(o?.c);
    const value = jsValue(item);
    if (task === undefined || channel === undefined || typeof o?.i !== "number" || !value)
      return undefined;
    writes.push({ task, path: str(o.path) ?? "", channel, idx: o.i, value });
  }
  return { kind: "writes", saver: "js", checkpoint, ns: str(data.ns), writes };
}

function pyWrites(data: Obj): LgWrites | undefined {
  const checkpoint = str(data.checkpoint_id);
  const task = str(data.task_id);
  if (checkpoint === undefined || task === undefined || !Array.isArray(data.writes))
    return undefined;
  const path = str(data.task_path) ?? "";
  const writes: LgWrite[] = [];
  for (const item of data.writes) {
    const o = obj(item);
    const channel = str(o?.channel);
    const value = pyValue(item);
    if (channel === undefined || typeof o?.idx !== "number" || value === undefined)
      return undefined;
    writes.push({ task, path, channel, idx: o.idx, value });
  }
  return { kind: "writes", saver: "python", checkpoint, ns: undefined, writes };
}

/** What a Custom entry is to LangGraph, or undefined when it is none of the savers' shapes. */
export function langGraphEntry(namespace: string, data: unknown): LangGraphEntry | undefined {
  const d = obj(data);
  if (d === undefined) return undefined;
  if (namespace === CHECKPOINT_NAMESPACE) {
    return "checkpoint_id" in d ? pyCheckpoint(d) : jsCheckpoint(d);
  }
  if (namespace === WRITES_NAMESPACE) {
    return "checkpoint_id" in d ? pyWrites(d) : jsWrites(d);
  }
  return undefined;
}

/**
 * A checkpoint id made short enough for a row: LangGraph's ids are UUIDv6,
 * whose start is the time (the same over a whole run) and whose last
 * characters are random, so the short id is its last 8 characters.
 */
export function shortId(id: string): string {
  return id.length <= 12 ? id : `…${id.slice(-8)}`;
}

/** The task id of the writes a Command makes (its resume, update or goto): LangGraph's NULL_TASK_ID. */
const NULL_TASK_ID = "00000000-0000-0000-0000-000000000000";

/**
 * A task by its node: LangGraph's task paths start with `~__pregel_pull,
 * <node>` for a node's task; a Command's writes have the null task id.
 */
export function taskName(w: { task: string; path: string }): string {
  if (w.task === NULL_TASK_ID) return "command";
  const parts = w.path.split(", ");
  if (parts[0] === "~__pregel_pull" && parts[1] !== undefined && parts[1] !== "") return parts[1];
  return `task ${shortId(w.task)}`;
}

/** The special write indexes (LangGraph's WRITES_IDX_MAP). */
const SPECIAL: Record<number, string> = {
  [-1]: "error",
  [-2]: "scheduled",
  [-3]: "interrupt",
  [-4]: "resume",
};

export function writeIndex(idx: number): string {
  return SPECIAL[idx] === undefined ? String(idx) : `${idx} (${SPECIAL[idx]})`;
}

/** How a row of the tree shows the entry: its badge, its line and the line's tooltip. */
export interface RowLabel {
  badge: string;
  text: string;
  title: string;
}

/** A checkpoint: `step 2 · loop · …a1b2c3d4`; writes: `model → messages, branch:to:tools`. */
export function rowLabel(e: LangGraphEntry): RowLabel {
  if (e.kind === "checkpoint") {
    const parts = [
      e.ns !== "" ? `[${e.ns}]` : undefined,
      e.step !== undefined ? `step ${e.step}` : undefined,
      e.source,
      shortId(e.id),
    ].filter((p) => p !== undefined);
    return { badge: "checkpoint", text: parts.join(" · "), title: `checkpoint ${e.id}` };
  }
  const byTask = new Map<string, string[]>();
  for (const w of e.writes) {
    const name = taskName(w);
    const channels = byTask.get(name) ?? [];
    if (!channels.includes(w.channel)) channels.push(w.channel);
    byTask.set(name, channels);
  }
  const text = [...byTask].map(([name, channels]) => `${name} → ${channels.join(", ")}`);
  return {
    badge: "writes",
    text: `${text.join("; ")} · of ${shortId(e.checkpoint)}`,
    title: `pending writes of checkpoint ${e.checkpoint}`,
  };
}
