import type { JsonObject } from "@bufbuild/protobuf";
import type { Entry, EntryInit } from "../../client/index.js";
import { Role } from "../../client/index.js";
import { type StoredValue, storedJson, storedOf } from "./stored-value.js";

/**
 * How a LangGraph thread is kept in its sessiond session (the format both
 * this adapter and any other reader of the session follow):
 *
 * - a checkpoint is a Custom entry (namespace `langgraph.checkpoint`)
 *   whose parent is its parent checkpoint's entry (the session's root for
 *   the first checkpoint of a namespace), holding the namespace, the
 *   checkpoint without its channel values, the metadata, and the values
 *   of the channels whose version is new in it, by version;
 * - the pending writes of one `putWrites` are a Custom entry (namespace
 *   `langgraph.writes`) under their checkpoint's entry, with their task id
 *   and path;
 * - a value too large for an entry's fields is the text part of a
 *   Message entry off the checkpoints' path (the server keeps large parts
 *   as blobs), named by the value's `ref`.
 */
export const CHECKPOINT_NAMESPACE = "langgraph.checkpoint";
export const WRITES_NAMESPACE = "langgraph.writes";
/** Metadata key of a Message entry that carries a value's text. */
export const CARRIER_KEY = "langgraph_value";

/** A checkpoint as its entry holds it. */
export interface CheckpointRecord {
  entryId: string;
  ns: string;
  id: string;
  parent?: string | undefined;
  /** The checkpoint without channel_values. */
  checkpoint: StoredValue;
  metadata: StoredValue;
  /** Channel -> the value of the version new in this checkpoint. */
  values: Record<string, { version: string; value: StoredValue }>;
}

/** One write of a task, as its entry holds it. */
export interface WriteRecord {
  task: string;
  path: string;
  channel: string;
  idx: number;
  value: StoredValue;
}

/** The writes of one putWrites. */
export interface WritesRecord {
  ns: string;
  checkpoint: string;
  writes: WriteRecord[];
}

export function checkpointEntry(
  id: string,
  parentId: string,
  r: Omit<CheckpointRecord, "entryId">,
): EntryInit {
  const values: JsonObject = {};
  for (const [ch, { version, value }] of Object.entries(r.values)) {
    values[ch] = { v: version, ...storedJson(value) };
  }
  const data: JsonObject = {
    ns: r.ns,
    id: r.id,
    checkpoint: storedJson(r.checkpoint),
    metadata: storedJson(r.metadata),
    values,
  };
  if (r.parent !== undefined) data.parent = r.parent;
  return {
    id,
    parentId,
    kind: { case: "custom", value: { namespace: CHECKPOINT_NAMESPACE, data } },
  };
}

export function writesEntry(id: string, parentId: string, r: WritesRecord): EntryInit {
  const data: JsonObject = {
    ns: r.ns,
    checkpoint: r.checkpoint,
    writes: r.writes.map((w) => ({
      task: w.task,
      path: w.path,
      c: w.channel,
      i: w.idx,
      ...storedJson(w.value),
    })),
  };
  return { id, parentId, kind: { case: "custom", value: { namespace: WRITES_NAMESPACE, data } } };
}

/** A Message entry off the path whose one text part is a large value's text. */
export function carrierEntry(id: string, parentId: string, text: string): EntryInit {
  return {
    id,
    parentId,
    kind: {
      case: "message",
      value: {
        role: Role.USER,
        content: [{ part: { case: "text", value: text } }],
        metadata: { [CARRIER_KEY]: true },
      },
    },
  };
}

/** What an entry of a thread's session is to the saver. */
export type ThreadEntry =
  | { kind: "checkpoint"; record: CheckpointRecord }
  | { kind: "writes"; record: WritesRecord }
  | { kind: "carrier"; text: string }
  | undefined;

export function threadEntryOf(e: Entry): ThreadEntry {
  if (e.kind.case === "custom") {
    const { namespace, data } = e.kind.value;
    if (namespace === CHECKPOINT_NAMESPACE && data !== undefined) {
      return { kind: "checkpoint", record: checkpointOf(e.id, data) };
    }
    if (namespace === WRITES_NAMESPACE && data !== undefined) {
      return { kind: "writes", record: writesOf(data) };
    }
  } else if (e.kind.case === "message" && e.kind.value.metadata?.[CARRIER_KEY] === true) {
    const part = e.kind.value.content[0]?.part;
    if (part?.case === "text") return { kind: "carrier", text: part.value };
  }
  return undefined;
}

function str(v: unknown): string {
  if (typeof v !== "string")
    throw new Error(`langgraph entry: a string was expected, got ${typeof v}`);
  return v;
}

function stored(v: unknown): StoredValue {
  const out = storedOf(v);
  if (out === undefined) throw new Error("langgraph entry: a stored value was expected");
  return out;
}

function checkpointOf(entryId: string, data: JsonObject): CheckpointRecord {
  const values: CheckpointRecord["values"] = {};
  for (const [ch, v] of Object.entries((data.values ?? {}) as JsonObject)) {
    values[ch] = { version: str((v as JsonObject).v), value: stored(v) };
  }
  return {
    entryId,
    ns: str(data.ns),
    id: str(data.id),
    parent: typeof data.parent === "string" ? data.parent : undefined,
    checkpoint: stored(data.checkpoint),
    metadata: stored(data.metadata),
    values,
  };
}

function writesOf(data: JsonObject): WritesRecord {
  const writes = ((data.writes ?? []) as JsonObject[]).map((w) => ({
    task: str(w.task),
    path: typeof w.path === "string" ? w.path : "",
    channel: str(w.c),
    idx: Number(w.i),
    value: stored(w),
  }));
  return { ns: str(data.ns), checkpoint: str(data.checkpoint), writes };
}
