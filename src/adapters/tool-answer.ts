import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { toolCallIds, toolResultCallId } from "../core/entry.js";
import type { Lookup } from "../core/tree.js";

/**
 * Whether a TOOL message answering `callId`, placed under `parentId`, would
 * be accepted: the rule of core/append-plan.ts (an unanswered call of an
 * ASSISTANT message on its path, not compacted away), asked as a question.
 * The server refuses a whole batch when one result breaks it; an adapter
 * mirroring another tool's history asks first and keeps such a result in
 * another form rather than lose the batch.
 */
export function canAnswer(lookup: Lookup, parentId: string | undefined, callId: string): boolean {
  const compacted = new Set<string>();
  for (let id = parentId; id !== undefined; ) {
    const entry: Entry | undefined = lookup(id);
    if (entry === undefined || toolResultCallId(entry) === callId) return false;
    if (entry.kind.case === "compaction") {
      for (const replaced of entry.kind.value.replacesEntryIds) compacted.add(replaced);
    }
    if (toolCallIds(entry).includes(callId)) return !compacted.has(entry.id);
    id = entry.parentId;
  }
  return false;
}
