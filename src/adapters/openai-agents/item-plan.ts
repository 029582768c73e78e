import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { Code, ConnectError } from "@connectrpc/connect";
import type { AgentInputItem, SessionHistoryTransactionArgs } from "@openai/agents-core";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { customEntry } from "../../client/index.js";
import type { SessionLog } from "../../core/session-log.js";
import { plannedEntry } from "../remote-session.js";
import { canAnswer } from "../tool-answer.js";
import { customEntryOf, entryItems, itemEntry, NAMESPACE } from "./item-entry.js";

/**
 * What SessiondSession writes, planned against the session's log as the
 * server has it: items at the leaf, and the SDK's history transactions
 * (an append, or a suffix replaced) as one Append each, recorded with
 * their operation so that a retry is recognised.
 */

/**
 * The id prefix of the Compaction entries this adapter writes for
 * replaceHistoryWithCompaction (see history-rewrite.ts): the session's items
 * start after the newest of them on the path.
 */
export const COMPACTION_ID_PREFIX = "openai-compaction-";

function isOwnCompaction(entry: Entry): boolean {
  return entry.kind.case === "compaction" && entry.id.startsWith(COMPACTION_ID_PREFIX);
}

/**
 * The current path after the newest Compaction this adapter wrote (all of
 * it when there is none), and that compaction: the part of the path the
 * session's items come from.
 */
export function activePath(log: SessionLog): { entries: Entry[]; compaction?: Entry } {
  if (log.headSeq === 0) return { entries: [] };
  const path = log.path();
  for (let i = path.length - 1; i >= 0; i--) {
    const entry = path[i] as Entry;
    if (isOwnCompaction(entry)) return { entries: path.slice(i + 1), compaction: entry };
  }
  return { entries: path };
}

/**
 * The entries of the active path (see activePath) that hold items, root
 * first, with their items: what getItems returns. Entries a compaction of
 * this adapter replaced stay on the path (GetState's HISTORY view) and in
 * the tree, but hold no item any more.
 */
export function itemsOnPath(log: SessionLog): { entry: Entry; items: AgentInputItem[] }[] {
  return activePath(log)
    .entries.map((entry) => ({ entry, items: entryItems(entry) }))
    .filter((e) => e.items.length > 0);
}

/**
 * The entries for `items` under `parentId` (the leaf by default), after
 * the entries of `before`. A result whose call is not on the path to answer
 * (the SDK may keep one after a popItem) cannot be a TOOL message there: it
 * is kept whole as a Custom entry instead.
 */
export function planItems(
  log: SessionLog,
  items: readonly AgentInputItem[],
  before: readonly Entry[] = [],
  parentId: string | undefined = before.at(-1)?.id ?? log.leafId,
): Entry[] {
  const batch = new Map(before.map((e) => [e.id, e]));
  const lookup = (id: string) => batch.get(id) ?? log.get(id);
  let under = parentId;
  const planned = items.map((item) => {
    let entry = plannedEntry({ ...itemEntry(item), parentId: under });
    const k = entry.kind;
    if (k.case === "message" && k.value.toolCallId !== undefined) {
      if (!canAnswer(lookup, under, k.value.toolCallId)) {
        entry = plannedEntry({ ...customEntryOf(item), parentId: under });
      }
    }
    batch.set(entry.id, entry);
    under = entry.id;
    return entry;
  });
  return [...before, ...planned];
}

/** JSON with its keys sorted: equal transactions digest alike whatever their key order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  return Object.fromEntries(
    entries.sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, canonical(v)]),
  );
}

const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/**
 * The entries of a history transaction: a Custom marker entry (namespace
 * NAMESPACE, `{ operation: { id, digest } }`, no item) whose id is derived
 * from the operation id, then the items. `append_items` goes under the leaf;
 * `replace_suffix` goes under the entry before the suffix, so the replaced
 * items stay in the history as an abandoned branch. None when the operation
 * is already in the log with the same transaction; refused (ALREADY_EXISTS)
 * with another, and (FAILED_PRECONDITION) when the suffix does not match.
 */
export function planTransaction(log: SessionLog, args: SessionHistoryTransactionArgs): Entry[] {
  const { operationId, transaction } = args;
  if (typeof operationId !== "string" || operationId.trim() === "") {
    throw new ConnectError(
      "history transaction: operationId must be a non-empty string",
      Code.InvalidArgument,
    );
  }
  const digest = createHash("sha256")
    .update(JSON.stringify(canonical(transaction)))
    .digest("hex");
  const id = `op-${createHash("sha256").update(operationId).digest("hex").slice(0, 40)}`;
  const done = log.get(id);
  if (done !== undefined) {
    const k = done.kind;
    const recorded =
      k.case === "custom"
        ? (k.value.data?.operation as { digest?: string } | undefined)
        : undefined;
    if (recorded?.digest === digest) return [];
    throw new ConnectError(
      `history operation "${operationId}" was already applied with another transaction`,
      Code.AlreadyExists,
    );
  }
  const marker = (parentId: string) =>
    plannedEntry({
      ...customEntry(NAMESPACE, { operation: { id: operationId, digest } }),
      id,
      parentId,
    });
  if (transaction.type === "append_items")
    return planItems(log, transaction.items, [marker(log.leafId)]);
  const onPath = itemsOnPath(log);
  const suffix = transaction.expectedSuffix;
  let count = 0;
  let start = onPath.length;
  while (count < suffix.length && start > 0) count += onPath[--start]?.items.length ?? 0;
  const current = onPath.slice(start).flatMap((e) => e.items);
  if (count !== suffix.length || !isDeepStrictEqual(json(current), json(suffix))) {
    throw new ConnectError(
      "history transaction: the session no longer ends with the expected items",
      Code.FailedPrecondition,
    );
  }
  const parentId = start < onPath.length ? onPath[start]?.entry.parentId : log.leafId;
  return planItems(log, transaction.replacement, [marker(parentId ?? log.leafId)]);
}
