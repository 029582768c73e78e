import type { SessionState, View } from "../../gen/sessiond/v1/session_pb.js";
import type { SessionLog } from "../core/session-log.js";

/** Folds kept per log; a handful covers the usual "current leaf, both views". */
const PER_LOG = 8;

const memos = new WeakMap<SessionLog, Map<string, SessionState>>();

/** What a fold is asked for: the entry folded to, the view, and the snapshot it answers for. */
export interface FoldKey {
  readonly at: string;
  readonly view: View;
  /** The head seq and current leaf the state reports. */
  readonly headSeq: number;
  readonly currentLeafId: string;
}

/**
 * Remembers folded states per log, keyed by target entry, view, head seq and
 * current leaf, so that a GetState of an unchanged session returns the same
 * SessionState object without folding again (an agent asks for its context
 * before every LLM call; most of those calls see no change), and the pages
 * of one paged read share one fold. An append moves the log's head seq, so
 * a read of the current state never gets a stale one; a paged read keys by
 * the snapshot of its first page. Keyed by the log object, so a reloaded log
 * starts afresh and a dropped one frees its states. The returned state is
 * shared: callers must treat it as read-only.
 */
export function memoizedState(
  log: SessionLog,
  key: FoldKey,
  fold: () => SessionState,
): SessionState {
  let memo = memos.get(log);
  if (memo === undefined) {
    memo = new Map();
    memos.set(log, memo);
  }
  // The log's version too: a redaction changes entries without moving the head.
  const k = `${key.at}\u0000${key.view}\u0000${key.headSeq}\u0000${key.currentLeafId}\u0000${log.version}`;
  const hit = memo.get(k);
  if (hit !== undefined) return hit;
  const state = fold();
  memo.set(k, state);
  if (memo.size > PER_LOG) memo.delete(memo.keys().next().value as string);
  return state;
}
