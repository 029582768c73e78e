import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  type ContentPart,
  type Entry,
  type Message,
  type Withheld,
  WithheldReason,
} from "../../gen/sessiond/v1/entry_pb.js";
import { invalidArgument, notFound } from "./errors.js";
import { quote } from "./ids.js";

/**
 * Withholding an entry's content (redaction now, erasure later): the ONE
 * place that decides what an entry keeps. A withheld entry keeps its id,
 * parent_id, timestamp, seq and kind (the tree, seqs and paging are
 * unchanged) and of its kind what the tree, CONTEXT and billing need:
 *
 * - Message: role, tool_call_id, tool_name, is_error, model, provider,
 *   usage, stop_reason, and its tool calls' ids and names (so that tool
 *   results still answer their calls); it loses its text, thinking, image
 *   and blob parts, the tool calls' arguments and its metadata.
 * - Compaction: replaces_entry_ids and tokens_before; loses the summary.
 * - BranchSummary: from_id; loses the summary.
 * - Custom: namespace; loses the data.
 * - Label: the label (a rewind / fork target is structure); nothing to lose
 *   but it is marked.
 * - ModelChange, ThinkingLevelChange: everything (structure); marked.
 * - SessionInfo: refused (title, tags and metadata are structure).
 * - Leaf: refused (a pointer move has no content).
 *
 * Pure: no clock (the marker carries the time), no I/O.
 */

/** The text a withheld message, summary or branch summary reads as in a state. */
export function withheldText(w: Withheld): string {
  return w.reason === WithheldReason.ERASED ? "[erased]" : "[redacted]";
}

/** A Withheld marker. */
export function withheldMarker(
  reason: WithheldReason,
  by: string,
  at: Timestamp,
  why: string,
): Withheld {
  return { $typeName: "sessiond.v1.Withheld", reason, by, at, why };
}

/**
 * INVALID_ARGUMENT when entry `entry` cannot be withheld (SessionInfo,
 * Leaf, an entry without kind), naming it.
 */
export function checkWithholdable(entry: Entry): void {
  switch (entry.kind.case) {
    case "sessionInfo":
      throw invalidArgument(
        `entry ${quote(entry.id)} is a SessionInfo entry: its title, tags and metadata are the session's structure and cannot be withheld`,
      );
    case "leaf":
      throw invalidArgument(
        `entry ${quote(entry.id)} is a Leaf entry (a pointer move): it has no content to withhold`,
      );
    case undefined:
      throw invalidArgument(`entry ${quote(entry.id)} has no kind: nothing to withhold`);
    default:
      return;
  }
}

/**
 * The entry with its content withheld under `marker`. An entry already
 * withheld is returned as it is (the same object): withholding twice
 * changes nothing, so a retried redaction writes nothing. Throws
 * INVALID_ARGUMENT naming the entry for a SessionInfo or Leaf entry.
 */
export function withhold(entry: Entry, marker: Withheld): Entry {
  checkWithholdable(entry);
  if (entry.withheld !== undefined) return entry;
  const out: Entry = {
    $typeName: "sessiond.v1.Entry",
    id: entry.id,
    seq: entry.seq,
    kind: withheldKind(entry.kind),
    withheld: marker,
  };
  if (entry.parentId !== undefined) out.parentId = entry.parentId;
  if (entry.timestamp !== undefined) out.timestamp = entry.timestamp;
  return out;
}

