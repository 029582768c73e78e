/**
 * GetUsage's figures summed in the page from entries it holds (an HTML
 * export's or a share's snapshot, static-source.ts), by the server's rules
 * (src/core/usage-rollup.ts) minus what only the server has: its price
 * table (a message without its own cost counts as unpriced) and the
 * subagents (not in a snapshot). Costs are summed exactly (12 fraction
 * digits, as Cost allows).
 */
import { create } from "@bufbuild/protobuf";
import {
  amountUnits,
  type BranchUsage,
  BranchUsageSchema,
  costProblem,
  type Entry,
  formatUnits,
  type GetUsageResponse,
  GetUsageResponseSchema,
  Role,
  type UsageTotals,
  UsageTotalsSchema,
} from "../web/index.js";

/** The totals of the assistant messages among `entries`. */
export function totalsOf(entries: Iterable<Entry>): UsageTotals {
  const t = create(UsageTotalsSchema);
  const costs = new Map<string, bigint>();
  for (const e of entries) {
    if (e.kind.case !== "message") continue;
    const m = e.kind.value;
    if (m.role !== Role.ASSISTANT || m.usage === undefined) continue;
    const u = m.usage;
    t.messages += 1n;
    t.inputTokens += u.inputTokens;
    t.outputTokens += u.outputTokens;
    t.cacheReadTokens += u.cacheReadTokens;
    t.cacheWriteTokens += u.cacheWriteTokens;
    t.reasoningTokens += u.reasoningTokens;
    // Append refused malformed costs; one in a hand-made file counts as unpriced here.
    if (u.cost === undefined || costProblem(u.cost) !== undefined) {
      t.unpricedMessages += 1n;
      continue;
    }
    costs.set(u.cost.currency, (costs.get(u.cost.currency) ?? 0n) + amountUnits(u.cost.amount));
  }
  t.cost = [...costs]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([currency, v]) => ({ $typeName: "sessiond.v1.Cost", amount: formatUnits(v), currency }));
  return t;
}

/** The path root -> id, by parent links. */
function pathTo(byId: ReadonlyMap<string, Entry>, id: string): Entry[] {
  const out: Entry[] = [];
  for (let e = byId.get(id); e !== undefined; e = e.parentId ? byId.get(e.parentId) : undefined) {
    out.push(e);
  }
  return out.reverse();
}

/** GetUsage's answer for a session held as `entries` (seq order) with its current leaf. */
export function usageOfEntries(
  sessionId: string,
  entries: readonly Entry[],
  leafId: string,
): GetUsageResponse {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const parents = new Set<string>();
  for (const e of entries) if (e.kind.case !== "leaf" && e.parentId) parents.add(e.parentId);
  const current = pathTo(byId, leafId);
  const onPath = new Set(current.map((e) => e.id));
  const leaves = entries.filter((e) => e.kind.case !== "leaf" && !parents.has(e.id));
  const branches: BranchUsage[] = [
    create(BranchUsageSchema, {
      leafEntryId: leafId,
      current: true,
      forkEntryId: "",
      usage: totalsOf(current),
    }),
  ];
  for (const leaf of leaves) {
    if (leaf.id === leafId) continue;
    const path = pathTo(byId, leaf.id);
    let fork = -1;
    while (fork + 1 < path.length && onPath.has((path[fork + 1] as Entry).id)) fork++;
    branches.push(
      create(BranchUsageSchema, {
        leafEntryId: leaf.id,
        current: false,
        forkEntryId: fork < 0 ? "" : (path[fork] as Entry).id,
        usage: totalsOf(path.slice(fork + 1)),
      }),
    );
  }
  const tree = totalsOf(entries);
  const last = entries[entries.length - 1];
  return create(GetUsageResponseSchema, {
    sessionId,
    tree,
    currentPath: totalsOf(current),
    branches,
    subagentsTotal: create(UsageTotalsSchema),
    total: tree,
    headSeq: last?.seq ?? 0n,
  });
}

/** Totals as one line: messages, tokens, cost per currency, unpriced messages. */
export function totalsText(t: UsageTotals): string {
  const parts = [
    `${t.messages} msg`,
    `in ${t.inputTokens}`,
    `out ${t.outputTokens}${t.reasoningTokens > 0n ? ` (reasoning ${t.reasoningTokens})` : ""}`,
    `cache read ${t.cacheReadTokens}`,
    `cache write ${t.cacheWriteTokens}`,
  ];
  if (t.cost.length > 0) parts.push(t.cost.map((c) => `${c.amount} ${c.currency}`).join(" + "));
  if (t.unpricedMessages > 0n) parts.push(`${t.unpricedMessages} unpriced`);
  return parts.join(" · ");
}
