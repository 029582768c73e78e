import { describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { type SessionState, View } from "../../gen/sessiond/v1/session_pb.js";
import {
  appendBatch,
  appendEach,
  assistant,
  branchSummary,
  buildLog,
  compaction,
  custom,
  expectError,
  info,
  label,
  leaf,
  modelChange,
  newLog,
  rewindTo,
  thinkingLevel,
  toolResult,
  user,
} from "../../test/support/fixtures.js";
import { messageText } from "./entry.js";
import { BRANCH_SUMMARY_PREFIX, COMPACTION_PREFIX, compactionFloor, foldPath } from "./fold.js";

/** The messages of a state as "entryId:ROLE:text", easy to compare whole. */
function rendered(state: SessionState): string[] {
  return state.messages.map((m) => {
    const msg = m.message;
    return `${m.entryId}:${msg === undefined ? "?" : Role[msg.role]}:${msg === undefined ? "" : messageText(msg)}`;
  });
}

function ids(state: SessionState): string[] {
  return state.messages.map((m) => m.entryId);
}

describe("foldPath views", () => {
  // u1 → a2(call k1) → t3(k1) → a4 → c5 (replaces u1, a2, t3) → u6
  const log = buildLog(
    user("u1", "37*19=?"),
    assistant("a2", "let me compute", ["k1"]),
    toolResult("t3", "k1"),
    assistant("a4", "703"),
    compaction("c5", "the user asked 37*19; it is 703", ["u1", "a2", "t3"]),
    user("u6", "thanks"),
  );

  it("CONTEXT folds the compaction into a summary message in place of what it replaces", () => {
    const state = foldPath(log.path(), View.CONTEXT);
    expect(state.view).toBe(View.CONTEXT);
    expect(rendered(state)).toEqual([
      `c5:USER:${COMPACTION_PREFIX}the user asked 37*19; it is 703`,
      "a4:ASSISTANT:703",
      "u6:USER:thanks",
    ]);
  });

  it("the default view is CONTEXT", () => {
    expect(foldPath(log.path())).toEqual(foldPath(log.path(), View.CONTEXT));
  });

  it("HISTORY keeps every message of the path and skips the compaction", () => {
    const state = foldPath(log.path(), View.HISTORY);
    expect(state.view).toBe(View.HISTORY);
    expect(ids(state)).toEqual(["u1", "a2", "t3", "a4", "u6"]);
    expect(state.messages[1]?.message?.content[1]?.part.case).toBe("toolCall");
  });

  it("both views report the leaf and the compaction floor", () => {
    for (const view of [View.CONTEXT, View.HISTORY]) {
      const state = foldPath(log.path(), view);
      expect(state.leafId).toBe("u6");
      expect(state.compactionFloorId).toBe("a4");
    }
  });
});

describe("compaction folding", () => {
  it("puts the summary at the position of the first replaced message and keeps unlisted ones", () => {
    const log = buildLog(
      user("u1", "one"),
      assistant("a2", "two"),
      user("u3", "three"),
      assistant("a4", "four"),
      compaction("c5", "two and three", ["a2", "u3"]),
    );
    expect(rendered(foldPath(log.path()))).toEqual([
      "u1:USER:one",
      `c5:USER:${COMPACTION_PREFIX}two and three`,
      "a4:ASSISTANT:four",
    ]);
  });

  it("the summary text is exactly 'Previous conversation summary:\\n' + summary", () => {
    const log = buildLog(user("u1", "one"), compaction("c2", "S", ["u1"]));
    const [only] = foldPath(log.path()).messages;
    expect(only?.entryId).toBe("c2");
    expect(only?.message?.role).toBe(Role.USER);
    expect(only?.message?.content.map((p) => p.part)).toEqual([
      { case: "text", value: "Previous conversation summary:\nS" },
    ]);
  });

  it("replaced messages that are not contiguous all disappear, the summary takes the first place", () => {
    const log = buildLog(
      user("u1", "one"),
      assistant("a2", "two"),
      user("u3", "three"),
      assistant("a4", "four"),
      compaction("c5", "one and three", ["u3", "u1"]),
    );
    expect(ids(foldPath(log.path()))).toEqual(["c5", "a2", "a4"]);
  });

  it("a later compaction can replace an earlier summary", () => {
    const log = buildLog(
      user("u1", "one"),
      assistant("a2", "two"),
      compaction("c3", "first summary", ["u1", "a2"]),
      user("u4", "four"),
      assistant("a5", "five"),
      compaction("c6", "second summary", ["c3", "u4"]),
      user("u7", "seven"),
    );
    expect(rendered(foldPath(log.path()))).toEqual([
      `c6:USER:${COMPACTION_PREFIX}second summary`,
      "a5:ASSISTANT:five",
      "u7:USER:seven",
    ]);
    expect(compactionFloor(log.path())).toBe("a5");
  });

  it("a later compaction that does not name the earlier summary keeps it", () => {
    const log = buildLog(
      user("u1", "one"),
      compaction("c2", "first", ["u1"]),
      user("u3", "three"),
      compaction("c4", "second", ["u3"]),
    );
    expect(ids(foldPath(log.path()))).toEqual(["c2", "c4"]);
  });

  it("a compaction that replaces no message still present puts its summary at its own position", () => {
    const log = buildLog(
      user("u1", "one"),
      label("l2", "mark"),
      assistant("a3", "three"),
      compaction("c4", "only the label", ["l2"]),
      user("u5", "five"),
    );
    expect(rendered(foldPath(log.path()))).toEqual([
      "u1:USER:one",
      "a3:ASSISTANT:three",
      `c4:USER:${COMPACTION_PREFIX}only the label`,
      "u5:USER:five",
    ]);
  });

  it("a compaction on another branch does not fold this branch", () => {
    const log = buildLog(
      user("u1", "one"),
      assistant("a2", "two"),
      compaction("c3", "other branch", ["u1", "a2"]),
      user("x4", "sibling", "a2"),
    );
    const state = foldPath(log.path());
    expect(ids(state)).toEqual(["u1", "a2", "x4"]);
    expect(state.compactionFloorId).toBeUndefined();
  });
});

describe("branch summaries", () => {
  const log = buildLog(
    user("u1", "try A"),
    assistant("a2", "A failed"),
    branchSummary("s3", "A did not work", "a2", "u1"),
    assistant("a4", "try B"),
  );

  it("render as one USER message 'Summary of an abandoned branch:\\n' + summary in CONTEXT", () => {
    expect(rendered(foldPath(log.path()))).toEqual([
      "u1:USER:try A",
      `s3:USER:${BRANCH_SUMMARY_PREFIX}A did not work`,
      "a4:ASSISTANT:try B",
    ]);
    expect(BRANCH_SUMMARY_PREFIX).toBe("Summary of an abandoned branch:\n");
  });

  it("are not part of the HISTORY transcript", () => {
    expect(ids(foldPath(log.path(), View.HISTORY))).toEqual(["u1", "a4"]);
  });
});

describe("settings come from the path only, last one wins", () => {
  //   root(title T0) ─ m1 ─ t1 ─ l1 ─ n1 ─ n2 ─ i1(title T1) ─ u1 ─ m2 ─ n3 ─ l2 ─ main
  //                                                              └─ xm ─ xt ─ xl ─ xn ─ xi ─ other
  function settingsLog() {
    const log = buildLog(
      modelChange("m1", "gpt-a", "openai"),
      thinkingLevel("t1", "low"),
      label("l1", "start"),
      custom("n1", "ui", { theme: "dark" }),
      custom("n2", "billing", { plan: "free" }),
      info("i1", "T1"),
      user("u1", "hello"),
      modelChange("m2", "claude-b", "anthropic"),
      custom("n3", "ui", { theme: "light" }),
      label("l2", "after-hello"),
      user("main", "main branch"),
      modelChange("xm", "other-model", "other", "u1"),
      thinkingLevel("xt", "high"),
      label("xl", "other-label"),
      custom("xn", "billing", { plan: "pro" }),
      info("xi", "other title"),
      user("other", "other branch"),
    );
    rewindTo(log, { target: "main" });
    return log;
  }

  it("model, provider, thinking level, label, title and custom of the current path", () => {
    const state = foldPath(settingsLog().path());
    expect(state.model).toBe("claude-b");
    expect(state.provider).toBe("anthropic");
    expect(state.thinkingLevel).toBe("low");
    expect(state.label).toBe("after-hello");
    expect(state.title).toBe("T1");
    expect(state.custom).toEqual({ ui: { theme: "light" }, billing: { plan: "free" } });
    expect(ids(state)).toEqual(["u1", "main"]);
  });

  it("the other branch sees its own settings", () => {
    const state = foldPath(settingsLog().path("other"));
    expect(state.model).toBe("other-model");
    expect(state.provider).toBe("other");
    expect(state.thinkingLevel).toBe("high");
    expect(state.label).toBe("other-label");
    expect(state.title).toBe("other title");
    expect(state.custom).toEqual({ ui: { theme: "dark" }, billing: { plan: "pro" } });
  });

  it("the root's title holds until a later SessionInfo on the path changes it", () => {
    const log = appendEach(
      newLog("s1", "root", "T0"),
      user("u1", "x"),
      info("i2", "T2"),
      user("u3", "y"),
    );
    expect(foldPath(log.path("u1")).title).toBe("T0");
    expect(foldPath(log.path()).title).toBe("T2");
  });

  it("a later SessionInfo without a title keeps the title set before it", () => {
    const log = appendEach(newLog("s1", "root", "T0"), info("i1"), user("u2", "x"));
    expect(foldPath(log.path()).title).toBe("T0");
  });

  it("a later ModelChange without provider clears the provider", () => {
    const log = buildLog(modelChange("m1", "a", "p"), modelChange("m2", "b"));
    const state = foldPath(log.path());
    expect(state.model).toBe("b");
    expect(state.provider).toBeUndefined();
  });

  it("an empty path folds to an empty state", () => {
    const state = foldPath([]);
    expect(state.messages).toEqual([]);
    expect(state.leafId).toBe("");
    expect(state.model).toBeUndefined();
    expect(state.compactionFloorId).toBeUndefined();
  });
});

describe("time travel", () => {
  const timeLog = () =>
    buildLog(
      modelChange("m1", "small"),
      user("u1", "one"),
      assistant("a2", "two"),
      modelChange("m3", "large"),
      user("u4", "four"),
      compaction("c5", "one to four", ["u1", "a2", "u4"]),
      user("u6", "six"),
    );

  it("the fold at an earlier entry is the state as it was then", () => {
    const log = timeLog();
    const then = foldPath(log.path("a2"));
    expect(then.leafId).toBe("a2");
    expect(ids(then)).toEqual(["u1", "a2"]);
    expect(then.model).toBe("small");
    expect(then.compactionFloorId).toBeUndefined();
  });

  it("the fold at the leaf includes what came later", () => {
    const log = timeLog();
    const now = foldPath(log.path());
    expect(now.leafId).toBe("u6");
    expect(ids(now)).toEqual(["c5", "u6"]);
    expect(now.model).toBe("large");
  });

  it("does not depend on where the pointer is", () => {
    const log = timeLog();
    const before = foldPath(log.path("u4"));
    rewindTo(log, { target: "u4" });
    expect(foldPath(log.path())).toEqual(before);
    const later = foldPath(log.path("u6"));
    expect(later.leafId).toBe("u6");
    expect(ids(later)).toEqual(["c5", "u6"]);
  });
});

describe("compactionFloor", () => {
  it("is the parent of the newest compaction on the path", () => {
    const log = buildLog(
      user("u1", "one"),
      compaction("c2", "s1", ["u1"]),
      user("u3", "three"),
      assistant("a4", "four"),
      compaction("c5", "s2", ["u3"]),
      user("u6", "six"),
    );
    expect(compactionFloor(log.path())).toBe("a4");
    expect(compactionFloor(log.path("u3"))).toBe("u1");
    expect(foldPath(log.path()).compactionFloorId).toBe("a4");
  });

  it("finds a compaction that is the first entry of the given path", () => {
    const log = buildLog(user("u1", "one"), compaction("c2", "s", ["u1"]), user("u3", "three"));
    expect(compactionFloor(log.path().slice(2))).toBe("u1");
  });

  it("is undefined without a compaction on the path", () => {
    const log = buildLog(user("u1", "one"), assistant("a2", "two"));
    expect(compactionFloor(log.path())).toBeUndefined();
  });
});

describe("Leaf entries", () => {
  it("on a path are an error naming the Leaf entry", () => {
    expectError(
      () => foldPath([info("root"), user("u1", "x", "root"), leaf("lf", "u1", "u1")]),
      "INVALID_ARGUMENT",
      '"lf"',
    );
  });

  it("written by a rewind never appear on the folded path", () => {
    const log = buildLog(user("u1", "one"), assistant("a2", "two"));
    rewindTo(log, { target: "u1", entryId: "mv1" });
    appendBatch(log, [user("u3", "three")]);
    expect(ids(foldPath(log.path()))).toEqual(["u1", "u3"]);
    expect(log.get("u3")?.parentId).toBe("u1");
  });
});
