/**
 * Retention: which top-level sessions a policy removes. Pure, so that the
 * server's background sweep (src/server/ops/retention-sweeper.ts) and
 * `sessiond gc` (over the API) decide alike. Subagent sessions are not
 * judged on their own: they go with their parent.
 */

export interface RetentionPolicy {
  /** Remove sessions whose newest entry is older than this, ms. */
  readonly maxAgeMs?: number | undefined;
  /** Keep only this many sessions, the most recently updated ones. */
  readonly keepNewest?: number | undefined;
}

/** What the policy needs of a session. */
export interface RetentionCandidate {
  readonly id: string;
  /** Time of the newest entry (SessionMeta.updated_at), ms. */
  readonly updatedMs: number;
  /** Corrupt sessions are never removed by a policy: what they hold is unknown. */
  readonly corrupt: boolean;
}

export interface Expiry {
  readonly id: string;
  readonly reason: "max-age" | "keep-newest";
}

/** Newest update first; ties by id, descending, as a listing by update time orders them. */
function newestFirst(a: RetentionCandidate, b: RetentionCandidate): number {
  // Stryker disable next-line EqualityOperator: ids are distinct, so < and <= order them alike
  return b.updatedMs - a.updatedMs || (a.id < b.id ? 1 : -1);
}

/** True when the policy removes anything at all. */
export function policyIsSet(p: RetentionPolicy): boolean {
  return p.maxAgeMs !== undefined || p.keepNewest !== undefined;
}

/**
 * The sessions the policy removes, given the top-level sessions of a
 * workspace (any order) at time `nowMs`. Ranked by update time, newest
 * first (ties by id, the listing's order); a session is removed when it is
 * older than max age, or ranked past keep-newest. Corrupt sessions are
 * kept and do not count against keep-newest.
 */
export function expired(
  sessions: readonly RetentionCandidate[],
  policy: RetentionPolicy,
  nowMs: number,
): Expiry[] {
  const healthy = sessions.filter((s) => !s.corrupt).sort(newestFirst);
  const out: Expiry[] = [];
  const { maxAgeMs, keepNewest } = policy;
  const tooOld = (s: RetentionCandidate) =>
    // Stryker disable next-line ConditionalExpression: without a max age the comparison is with NaN, false all the same
    maxAgeMs !== undefined && s.updatedMs < nowMs - maxAgeMs;
  const pastKeep = (rank: number) =>
    // Stryker disable next-line ConditionalExpression: without keep-newest rank >= undefined is false all the same
    keepNewest !== undefined && rank >= keepNewest;
  healthy.forEach((s, rank) => {
    const reason = tooOld(s) ? "max-age" : pastKeep(rank) ? "keep-newest" : undefined;
    if (reason !== undefined) out.push({ id: s.id, reason });
  });
  return out;
}
