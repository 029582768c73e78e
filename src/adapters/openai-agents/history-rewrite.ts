import { isDeepStrictEqual } from "node:util";
import { Code, ConnectError } from "@connectrpc/connect";
import type { AgentInputItem, SessionHistoryMutation } from "@openai/agents-core";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { newEntryId } from "../../core/ids.js";
import type { SessionLog } from "../../core/session-log.js";
import { plannedEntry } from "../remote-session.js";
import { activePath, COMPACTION_ID_PREFIX, itemsOnPath, planItems } from "./item-plan.js";

/**
 * The SDK's history rewrites, planned as one Append each against the
 * session as the server has it: nothing is deleted, the items a rewrite
 * replaces stay in the tree.
 */

/**
 * The summary of this adapter's Compaction entries, the USER message that
 * GetState's CONTEXT view shows in place of the replaced items: the model
 * provider's summary is the `compaction` item that follows, which is
 * encrypted.
 */
export const COMPACTION_SUMMARY =
  "Compacted by the model provider (OpenAI Agents SDK): the summary is the encrypted compaction item that follows.";

/**
 * replaceHistoryWithCompaction: the session's items become `items` (the
 * SDK's compaction item and what it keeps after it). When the session has
 * items, a Compaction entry at the leaf replaces their entries (and this
 * adapter's previous Compaction, so that CONTEXT shows one summary); the
 * items follow it. The replaced entries stay on the path: GetState's
 * HISTORY view and the tree still show them, its CONTEXT view and getItems
 * no longer do.
 */
export function planCompaction(log: SessionLog, items: readonly AgentInputItem[]): Entry[] {
  const current = itemsOnPath(log);
  if (current.length === 0) return planItems(log, items);
  const { entries, compaction: previous } = activePath(log);
  const replaced = new Set(current.map((e) => e.entry.id));
  const replaces = [
    ...(previous === undefined ? [] : [previous.id]),
    // A foreign compaction among the items: its summary leaves the CONTEXT with them.
    ...entries.filter((e) => replaced.has(e.id) || e.kind.case === "compaction").map((e) => e.id),
  ];
  const compaction = plannedEntry({
    id: `${COMPACTION_ID_PREFIX}${newEntryId()}`,
    parentId: log.leafId,
    kind: {
      case: "compaction",
      value: { summary: COMPACTION_SUMMARY, replacesEntryIds: replaces },
    },
  });
  return planItems(log, items, [compaction]);
}

/**
 * The SDK's history mutations applied to `items`, as its MemorySession
 * applies them: `replace_function_call` puts its replacement in place of
 * the first function call with its call id and drops the others with it.
 * Any other mutation is refused rather than skipped.
 */
export function applyMutations(
  items: readonly AgentInputItem[],
  mutations: readonly SessionHistoryMutation[],
): AgentInputItem[] {
  let out = [...items];
  for (const [i, mutation] of mutations.entries()) {
    const { type, callId, replacement } = (mutation ?? {}) as Partial<SessionHistoryMutation>;
    if (type !== "replace_function_call" || typeof callId !== "string") {
      throw new ConnectError(
        `history mutation ${i}: only replace_function_call with a callId is supported, got ${JSON.stringify(type)}`,
        Code.InvalidArgument,
      );
    }
    if (replacement?.type !== "function_call" || "expected" in mutation) {
      throw new ConnectError(
        `history mutation ${i} (call "${callId}"): the replacement must be a function_call, and no expected item is supported`,
        Code.InvalidArgument,
      );
    }
    let replaced = false;
    out = out.flatMap((item) => {
      if (item.type !== "function_call" || item.callId !== callId) return [item];
      if (replaced) return [];
      replaced = true;
      return [structuredClone(replacement)];
    });
  }
  return out;
}

const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/**
 * applyHistoryMutations as a branch: the items from the entry holding the
 * first changed item on are written again, changed, under that entry's
 * parent, so the old ones stay in the tree off the current path (as a
 * replace_suffix transaction does). None when nothing changes.
 */
export function planMutations(
  log: SessionLog,
  mutations: readonly SessionHistoryMutation[],
): Entry[] {
  const current = itemsOnPath(log);
  const items = current.flatMap((e) => e.items);
  const next = applyMutations(items, mutations);
  let first = 0;
  const same = (i: number) => isDeepStrictEqual(json(items[i]), json(next[i]));
  while (first < items.length && first < next.length && same(first)) first++;
  if (first === items.length && first === next.length) return [];
  // At least one item is written again: a mutation that only drops the last
  // items starts the branch at the one before them.
  const from = Math.min(first, next.length - 1);
  let start = 0;
  let k = 0;
  for (; k < current.length; k++) {
    const length = current[k]?.items.length ?? 0;
    if (start + length > from) break;
    start += length;
  }
  const parentId = current[k]?.entry.parentId ?? log.leafId;
  return planItems(log, next.slice(start), [], parentId);
}
