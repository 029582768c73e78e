import { describe, expect, it } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { SessionLog } from "./session-log.js";
import {
  appendEach,
  assistant,
  buildLog,
  compaction,
  expectError,
  idsOf,
  info,
  label,
  leaf,
  newLog,
  rewindTo,
  user,
  withSeq,
} from "./test-helpers.js";

/** A log with root (1) → u1 (2) → a2 (3), built with raw applies. */
function rawLog(): SessionLog {
  return SessionLog.from("s1", [
    withSeq(info("root"), 1),
    withSeq(user("u1", "hi", "root"), 2),
    withSeq(assistant("a2", "hello", [], "u1"), 3),
  ]);
}

/** Expects `apply(entry)` to fail with DATA_LOSS naming `mentions`, and the log to be unchanged. */
function expectCorrupt(log: SessionLog, entry: Entry, ...mentions: string[]) {
  const before = {
    head: log.headSeq,
    leaf: log.leafId,
    messages: log.messageCount,
    ids: idsOf(log.entries()),
  };
  expectError(() => log.apply(entry), "DATA_LOSS", ...mentions);
  expect({
    head: log.headSeq,
    leaf: log.leafId,
    messages: log.messageCount,
    ids: idsOf(log.entries()),
  }).toEqual(before);
  expect(log.has(entry.id) && log.get(entry.id) === entry).toBe(false);
}

describe("SessionLog.apply guards the log invariants", () => {
  it("accepts entries with dense seqs, each becoming the leaf", () => {
    const log = rawLog();
    expect(log.headSeq).toBe(3);
    expect(log.leafId).toBe("a2");
    expect(idsOf(log.path())).toEqual(["root", "u1", "a2"]);
  });

  it("rejects a seq gap", () => {
    expectCorrupt(rawLog(), withSeq(user("u4", "x", "a2"), 5), '"u4"', "seq 4");
  });

  it("rejects a repeated seq", () => {
    expectCorrupt(rawLog(), withSeq(user("u4", "x", "a2"), 3), '"u4"');
  });

  it("rejects a duplicate id", () => {
    expectCorrupt(rawLog(), withSeq(user("u1", "again", "a2"), 4), '"u1"');
  });

  it("rejects a first entry that is not a SessionInfo", () => {
    expectCorrupt(new SessionLog("s1"), withSeq(user("u1", "hi"), 1), "SessionInfo");
  });

  it("rejects a first SessionInfo that has a parent", () => {
    expectCorrupt(
      new SessionLog("s1"),
      withSeq(info("root", undefined, "elsewhere"), 1),
      "SessionInfo",
    );
  });

  it("rejects an unknown parent", () => {
    expectCorrupt(rawLog(), withSeq(user("u4", "x", "ghost"), 4), '"u4"');
  });

  it("rejects a second root", () => {
    expectCorrupt(rawLog(), withSeq(info("root2"), 4), '"root2"');
  });

  it("rejects a Leaf entry as parent", () => {
    const log = rawLog();
    log.apply(withSeq(leaf("mv1", "u1", "a2"), 4));
    expectCorrupt(log, withSeq(user("u5", "x", "mv1"), 5), '"u5"', "Leaf");
  });

  it("rejects a Leaf entry pointing at nothing, and leaves no trace of it", () => {
    const log = rawLog();
    expectCorrupt(log, withSeq(leaf("mv1", "ghost", "a2"), 4), '"mv1"');
    expect(log.has("mv1")).toBe(false);
    log.apply(withSeq(user("u4", "next", "a2"), 4));
    expect(log.leafId).toBe("u4");
  });

  it("rejects a Leaf entry pointing at a Leaf entry", () => {
    const log = rawLog();
    log.apply(withSeq(leaf("mv1", "u1", "a2"), 4));
    expectCorrupt(log, withSeq(leaf("mv2", "mv1", "a2"), 5), '"mv2"');
  });

  it("keeps working after a rejection", () => {
    const log = rawLog();
    expectCorrupt(log, withSeq(user("u4", "x", "ghost"), 4));
    log.apply(withSeq(user("u4", "x", "a2"), 4));
    expect(log.headSeq).toBe(4);
    expect(log.leafId).toBe("u4");
  });
});

