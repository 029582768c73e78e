import { clone } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { planAppend } from "./append-plan.js";
import { invalidArgument, isSessiondError } from "./errors.js";
import { quote } from "./ids.js";
import { SessionLog } from "./session-log.js";
import { checkTree } from "./tree.js";

/**
 * Validates a foreign log (an export, a file from elsewhere) before it is
 * stored as session `sessionId`: one tree (unique ids, one root, no cycle,
 * no missing parent), the root a SessionInfo, and every other entry passing
 * the same rules as a live Append (tool results, compactions, Leaf targets),
 * replayed in the given order. Returns the entries as they will be stored:
 * seqs renumbered densely, the root's session_id set to the new id.
 * Throws INVALID_ARGUMENT naming the offending entry; nothing is stored.
 */
export function planImport(sessionId: string, entries: readonly Entry[]): Entry[] {
  if (entries.length === 0) throw invalidArgument("an imported session needs at least one entry");
  checkTree(entries);
  const [first, ...rest] = entries as [Entry, ...Entry[]];
  if (first.kind.case !== "sessionInfo" || first.parentId !== undefined) {
    throw invalidArgument(
      `imported entry ${quote(first.id)}: the first entry must be a SessionInfo root`,
    );
  }
  const root = clone(EntrySchema, first);
  root.seq = 1n;
  if (root.kind.case === "sessionInfo") root.kind.value.sessionId = sessionId;
  const log = SessionLog.from(sessionId, [root]);
  for (const e of rest) {
    if (e.parentId === undefined) {
      throw invalidArgument(`imported entry ${quote(e.id)} has no parent`);
    }
    if (log.get(e.parentId) === undefined) {
      throw invalidArgument(
        `imported entry ${quote(e.id)} comes before its parent ${quote(e.parentId)}`,
      );
    }
    try {
      const plan = planAppend(log, { entries: [e] }, {}, true);
      for (const w of plan.write) log.apply(w);
    } catch (err) {
      if (isSessiondError(err, "INVALID_ARGUMENT")) throw err;
      if (isSessiondError(err))
        throw invalidArgument(`imported entry ${quote(e.id)}: ${err.message}`);
      throw err;
    }
  }
  return [...log.entries()];
}
