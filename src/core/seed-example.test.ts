import { describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import {
  appendBatch,
  appendEach,
  assistant,
  idsOf,
  newLog,
  rewindTo,
  user,
} from "../../test/support/fixtures.js";
import { foldPath } from "./fold.js";
import { SessionLog } from "./session-log.js";

/**
 * The design note's example (seed/000_f44af186fb375291.txt), replayed through
 * the real planning path. The note's root r1 (a system message there) is the
 * session's SessionInfo root here, so the paths are exactly the note's. The
 * note's b2' is spelt b2x (ids are [A-Za-z0-9_-]).
 *
 *   r1 ─ a1 ─ b2 ─ c3
 *         └─ b2x ─ e5
 */
function stateA(): SessionLog {
  const log = newLog("s1", "r1");
  appendEach(
    log,
    user("a1", "q1"),
    assistant("b2", "a1 answer"),
    user("c3", "q2"),
    assistant("b2x", "another answer", [], "a1"),
  );
  return log;
}

const CONTENT = ["r1", "a1", "b2", "c3", "b2x"];

describe("the seed note's tree and pointer example", () => {
  it("state A: after growing b2x under a1 the leaf is b2x; rewinding to c3 gives [r1, a1, b2, c3]", () => {
    const log = stateA();
    expect(log.leafId).toBe("b2x");
    rewindTo(log, { target: "c3" });
    expect(log.leafId).toBe("c3");
    expect(idsOf(log.path())).toEqual(["r1", "a1", "b2", "c3"]);
  });

  it("state B: rewind to b2x switches the path to [r1, a1, b2x] and keeps c3 in the log", () => {
    const log = stateA();
    rewindTo(log, { target: "c3" });
    rewindTo(log, { target: "b2x" });
    expect(log.leafId).toBe("b2x");
    expect(idsOf(log.path())).toEqual(["r1", "a1", "b2x"]);
    for (const id of CONTENT) expect(log.has(id)).toBe(true);
    expect(foldPath(log.path()).messages.map((m) => m.entryId)).toEqual(["a1", "b2x"]);
  });

  it("continuing after the rewind grows e5 under b2x and leaves the old branch alone", () => {
    const log = stateA();
    rewindTo(log, { target: "c3" });
    rewindTo(log, { target: "b2x" });
    const plan = appendBatch(log, [user("e5", "explain again")]);
    expect(plan.entries[0]?.parentId).toBe("b2x");
    expect(log.leafId).toBe("e5");
    expect(idsOf(log.path())).toEqual(["r1", "a1", "b2x", "e5"]);
    expect(idsOf(log.path("c3"))).toEqual(["r1", "a1", "b2", "c3"]);
  });

  it("switching back and forth between c3 and e5 loses nothing: all six entries stay", () => {
    const log = stateA();
    rewindTo(log, { target: "b2x" });
    appendBatch(log, [user("e5", "explain again")]);
    for (let round = 0; round < 3; round++) {
      rewindTo(log, { target: "c3" });
      expect(idsOf(log.path())).toEqual(["r1", "a1", "b2", "c3"]);
      rewindTo(log, { target: "e5" });
      expect(idsOf(log.path())).toEqual(["r1", "a1", "b2x", "e5"]);
      for (const id of [...CONTENT, "e5"]) expect(log.has(id)).toBe(true);
      expect(log.messageCount).toBe(5);
    }
  });

  it("after a restart the replayed log has the same leaf (c3, not the newest entry e5), path and state", () => {
    const log = stateA();
    rewindTo(log, { target: "b2x" });
    appendBatch(log, [user("e5", "explain again")]);
    rewindTo(log, { target: "c3" });

    const restarted = SessionLog.from(log.sessionId, log.entries());
    expect(restarted.leafId).toBe("c3");
    expect(restarted.headSeq).toBe(log.headSeq);
    expect(idsOf(restarted.path())).toEqual(["r1", "a1", "b2", "c3"]);
    expect(foldPath(restarted.path())).toEqual(foldPath(log.path()));
  });

  it("a restart after plain appends puts the leaf on the last appended entry", () => {
    const log = stateA();
    rewindTo(log, { target: "b2x" });
    appendBatch(log, [user("e5", "explain again")]);
    const restarted = SessionLog.from(log.sessionId, log.entries());
    expect(restarted.leafId).toBe("e5");
    const messages = foldPath(restarted.path()).messages;
    expect(messages.map((m) => m.message?.role)).toEqual([Role.USER, Role.ASSISTANT, Role.USER]);
  });
});
