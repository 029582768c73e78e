/**
 * Scenario u's sessions: row 6's small linear sessions (10–30 entries,
 * assistant turns with usage), all started within one UTC day, so that a
 * UsageReport of that day sums every one of them. Tagged team=t<i mod 5>
 * for the grouping.
 */
import { type Conversation, smallConversations } from "./generate.js";

/** The day the sessions are in: 2026-01-05T00:00:00Z. */
export const USAGE_DAY_MS = Date.UTC(2026, 0, 5);
const DAY_MS = 86_400_000;

export function dayConversations(count: number): Conversation[] {
  const cs = smallConversations({
    count,
    minEntries: 10,
    maxEntries: 30,
    textBytes: 400,
    startMs: USAGE_DAY_MS,
  });
  // A session's entries are 1 s apart: each starts in its slot of the day
  // and ends well before the next day.
  const step = Math.floor((DAY_MS - 60_000) / count);
  cs.forEach((c, i) => {
    const shift = USAGE_DAY_MS + i * step - c.createdMs;
    c.createdMs += shift;
    for (const e of c.entries) e.timeMs += shift;
    c.tags = { team: `t${i % 5}` };
  });
  return cs;
}

/** The assistant messages of `cs` (each carries usage: generate.ts messageOf). */
export function billedCount(cs: readonly Conversation[]): number {
  let n = 0;
  for (const c of cs) for (const e of c.entries) if (e.kind === "assistant") n++;
  return n;
}