function withheldKind(kind: Entry["kind"]): Entry["kind"] {
  switch (kind.case) {
    case "message":
      return { case: "message", value: withheldMessage(kind.value) };
    case "compaction": {
      const c = kind.value;
      const value: typeof c = {
        $typeName: "sessiond.v1.Compaction",
        summary: "",
        replacesEntryIds: [...c.replacesEntryIds],
      };
      if (c.tokensBefore !== undefined) value.tokensBefore = c.tokensBefore;
      return { case: "compaction", value };
    }
    case "branchSummary":
      return {
        case: "branchSummary",
        value: { $typeName: "sessiond.v1.BranchSummary", summary: "", fromId: kind.value.fromId },
      };
    case "custom":
      return {
        case: "custom",
        value: { $typeName: "sessiond.v1.Custom", namespace: kind.value.namespace },
      };
    case "label":
      return { case: "label", value: { $typeName: "sessiond.v1.Label", label: kind.value.label } };
    case "modelChange": {
      const m = kind.value;
      const value: typeof m = { $typeName: "sessiond.v1.ModelChange", model: m.model };
      if (m.provider !== undefined) value.provider = m.provider;
      return { case: "modelChange", value };
    }
    case "thinkingLevelChange":
      return {
        case: "thinkingLevelChange",
        value: {
          $typeName: "sessiond.v1.ThinkingLevelChange",
          thinkingLevel: kind.value.thinkingLevel,
        },
      };
    default:
      // SessionInfo, Leaf and no kind were refused by checkWithholdable.
      throw invalidArgument(`an entry of kind ${String(kind.case)} cannot be withheld`);
  }
}

function withheldMessage(m: Message): Message {
  const content: ContentPart[] = [];
  for (const p of m.content) {
    if (p.part.case !== "toolCall") continue;
    content.push({
      $typeName: "sessiond.v1.ContentPart",
      part: {
        case: "toolCall",
        value: { $typeName: "sessiond.v1.ToolCall", id: p.part.value.id, name: p.part.value.name },
      },
    });
  }
  const out: Message = {
    $typeName: "sessiond.v1.Message",
    role: m.role,
    content,
    isError: m.isError,
  };
  if (m.toolCallId !== undefined) out.toolCallId = m.toolCallId;
  if (m.toolName !== undefined) out.toolName = m.toolName;
  if (m.model !== undefined) out.model = m.model;
  if (m.provider !== undefined) out.provider = m.provider;
  if (m.usage !== undefined) out.usage = { ...m.usage };
  if (m.stopReason !== undefined) out.stopReason = m.stopReason;
  return out;
}

/**
 * A withheld message as a state shows it: the same role and fields, its
 * content the marker text followed by its tool calls (ids and names), so
 * that tool-call pairing stays valid for the LLM.
 */
export function withheldStateMessage(m: Message, w: Withheld): Message {
  const text: ContentPart = {
    $typeName: "sessiond.v1.ContentPart",
    part: { case: "text", value: withheldText(w) },
  };
  return { ...m, content: [text, ...m.content.filter((p) => p.part.case === "toolCall")] };
}

/** What a redaction writes (see planWithhold). */
export interface WithholdPlan {
  /** Every entry asked for, as it reads after the redaction, in seq order. */
  readonly entries: readonly Entry[];
  /** The entries that change (not withheld before), in seq order: what an engine writes. */
  readonly changed: readonly Entry[];
}

/** The most entry ids one redaction takes. */
export const MAX_WITHHOLD_IDS = 1000;

/**
 * Plans withholding entries `ids` of a log (looked up with `get`): NOT_FOUND
 * naming the first unknown id, INVALID_ARGUMENT naming a SessionInfo or
 * Leaf entry, before anything is planned, so that a refused request writes
 * nothing. Duplicate ids count once; entries already withheld are kept as
 * they are (not in `changed`).
 */
export function planWithhold(
  get: (id: string) => Entry | undefined,
  sessionId: string,
  ids: readonly string[],
  marker: Withheld,
): WithholdPlan {
  if (ids.length === 0) throw invalidArgument("no entry ids to redact");
  if (ids.length > MAX_WITHHOLD_IDS) {
    throw invalidArgument(`too many entry ids (${ids.length}, at most ${MAX_WITHHOLD_IDS})`);
  }
  const found = new Map<string, Entry>();
  for (const id of ids) {
    if (found.has(id)) continue;
    const entry = get(id);
    if (entry === undefined) {
      throw notFound(`entry ${quote(id)} not found in session ${quote(sessionId)}`);
    }
    checkWithholdable(entry);
    found.set(id, entry);
  }
  const entries: Entry[] = [];
  const changed: Entry[] = [];
  const sorted = [...found.values()].sort((a, b) => Number(a.seq) - Number(b.seq));
  for (const entry of sorted) {
    const next = withhold(entry, marker);
    entries.push(next);
    if (next !== entry) changed.push(next);
  }
  return { entries, changed };
}
