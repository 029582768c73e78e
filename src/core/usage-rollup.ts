/**
 * A session's usage as its tree knows it (GetUsage, without subagents):
 * every assistant message of the log, the current path, each branch, and
 * the size of the current context. Pure: a log in, raw sums out, priced by
 * the caller (usage-sums.ts) so that every figure follows the one rule.
 */
import { create, toJsonString } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  BlobPart,
  type Entry,
  type Message,
  Role,
  type Usage,
} from "../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import {
  BranchUsageSchema,
  type GetUsageResponse,
  GetUsageResponseSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";
import { timestampMillis } from "./entry.js";
import { foldPath } from "./fold.js";
import { forkCopiesThrough } from "./fork-copies.js";
import { type PriceTable, saturatedU64, totalsToProto, UsageGroups } from "./usage-sums.js";

/** One branch: the path to a leaf, beyond what it shares with the current path. */
export interface BranchRollup {
  leafEntryId: string;
  current: boolean;
  /** The last entry the branch shares with the current path; "" for the current branch. */
  forkEntryId: string;
  usage: UsageGroups;
}

export interface SessionRollup {
  /** Every assistant message of the session but ForkSession's copies. */
  tree: UsageGroups;
  /** The messages ForkSession copied from the source session (billed there; in no other figure). */
  forked: UsageGroups;
  currentPath: UsageGroups;
  /** The current branch first, then by seq of the leaf. */
  branches: BranchRollup[];
  contextTokens: bigint;
  headSeq: number;
}

/** The usage an entry counts with: an ASSISTANT message's, withheld or not. */
export function billedUsage(entry: Entry): Usage | undefined {
  const k = entry.kind;
  if (k.case !== "message" || k.value.role !== Role.ASSISTANT) return undefined;
  return k.value.usage;
}

/** Whether any of `entries` has usage to count (no allocation: an append's fast test). */
export function anyBilled(entries: readonly Entry[]): boolean {
  for (const e of entries) if (billedUsage(e) !== undefined) return true;
  return false;
}

function count(groups: UsageGroups, entry: Entry, copiesThrough: bigint): void {
  if (entry.seq <= copiesThrough) return;
  const usage = billedUsage(entry);
  if (usage === undefined) return;
  const m = entry.kind.value as Message;
  groups.add(timestampMillis(entry.timestamp), m.model ?? "", usage);
}

/**
 * Rolls up a session held as a list of its entries (seq order, root
 * first) with its current leaf: a log's (the store's GetUsage) or a page's
 * snapshot (an HTML export, a share link). `get` finds an entry by id
 * (default: a map made of `entries`). Branches: one per leaf of the tree
 * (an entry no other entry names as parent, Leaf entries aside), and the
 * current leaf's even when it has children (after a rewind): it always
 * heads the list. ForkSession's copies count in `forked` only.
 */
export function rollUpEntries(
  entries: readonly Entry[],
  leafId: string,
  get: (id: string) => Entry | undefined = byIdOf(entries),
): SessionRollup {
  const tree = new UsageGroups();
  const forked = new UsageGroups();
  const hasChild = new Set<string>();
  const root = entries[0];
  const copies = BigInt(
    root?.kind.case === "sessionInfo"
      ? forkCopiesThrough(root.kind.value, (id) => get(id)?.seq)
      : 0,
  );
  for (const e of entries) {
    if (e.seq <= copies) count(forked, e, 0n);
    else count(tree, e, copies);
    if (e.kind.case !== "leaf" && e.parentId !== undefined) hasChild.add(e.parentId);
  }
  const headSeq = Number(entries[entries.length - 1]?.seq ?? 0n);
  const path = entries.length === 0 ? [] : pathTo(get, leafId);
  const onPath = new Set(path.map((e) => e.id));
  const currentPath = new UsageGroups();
  for (const e of path) count(currentPath, e, copies);

  const branches: BranchRollup[] =
    entries.length === 0
      ? []
      : [{ leafEntryId: leafId, current: true, forkEntryId: "", usage: currentPath }];
  for (const e of entries) {
    if (e.kind.case === "leaf" || hasChild.has(e.id) || e.id === leafId) continue;
    const usage = new UsageGroups();
    let at: Entry | undefined = e;
    while (at !== undefined && !onPath.has(at.id)) {
      count(usage, at, copies);
      at = at.parentId === undefined ? undefined : get(at.parentId);
    }
    branches.push({ leafEntryId: e.id, current: false, forkEntryId: at?.id ?? "", usage });
  }
  return { tree, forked, currentPath, branches, contextTokens: contextTokens(path), headSeq };
}

