/**
 * The usage tables of `sessiond usage` and `sessiond usage-report`: one
 * UsageTotals as its cells (the token columns, then the cost with the
 * unpriced count) and rows as aligned columns.
 */
import type { UsageTotals } from "../../gen/sessiond/v1/session_pb.js";

/** The token columns' headings, in the order of `totalsCells`. */
export const TOKEN_COLUMNS = [
  "messages",
  "input",
  "output",
  "cache read",
  "cache write",
  "reasoning",
];

/** A UsageTotals as cells: messages, the five token sums, the cost (empty cells when unset). */
export function totalsCells(t: UsageTotals | undefined): string[] {
  if (t === undefined) return ["", "", "", "", "", "", ""];
  const cost = t.cost.map((c) => `${c.amount} ${c.currency}`).join(" + ") || "0";
  return [
    String(t.messages),
    String(t.inputTokens),
    String(t.outputTokens),
    String(t.cacheReadTokens),
    String(t.cacheWriteTokens),
    String(t.reasoningTokens),
    t.unpricedMessages > 0n ? `${cost} (${t.unpricedMessages} unpriced)` : cost,
  ];
}

/** Aligned columns: the first `left` cells and the last one left, the numbers between right. */
export function alignedTable(rows: string[][], left: number): string[] {
  const widths = (rows[0] as string[]).map((_, i) =>
    Math.max(...rows.map((r) => r[i]?.length ?? 0)),
  );
  return rows.map((r) =>
    r
      .map((cell, i) =>
        i < left || i === r.length - 1
          ? cell.padEnd(widths[i] as number)
          : cell.padStart(widths[i] as number),
      )
      .join("  ")
      .trimEnd(),
  );
}
