import { clone, toBinary } from "@bufbuild/protobuf";
import { type Entry, EntrySchema, type SessionInfo } from "../../gen/sessiond/v1/entry_pb.js";
import { isSessiondError } from "../core/errors.js";
import { planImport } from "../core/import-plan.js";
import { CliError } from "./command.js";

/**
 * How `import` turns an exported log into RPCs, as pure functions. The
 * server has no Import call, so a log is replayed: CreateSession with the
 * root's parameters, then Append of every other entry with its original id
 * and parent, then, if the log ended somewhere else than its last entry, a
 * Rewind to that leaf. What cannot be carried over this way:
 *
 * - the root gets a new id (CreateSession chooses it), and the entries that
 *   hung below the old root are re-parented onto the new one;
 * - Leaf entries (pointer moves) cannot be appended, so only the final
 *   leaf is restored, with one Rewind; seqs are therefore renumbered;
 * - the root's created_at and forked_from, which CreateSession sets itself.
 */

export interface ReplayPlan {
  /** The root's SessionInfo: title, cwd, metadata, parent, agent type. */
  readonly info: SessionInfo;
  /** The session id recorded in the root. */
  readonly recordedId: string;
  /** The id of the root in the file (replaced by the new root's id). */
  readonly rootId: string;
  /** Every entry to append, in log order, Leaf entries left out. */
  readonly entries: readonly Entry[];
  /** The current leaf at the end of the log. */
  readonly finalLeaf: string;
  /** How many Leaf entries were left out. */
  readonly leafMoves: number;
}

/**
 * Checks the log with the same rules the store applies to imports and live
 * appends (one tree, a SessionInfo root, valid tool results, compactions
 * and Leaf targets), so that a bad file is refused before anything exists
 * on the server, then splits it into the replay.
 */
export function planReplay(entries: readonly Entry[], source: string): ReplayPlan {
  const first = entries[0];
  if (first === undefined) throw new CliError(`${source}: no entries`);
  const recordedId = first.kind.case === "sessionInfo" ? first.kind.value.sessionId : "";
  try {
    planImport(recordedId || "import", entries);
  } catch (err) {
    if (isSessiondError(err)) throw new CliError(`${source}: ${err.message}`);
    throw err;
  }
  const info = (first.kind as { value: SessionInfo }).value;
  let finalLeaf = first.id;
  let leafMoves = 0;
  const rest: Entry[] = [];
  for (const e of entries.slice(1)) {
    if (e.kind.case === "leaf") {
      finalLeaf = e.kind.value.leafId;
      leafMoves++;
      continue;
    }
    finalLeaf = e.id;
    rest.push(e);
  }
  return { info, recordedId, rootId: first.id, entries: rest, finalLeaf, leafMoves };
}

/**
 * The entries as they are sent once the new root's id is known: every
 * reference to the old root points at the new one, and seq is cleared (the
 * server assigns it).
 */
export function reRoot(entries: readonly Entry[], oldRoot: string, newRoot: string): Entry[] {
  const swap = (id: string) => (id === oldRoot ? newRoot : id);
  return entries.map((e) => {
    const copy = clone(EntrySchema, e);
    copy.seq = 0n;
    if (copy.parentId !== undefined) copy.parentId = swap(copy.parentId);
    const k = copy.kind;
    if (k.case === "branchSummary") k.value.fromId = swap(k.value.fromId);
    if (k.case === "compaction") k.value.replacesEntryIds = k.value.replacesEntryIds.map(swap);
    return copy;
  });
}

/** Splits entries into Append batches of at most `maxEntries` entries and about `maxBytes` bytes. */
export function batches(
  entries: readonly Entry[],
  maxEntries: number,
  maxBytes: number,
): Entry[][] {
  const out: Entry[][] = [];
  let batch: Entry[] = [];
  let bytes = 0;
  for (const e of entries) {
    const size = toBinary(EntrySchema, e).length;
    if (batch.length > 0 && (batch.length >= maxEntries || bytes + size > maxBytes)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(e);
    bytes += size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}