describe("SessionLog accessors", () => {
  it("a Leaf entry moves the leaf to its target, not to itself", () => {
    const log = rawLog();
    log.apply(withSeq(leaf("mv1", "u1", "a2"), 4));
    expect(log.leafId).toBe("u1");
    expect(log.last?.id).toBe("mv1");
    expect(log.headSeq).toBe(4);
  });

  it("root, info, at and last reflect the stored entries", () => {
    const log = newLog("s9", "r0", "Title");
    expect(log.root.id).toBe("r0");
    expect(log.info.sessionId).toBe("s9");
    expect(log.at(1)?.id).toBe("r0");
    expect(log.at(2)).toBeUndefined();
    expect(log.last?.id).toBe("r0");
  });

  it("an empty log has no root (DATA_LOSS) and no leaf", () => {
    const log = new SessionLog("s1");
    expect(log.leafId).toBe("");
    expect(log.headSeq).toBe(0);
    expectError(() => log.root, "DATA_LOSS", '"s1"');
  });

  it("labelTarget finds the newest Label entry with the text, on any branch", () => {
    const log = buildLog(
      label("l1", "cp"),
      user("u1", "hi"),
      label("l2", "cp"),
      label("l3", "other"),
      label("l4", "cp", "root"),
    );
    expect(log.labelTarget("cp")).toBe("l4");
    expect(log.labelTarget("other")).toBe("l3");
    expect(log.labelTarget("missing")).toBeUndefined();
  });

  it("title is the newest SessionInfo title in the log", () => {
    const untitled = newLog();
    expect(untitled.title).toBeUndefined();
    const log = newLog("s1", "root", "first");
    expect(log.title).toBe("first");
    appendEach(log, user("u1", "hi"), info("i2", "second"), info("i3"));
    expect(log.title).toBe("second");
  });

  it("messageCount counts Message entries only, on every branch", () => {
    const log = buildLog(
      user("u1", "hi"),
      assistant("a2", "x"),
      label("l3", "cp"),
      compaction("c4", "s", ["u1", "a2"]),
      user("b5", "branch", "u1"),
    );
    rewindTo(log, { target: "a2" });
    expect(log.messageCount).toBe(3);
  });

  it("slice pages through the log by seq without gaps or overlaps", () => {
    const log = buildLog(...Array.from({ length: 9 }, (_, i) => user(`u${i + 2}`, "x")));
    expect(log.headSeq).toBe(10);
    const pages: string[][] = [];
    let after = 0;
    for (;;) {
      const page = log.slice(after, 3);
      if (page.length === 0) break;
      pages.push(idsOf(page));
      after = Number(page[page.length - 1]?.seq);
    }
    expect(pages).toEqual([["root", "u2", "u3"], ["u4", "u5", "u6"], ["u7", "u8", "u9"], ["u10"]]);
  });

  it("slice without a limit returns the rest; past the head or with limit 0, nothing", () => {
    const log = buildLog(user("u2", "x"), user("u3", "y"));
    expect(idsOf(log.slice(1))).toEqual(["u2", "u3"]);
    expect(idsOf(log.slice(-5, 1))).toEqual(["root"]);
    expect(log.slice(3)).toEqual([]);
    expect(log.slice(99)).toEqual([]);
    expect(log.slice(0, 0)).toEqual([]);
  });

  it("from() replays a stored log to the same leaf, counts and labels", () => {
    const log = buildLog(user("u1", "hi"), label("l2", "cp"), assistant("a3", "x"));
    rewindTo(log, { target: "cp" });
    const replayed = SessionLog.from("s1", log.entries());
    expect(replayed.leafId).toBe("l2");
    expect(replayed.headSeq).toBe(log.headSeq);
    expect(replayed.messageCount).toBe(2);
    expect(replayed.labelTarget("cp")).toBe("l2");
  });
});
