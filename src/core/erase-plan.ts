import type { Entry, Withheld } from "../../gen/sessiond/v1/entry_pb.js";
import type { SessionLog } from "./session-log.js";
import { type WithholdPlan, withhold } from "./withheld.js";

/**
 * Erasure of a whole session (issue 41, part 2): every entry that has
 * content to withhold (all but SessionInfo and Leaf entries, which are
 * structure) is withheld under the ERASED marker `marker`, by the same
 * `withhold` that redaction uses. Entries already withheld (redacted, or
 * erased before) keep their marker and are not in `changed`, so erasing
 * twice writes nothing.
 */
export function planErase(log: SessionLog, marker: Withheld): WithholdPlan {
  const entries: Entry[] = [];
  const changed: Entry[] = [];
  for (const entry of log.slice(0)) {
    if (!erasable(entry)) continue;
    const next = withhold(entry, marker);
    entries.push(next);
    if (next !== entry) changed.push(next);
  }
  return { entries, changed };
}

/** True for the entries erasure withholds (not SessionInfo, Leaf, or an entry without kind). */
export function erasable(entry: Entry): boolean {
  const k = entry.kind.case;
  return k !== "sessionInfo" && k !== "leaf" && k !== undefined;
}

/** How many seqs a "withheld" event of an erasure carries at most (watchers get pages of this). */
export const ERASE_EVENT_SEQS = 1000;

/** `seqs` cut into pages of at most ERASE_EVENT_SEQS. */
export function seqPages(seqs: readonly number[]): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < seqs.length; i += ERASE_EVENT_SEQS) {
    out.push(seqs.slice(i, i + ERASE_EVENT_SEQS));
  }
  return out;
}
