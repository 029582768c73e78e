/**
 * GetUsage's figures summed in the page from entries it holds (an HTML
 * export's or a share's snapshot, static-source.ts), by the server's rules
 * (core's roll-up itself, src/core/usage-rollup.ts) minus what only the
 * server has: its price table (a message without its own cost counts as
 * unpriced) and the subagents (not in a snapshot). Costs are summed
 * exactly (12 fraction digits, as Cost allows).
 */
import { create } from "@bufbuild/protobuf";
import {
  type Entry,
  type GetUsageResponse,
  NO_PRICES,
  rollUpEntries,
  type UsageTotals,
  UsageTotalsSchema,
  usageResponseOf,
} from "../web/index.js";

/**
 * GetUsage's answer for a session held as `entries` (seq order) with its
 * current leaf: core's roll-up (usage-rollup.ts), as the server computes it.
 */
export function usageOfEntries(
  sessionId: string,
  entries: readonly Entry[],
  leafId: string,
): GetUsageResponse {
  const u = usageResponseOf(sessionId, rollUpEntries(entries, leafId), NO_PRICES);
  u.subagentsTotal = create(UsageTotalsSchema);
  return u;
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