function byIdOf(entries: readonly Entry[]): (id: string) => Entry | undefined {
  const byId = new Map(entries.map((e) => [e.id, e]));
  return (id) => byId.get(id);
}

/** The path root -> id, by parent links. */
function pathTo(get: (id: string) => Entry | undefined, id: string): Entry[] {
  const out: Entry[] = [];
  for (let e = get(id); e !== undefined; e = e.parentId ? get(e.parentId) : undefined) out.push(e);
  return out.reverse();
}

/**
 * GetUsage's answer for a roll-up, every figure priced by `prices`; the
 * subagents are the caller's to add (subagents and subagents_total unset,
 * total the tree's).
 */
export function usageResponseOf(
  sessionId: string,
  r: SessionRollup,
  prices: PriceTable,
): GetUsageResponse {
  const tree = totalsToProto(r.tree.price(prices));
  return create(GetUsageResponseSchema, {
    sessionId,
    tree,
    currentPath: totalsToProto(r.currentPath.price(prices)),
    branches: r.branches.map((b) =>
      create(BranchUsageSchema, {
        leafEntryId: b.leafEntryId,
        current: b.current,
        forkEntryId: b.forkEntryId,
        usage: totalsToProto(b.usage.price(prices)),
      }),
    ),
    contextTokens: saturatedU64(r.contextTokens),
    headSeq: BigInt(r.headSeq),
    forked: totalsToProto(r.forked.price(prices)),
    total: tree,
  });
}

/**
 * Estimated tokens of the CONTEXT of `path`: the newest assistant message's
 * input + cache read + cache write + output tokens (what it was sent plus
 * what it said), plus about one token per 4 characters of the messages
 * after it. An assistant message older than the newest compaction on the
 * path was sent a context the compaction has since shrunk: it is no base,
 * and the whole context is estimated from its characters.
 */
export function contextTokens(path: readonly Entry[]): bigint {
  const state = foldPath(path, View.CONTEXT);
  let compactionSeq = 0n;
  for (const e of path) if (e.kind.case === "compaction") compactionSeq = e.seq;
  const seqOf = new Map(path.map((e) => [e.id, e.seq]));
  const messages = state.messages;
  let base = 0n;
  let from = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const item = messages[i];
    const usage = item?.message?.usage;
    if (item?.message?.role !== Role.ASSISTANT || usage === undefined) continue;
    if ((seqOf.get(item.entryId) ?? 0n) < compactionSeq) break;
    base = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.outputTokens;
    from = i + 1;
    break;
  }
  let chars = 0;
  for (let i = from; i < messages.length; i++) {
    const m = messages[i]?.message;
    if (m !== undefined) chars += messageChars(m);
  }
  return base + BigInt(Math.ceil(chars / 4));
}

/** The characters a message puts in a prompt: its text, thinking and tool calls (images not counted). */
function messageChars(m: Message): number {
  let n = 0;
  for (const p of m.content) {
    const part = p.part;
    switch (part.case) {
      case "text":
        n += part.value.length;
        break;
      case "thinking":
        n += part.value.thinking.length;
        break;
      case "toolCall": {
        const args = part.value.arguments;
        n +=
          part.value.name.length +
          (args === undefined ? 0 : toJsonString(ValueSchema, args).length);
        break;
      }
      case "blob":
        // A text or thinking part stored apart: its UTF-8 bytes, about its characters.
        if (part.value.part !== BlobPart.IMAGE) n += Number(part.value.size);
        break;
      default:
        break;
    }
  }
  return n;
}
