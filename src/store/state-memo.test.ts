import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type SessionState, SessionStateSchema, View } from "../../gen/sessiond/v1/session_pb.js";
import { newLog } from "../../test/support/fixtures.js";
import { type FoldKey, memoizedState } from "./state-memo.js";

/** The key of the n-th distinct fold of one log (distinct head seqs). */
const keyOf = (n: number): FoldKey => ({
  at: "root",
  view: View.CONTEXT,
  headSeq: n,
  currentLeafId: "root",
});

describe("memoizedState", () => {
  it("answers a repeated key from the memo, without folding again", () => {
    const log = newLog();
    const first = memoizedState(log, keyOf(1), () => create(SessionStateSchema));
    let folded = 0;
    const again = memoizedState(log, keyOf(1), () => {
      folded++;
      return create(SessionStateSchema);
    });
    expect(again).toBe(first);
    expect(folded).toBe(0);
  });

  it("keeps the 8 newest folds of a log and folds the oldest again after a 9th", () => {
    const log = newLog();
    const states: SessionState[] = [];
    for (let n = 1; n <= 8; n++) {
      states.push(memoizedState(log, keyOf(n), () => create(SessionStateSchema)));
    }
    // Eight keys: all still kept.
    expect(memoizedState(log, keyOf(1), () => create(SessionStateSchema))).toBe(states[0]);
    memoizedState(log, keyOf(9), () => create(SessionStateSchema));
    // The ninth drops the oldest inserted, and only that one.
    expect(memoizedState(log, keyOf(2), () => create(SessionStateSchema))).toBe(states[1]);
    expect(memoizedState(log, keyOf(1), () => create(SessionStateSchema))).not.toBe(states[0]);
  });
});
