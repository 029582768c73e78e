import { isDeepStrictEqual } from "node:util";
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { ENTRY_ID_PATTERN } from "../../core/ids.js";
import type { SessionLog } from "../../core/session-log.js";
import type { Lookup } from "../../core/tree.js";
import { plannedEntry } from "../remote-session.js";
import { canAnswer } from "../tool-answer.js";
import {
  answeredCall,
  carrierOf,
  compactionOf,
  customCarrier,
  isCompactBoundary,
  lineOf,
} from "./transcript-entry.js";

/**
 * What SessiondSessionStore writes for a batch of transcript lines, planned
 * against the session's log as the server has it: Appends of bounded size,
 * each line a carrier entry placed in Claude's own tree.
 */

/** Lines per Append, and their JSON characters: one Append stays well under the 4 MiB message limit. */
const CHUNK_LINES = 200;
const CHUNK_CHARS = 1024 * 1024;

/** A batch of lines cut into Appends of bounded size (the SDK imports 500 lines at a time). */
export function chunks(lines: readonly SessionStoreEntry[]): SessionStoreEntry[][] {
  const out: SessionStoreEntry[][] = [];
  let chunk: SessionStoreEntry[] = [];
  let chars = 0;
  for (const line of lines) {
    const size = JSON.stringify(line).length;
    if (chunk.length > 0 && (chunk.length >= CHUNK_LINES || chars + size > CHUNK_CHARS)) {
      out.push(chunk);
      chunk = [];
      chars = 0;
    }
    chunk.push(line);
    chars += size;
  }
  if (chunk.length > 0) out.push(chunk);
  return out;
}

/** The messages and compactions a compaction placed under `parentId` replaces: all of its path but the root. */
function replaceable(lookup: Lookup, parentId: string): string[] {
  const ids: string[] = [];
  for (let e = lookup(parentId); e?.parentId !== undefined; e = lookup(e.parentId)) {
    if (e.kind.case === "message" || e.kind.case === "compaction") ids.push(e.id);
  }
  return ids.reverse();
}

/** Whether `line` is the line `stored` carries (JSON-equal: key order and undefined fields aside). */
function sameLine(stored: Entry, line: SessionStoreEntry): boolean {
  const held = lineOf(stored);
  return held !== undefined && isDeepStrictEqual(held, JSON.parse(JSON.stringify(line)));
}

/**
 * The parent for a line whose parent line is `parentId`: the leaf instead
 * when the leaf hangs under that line through SessionInfo entries that
 * carry no line (this store's summary, a tag set with `sessiond tag`), so
 * that the conversation stays one path through them rather than leaving
 * them on a branch of their own.
 */
function through(lookup: Lookup, leaf: string, parentId: string): string {
  for (
    let e = lookup(leaf);
    e !== undefined;
    e = e.parentId === undefined ? undefined : lookup(e.parentId)
  ) {
    if (e.id === parentId) return leaf;
    if (e.kind.case !== "sessionInfo" || lineOf(e) !== undefined) return parentId;
  }
  return parentId;
}

/** What planLines made of a batch. */
export interface LinePlan {
  entries: Entry[];
  /** The lines written (in order): the batch without the lines already stored. */
  lines: SessionStoreEntry[];
  /** uuids of lines whose uuid is stored with other content: not written. */
  conflicts: string[];
}

/**
 * The entries for transcript lines under the current leaf. A line's uuid is
 * its entry id and its idempotency key (a line already stored is skipped,
 * so the SDK's retries and `importSessionToStore` replays write nothing
 * twice); its parentUuid is its parent when that line is stored, so the
 * tree is Claude's own (a rewound conversation is a branch). A line whose
 * uuid is stored with other content is a conflict, not a replay: it is not
 * written, and the caller reports it rather than drop it silently.
 */
export function planLines(log: SessionLog, lines: readonly SessionStoreEntry[]): LinePlan {
  const batch = new Map<string, Entry>();
  const lookup: Lookup = (id) => batch.get(id) ?? log.get(id);
  let leaf = log.leafId;
  const place = (entry: Entry): Entry => {
    batch.set(entry.id, entry);
    leaf = entry.id;
    return entry;
  };
  const out: Entry[] = [];
  const written: SessionStoreEntry[] = [];
  const conflicts: string[] = [];
  for (const line of lines) {
    const uuid =
      typeof line.uuid === "string" && ENTRY_ID_PATTERN.test(line.uuid) ? line.uuid : undefined;
    const stored = uuid === undefined ? undefined : lookup(uuid);
    if (stored !== undefined) {
      if (!sameLine(stored, line)) conflicts.push(uuid as string);
      continue;
    }
    const parent = typeof line.parentUuid === "string" ? lookup(line.parentUuid) : undefined;
    let parentId =
      parent !== undefined && parent.kind.case !== "leaf" ? through(lookup, leaf, parent.id) : leaf;
    if (isCompactBoundary(line)) {
      const replaced = replaceable(lookup, parentId);
      if (replaced.length > 0) {
        const compaction = place(plannedEntry({ ...compactionOf(line, replaced), parentId }));
        out.push(compaction);
        parentId = compaction.id;
      }
    }
    let carrier = carrierOf(line);
    const callId = answeredCall(line);
    if (
      callId !== undefined &&
      carrier.kind?.case === "message" &&
      !canAnswer(lookup, parentId, callId)
    ) {
      carrier = customCarrier(line);
    }
    out.push(place(plannedEntry({ ...carrier, id: uuid ?? "", parentId })));
    written.push(line);
  }
  return { entries: out, lines: written, conflicts };
}
