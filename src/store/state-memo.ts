import type { SessionState, View } from "../../gen/sessiond/v1/session_pb.js";
import type { SessionLog } from "../core/session-log.js";

/** Folds kept per log; a handful covers the usual "current leaf, both views". */
const PER_LOG = 8;

const memos = new WeakMap<SessionLog, Map<string, SessionState>>();

/**
 * Remembers folded states per log, keyed by target entry, view, head seq and
 * current leaf, so that a GetState of an unchanged session returns the same
 * SessionState object without folding again (an agent asks for its context
 * before every LLM call; most of those calls see no change). Any append
 * changes the head seq, so a stale state can never be returned. Keyed by the
 * log object, so a reloaded log starts afresh and a dropped one frees its
 * states. The returned state is shared: callers must treat it as read-only.
 */
export function memoizedState(
  log: SessionLog,
  at: string,
  view: View,
  fold: () => SessionState,
): SessionState {
  let memo = memos.get(log);
  if (memo === undefined) {
    memo = new Map();
    memos.set(log, memo);
  }
  const key = `${at}\u0000${view}\u0000${log.headSeq}\u0000${log.leafId}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const state = fold();
  memo.set(key, state);
  if (memo.size > PER_LOG) memo.delete(memo.keys().next().value as string);
  return state;
}
