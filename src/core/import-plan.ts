import { clone } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { type PlanContext, planAppend, storedJson } from "./append-plan.js";
import { FORMAT_VERSION, toTimestamp } from "./entry.js";
import { invalidArgument, isSessiondError } from "./errors.js";
import { checkEntryId, quote } from "./ids.js";
import { SessionLog } from "./session-log.js";
import { checkTags } from "./tags.js";
import { checkTree } from "./tree.js";

/**
 * Validates a foreign log (an export, a file from elsewhere) before it is
 * stored as session `sessionId`: one tree (unique ids, one root, no cycle,
 * no missing parent), the root a SessionInfo, and every other entry passing
 * the same rules as a live Append (tool results, compactions, Leaf targets),
 * replayed in the given order, the root included for its id and stored
 * form. Lossless: ids, parents, timestamps and seqs are kept. A seq, when
 * set, must be the entry's position (a log is dense from 1), so a log that
 * lost or reordered lines is refused rather than renumbered; seq 0 and a
 * missing timestamp are filled in as an Append fills them. Returns the
 * entries as they will be stored, the root's session_id set to the new id
 * (its created_at defaulting to its timestamp, format_version 0 to the
 * current one). Throws INVALID_ARGUMENT (RESOURCE_EXHAUSTED for an entry
 * over `ctx.maxEntryBytes`) naming the offending entry; nothing is stored.
 */
export function planImport(
  sessionId: string,
  entries: readonly Entry[],
  ctx: PlanContext = {},
): Entry[] {
  if (entries.length === 0) throw invalidArgument("an imported session needs at least one entry");
  checkTree(entries);
  const [first, ...rest] = entries as [Entry, ...Entry[]];
  if (first.kind.case !== "sessionInfo" || first.parentId !== undefined) {
    throw invalidArgument(
      `imported entry ${quote(first.id)}: the first entry must be a SessionInfo root`,
    );
  }
  checkEntryId(first.id, "id of the imported root");
  entries.forEach(checkSeq);
  const root = clone(EntrySchema, first);
  root.seq = 1n;
  root.timestamp ??= toTimestamp((ctx.now ?? (() => new Date()))());
  // Stryker disable next-line ConditionalExpression: the first entry was checked to be a SessionInfo above; the test only narrows the type of the clone
  if (root.kind.case === "sessionInfo") {
    const info = root.kind.value;
    info.sessionId = sessionId;
    info.createdAt ??= root.timestamp;
    if (info.formatVersion === 0) info.formatVersion = FORMAT_VERSION;
  }
  checkTags(first.kind.value.tags, `imported entry ${quote(first.id)}: tags`, false);
  storedJson(
    root,
    ctx.maxEntryBytes ?? Number.POSITIVE_INFINITY,
    `imported entry ${quote(root.id)}`,
  );
  const log = SessionLog.from(sessionId, [root]);
  for (const e of rest) {
    // checkTree found exactly one root, and it is `first`: every other entry names a parent.
    const parentId = e.parentId as string;
    if (log.get(parentId) === undefined) {
      throw invalidArgument(
        `imported entry ${quote(e.id)} comes before its parent ${quote(parentId)}`,
      );
    }
    try {
      const plan = planAppend(log, { entries: [e] }, ctx, true);
      for (const w of plan.write) log.apply(w);
    } catch (err) {
      if (isSessiondError(err, "INVALID_ARGUMENT") || isSessiondError(err, "RESOURCE_EXHAUSTED")) {
        throw err;
      }
      if (isSessiondError(err))
        throw invalidArgument(`imported entry ${quote(e.id)}: ${err.message}`);
      throw err;
    }
  }
  return [...log.entries()];
}

/** A given seq must be the entry's position: the log is dense from 1. */
function checkSeq(e: Entry, index: number): void {
  if (e.seq !== 0n && e.seq !== BigInt(index + 1)) {
    throw invalidArgument(
      `imported entry ${quote(e.id)}: seq ${e.seq} is not its position ${index + 1} (a log is dense from 1)`,
    );
  }
}
