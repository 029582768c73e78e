import { describe, expect, it } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import {
  appendBatch,
  asJson,
  assistant,
  buildLog,
  CLOCK,
  commit,
  compaction,
  expectError,
  idsOf,
  info,
  kindless,
  label,
  leaf,
  rewindTo,
  toolResult,
  user,
} from "../../test/support/fixtures.js";
import { planAppend } from "./append-plan.js";
import { ENTRY_ID_PATTERN } from "./ids.js";
import { planReset, planRewind, resolveTarget } from "./move-plan.js";
import type { SessionLog } from "./session-log.js";

/** Plans an append of `entries` (nothing is applied). */
function plan(log: SessionLog, entries: Entry[], x = {}) {
  return planAppend(log, { entries, ...x }, { now: () => CLOCK });
}

/** Expects the plan to be rejected with `code` and the log to be left exactly as it was. */
function expectRejected(
  log: SessionLog,
  fn: () => unknown,
  code: Parameters<typeof expectError>[1],
  ...mentions: string[]
) {
  const head = log.headSeq;
  const leafBefore = log.leafId;
  const err = expectError(fn, code, ...mentions);
  expect(log.headSeq).toBe(head);
  expect(log.leafId).toBe(leafBefore);
  return err;
}

describe("planAppend: tree rules", () => {
  it("rejects an unknown parent, naming the entry and the parent", () => {
    const log = buildLog(user("u1", "hi"));
    expectRejected(
      log,
      () => plan(log, [user("u2", "x", "ghost")]),
      "INVALID_ARGUMENT",
      '"u2"',
      '"ghost"',
    );
  });

  it("rejects an entry whose parent is a Leaf entry, naming the Leaf entry", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "hello"));
    rewindTo(log, { target: "u1", entryId: "mv1" });
    expectRejected(
      log,
      () => plan(log, [user("u3", "x", "mv1")]),
      "INVALID_ARGUMENT",
      '"u3"',
      '"mv1"',
    );
  });

  it("rejects an entry without a kind, naming it", () => {
    const log = buildLog(user("u1", "hi"));
    expectRejected(log, () => plan(log, [kindless("k1")]), "INVALID_ARGUMENT", '"k1"', "kind");
  });

  it("rejects a Leaf entry appended directly", () => {
    const log = buildLog(user("u1", "hi"), user("u2", "there"));
    expectRejected(log, () => plan(log, [leaf("lf", "u1")]), "INVALID_ARGUMENT", '"lf"', "Leaf");
  });

  it("rejects an empty batch", () => {
    const log = buildLog(user("u1", "hi"));
    expectRejected(log, () => plan(log, []), "INVALID_ARGUMENT");
  });

  it("rejects a label longer than 128 characters", () => {
    const log = buildLog(user("u1", "hi"));
    expectRejected(
      log,
      () => plan(log, [label("l1", "x".repeat(129))]),
      "INVALID_ARGUMENT",
      '"l1"',
    );
    expect(plan(log, [label("l1", "x".repeat(128))]).write).toHaveLength(1);
  });
});

describe("planAppend: entry ids", () => {
  const log = buildLog(user("u1", "hi"));

  it.each([
    ["a path traversal", "../x"],
    ["a slash", "a/b"],
    ["a dot", "a.b"],
    ["a NUL byte", "a\u0000b"],
    ["65 characters", "x".repeat(65)],
    ["a quote", "b2'"],
  ])("rejects an id with %s", (_, id) => {
    expectRejected(log, () => plan(log, [user(id, "x")]), "INVALID_ARGUMENT", JSON.stringify(id));
  });

  it("accepts an id of 64 characters", () => {
    const id = "x".repeat(64);
    expect(plan(log, [user(id, "x")]).write[0]?.id).toBe(id);
  });

  it("gives an entry without id a generated one", () => {
    const p = planAppend(log, { entries: [user("", "x")] }, { newId: () => "gen-1" });
    expect(p.write[0]?.id).toBe("gen-1");
    const q = plan(log, [user("", "x"), user("", "y")]);
    const [a, b] = idsOf(q.write);
    expect(a).toMatch(ENTRY_ID_PATTERN);
    expect(b).toMatch(ENTRY_ID_PATTERN);
    expect(a).not.toBe(b);
    expect(q.write[1]?.parentId).toBe(a);
  });

  it("rejects a duplicate id inside one batch, naming it", () => {
    expectRejected(
      log,
      () => plan(log, [user("d1", "x"), user("d1", "x")]),
      "INVALID_ARGUMENT",
      '"d1"',
    );
  });
});

describe("planAppend: errors name the entry by its position in the batch", () => {
  const log = buildLog(user("u1", "hi"));
  const withServerIds = (entries: Entry[]) => {
    let n = 0;
    return planAppend(log, { entries }, { now: () => CLOCK, newId: () => `assigned-${n++}` });
  };

  /** A USER message whose role the client forgot to set. */
  function roleless(id: string): Entry {
    const e = user(id, "no role");
    if (e.kind.case === "message") e.kind.value.role = 0;
    return e;
  }

  it("'role is not set' names entries[2], not an id the server assigned", () => {
    const err = expectRejected(
      log,
      () => withServerIds([user("", "a"), user("", "b"), roleless("")]),
      "INVALID_ARGUMENT",
    );
    expect(err.message).toBe("entries[2]: message role is not set");
  });

  it("'role is not set' keeps the id the client chose next to the position", () => {
    const err = expectRejected(
      log,
      () => withServerIds([user("", "a"), roleless("mine")]),
      "INVALID_ARGUMENT",
    );
    expect(err.message).toBe('entries[1] (id "mine"): message role is not set');
  });

  it("a tree rule names the position of an entry without id: an unknown parent", () => {
    const err = expectRejected(
      log,
      () => withServerIds([user("", "a"), user("", "b", "ghost")]),
      "INVALID_ARGUMENT",
    );
    expect(err.message).toBe('entries[1]: parent "ghost" not found');
  });

  it("an entry protobuf-es cannot copy (a Struct key that is no UTF-8) is the caller's INVALID_ARGUMENT", () => {
    const bad = user("", "b");
    if (bad.kind.case === "message") {
      bad.kind.value.metadata = { "\ud800": 1 };
    }
    const err = expectRejected(log, () => withServerIds([user("", "a"), bad]), "INVALID_ARGUMENT");
    expect(err.message).toMatch(/^entries\[1\] is no valid entry: .*invalid UTF8/);
  });

  it("a duplicate id names both positions", () => {
    const err = expectRejected(
      log,
      () => withServerIds([user("d1", "a"), user("", "b"), user("d1", "c")]),
      "INVALID_ARGUMENT",
    );
    expect(err.message).toBe(
      'entries[2] (id "d1"): duplicate entry id, already used by entries[0]',
    );
  });
});

describe("planAppend: tool results", () => {
  it("accept an answer to an unanswered call on the path", () => {
    const log = buildLog(user("u1", "q"), assistant("a2", "calling", ["k1", "k2"]));
    const p = appendBatch(log, [toolResult("t1", "k1"), toolResult("t2", "k2")]);
    expect(idsOf(p.write)).toEqual(["t1", "t2"]);
    expect(log.leafId).toBe("t2");
  });

  it("accept an answer to a call made earlier in the same batch", () => {
    const log = buildLog(user("u1", "q"));
    const p = appendBatch(log, [assistant("a2", "calling", ["k1"]), toolResult("t3", "k1")]);
    expect(p.write).toHaveLength(2);
  });

  it("reject an orphan result (no such call on the path), naming it and the call", () => {
    const log = buildLog(user("u1", "q"), assistant("a2", "no calls"));
    expectRejected(
      log,
      () => plan(log, [toolResult("t3", "k9")]),
      "INVALID_ARGUMENT",
      '"t3"',
      '"k9"',
    );
  });

  it("reject an answer whose call is on another branch", () => {
    const log = buildLog(
      user("u1", "q"),
      assistant("a2", "calling", ["k1"]),
      user("x3", "other", "u1"),
    );
    expectRejected(
      log,
      () => plan(log, [toolResult("t4", "k1")]),
      "INVALID_ARGUMENT",
      '"t4"',
      '"k1"',
    );
  });

  it("reject a second answer to the same call, naming the first answer", () => {
    const log = buildLog(
      user("u1", "q"),
      assistant("a2", "calling", ["k1"]),
      toolResult("t3", "k1"),
    );
    expectRejected(
      log,
      () => plan(log, [toolResult("t4", "k1")]),
      "INVALID_ARGUMENT",
      '"t4"',
      '"k1"',
      '"t3"',
    );
  });

  it("accept a second answer on a different branch under the call", () => {
    const log = buildLog(
      user("u1", "q"),
      assistant("a2", "calling", ["k1"]),
      toolResult("t3", "k1"),
    );
    expect(plan(log, [toolResult("t4", "k1", "a2")]).write[0]?.parentId).toBe("a2");
  });
});

describe("planAppend: compactions", () => {
  //   root ─ u1 ─ a2(k1) ─ t3(k1) ─ a4 ─ u5
  //                           └─ x6
  function toolLog() {
    const log = buildLog(
      user("u1", "q"),
      assistant("a2", "calling", ["k1"]),
      toolResult("t3", "k1"),
      assistant("a4", "703"),
      user("x6", "sibling", "t3"),
      user("u5", "next", "a4"),
    );
    return log;
  }

  it("may replace entries of its own path", () => {
    const log = toolLog();
    const p = appendBatch(log, [compaction("c7", "sum", ["u1", "a2", "t3"])]);
    expect(p.write[0]?.parentId).toBe("u5");
  });

  it("may not replace an entry off its path, naming it", () => {
    const log = toolLog();
    expectRejected(
      log,
      () => plan(log, [compaction("c7", "sum", ["u1", "x6"])]),
      "INVALID_ARGUMENT",
      '"c7"',
      '"x6"',
    );
  });

  it("may not replace an unknown entry", () => {
    const log = toolLog();
    expectRejected(
      log,
      () => plan(log, [compaction("c7", "sum", ["nope"])]),
      "INVALID_ARGUMENT",
      '"nope"',
    );
  });

  it("may not replace the root", () => {
    const log = toolLog();
    expectRejected(
      log,
      () => plan(log, [compaction("c7", "sum", ["root", "u1"])]),
      "INVALID_ARGUMENT",
      '"root"',
    );
  });

  it("must replace at least one entry", () => {
    const log = toolLog();
    expectRejected(log, () => plan(log, [compaction("c7", "sum", [])]), "INVALID_ARGUMENT", '"c7"');
  });

  it("may not replace a tool call without its result", () => {
    const log = toolLog();
    expectRejected(
      log,
      () => plan(log, [compaction("c7", "sum", ["u1", "a2"])]),
      "INVALID_ARGUMENT",
      '"k1"',
      '"a2"',
      '"t3"',
    );
  });

  it("may not replace a tool result without its call", () => {
    const log = toolLog();
    expectRejected(
      log,
      () => plan(log, [compaction("c7", "sum", ["t3", "a4"])]),
      "INVALID_ARGUMENT",
      '"k1"',
      '"a2"',
      '"t3"',
    );
  });

  it("may replace entries written earlier in the same batch", () => {
    const log = toolLog();
    const p = appendBatch(log, [user("u8", "more"), compaction("c9", "sum", ["u8", "u5"])]);
    expect(p.write[1]?.parentId).toBe("u8");
  });
});

describe("planAppend: parents, seqs and the leaf", () => {
  it("attaches the first entry of a batch to the leaf and each later one to the previous", () => {
    const log = buildLog(user("u1", "hi"));
    const p = plan(log, [assistant("a2", "x"), user("u3", "y"), assistant("a4", "z")]);
    expect(p.write.map((e) => [e.id, e.parentId])).toEqual([
      ["a2", "u1"],
      ["u3", "a2"],
      ["a4", "u3"],
    ]);
  });

  it("attaches to the previous batch entry even when that one named another parent", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    const p = plan(log, [user("b3", "branch", "u1"), assistant("b4", "y")]);
    expect(p.write.map((e) => e.parentId)).toEqual(["u1", "b3"]);
  });

  it("assigns dense seqs after the head and stamps entries without a timestamp", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    expect(log.headSeq).toBe(3);
    const p = plan(log, [user("u3", "y"), assistant("a4", "z"), user("u5", "w")]);
    expect(p.write.map((e) => e.seq)).toEqual([4n, 5n, 6n]);
    expect(p.write.every((e) => e.timestamp !== undefined)).toBe(true);
    expect(p.deduplicated).toBe(false);
    expect(p.entries).toEqual(p.write);
  });

  it("makes the last appended entry the leaf, whatever its kind", () => {
    const log = buildLog(user("u1", "hi"));
    appendBatch(log, [assistant("a2", "x"), label("l3", "bookmark")]);
    expect(log.leafId).toBe("l3");
    expect(log.headSeq).toBe(4);
  });

  it("does not modify the caller's entries", () => {
    const log = buildLog(user("u1", "hi"));
    const input = user("u2", "x");
    appendBatch(log, [input]);
    expect(input.parentId).toBeUndefined();
    expect(input.seq).toBe(0n);
    expect(log.get("u2")?.parentId).toBe("u1");
  });
});

describe("planAppend: entries handed over (handOver)", () => {
  /** A batch of every kind planning sets fields in: a SessionInfo update, messages without id or parent. */
  function batch(): Entry[] {
    const update = info("i2", "renamed");
    update.parentId = undefined;
    const anonymous = user("", "no id");
    anonymous.parentId = undefined;
    anonymous.timestamp = undefined;
    return [update, anonymous, assistant("a3", "x", ["k1"])];
  }
  const ids = () => {
    let n = 0;
    return () => `gen${++n}`;
  };
  const planned = (log: SessionLog, entries: Entry[], handOver: boolean) =>
    planAppend(log, { entries, handOver }, { now: () => CLOCK, newId: ids() });

  it("plans what a deep copy plans, and stores the same JSON", () => {
    const log = buildLog(user("u1", "hi"));
    const copied = planned(log, batch(), false);
    const handed = planned(log, batch(), true);
    expect(asJson(handed.entries)).toEqual(asJson(copied.entries));
    expect(handed.json).toEqual(copied.json);
  });

  it("never changes the input, so the same batch plans again alike (a re-plan after a conflict)", () => {
    const log = buildLog(user("u1", "hi"));
    const input = batch();
    const before = asJson(input);
    const first = planned(log, input, true);
    expect(asJson(input)).toEqual(before);
    const second = planned(log, input, true);
    expect(asJson(second.entries)).toEqual(asJson(first.entries));
    // The SessionInfo's session id is set on the stored copy only.
    const stored = first.entries[0]?.kind;
    expect(stored?.case === "sessionInfo" && stored.value.sessionId).toBe("s1");
    const given = input[0]?.kind;
    expect(given?.case === "sessionInfo" && given.value.sessionId).toBe("");
  });

  it("shares the entries' content with the stored copies; without it nothing is shared", () => {
    const log = buildLog(user("u1", "hi"));
    const input = batch();
    const content = (e: Entry | undefined) => e?.kind.case === "message" && e.kind.value;
    expect(content(planned(log, input, true).entries[1])).toBe(content(input[1]));
    expect(content(planned(log, input, false).entries[1])).not.toBe(content(input[1]));
  });
});

describe("planAppend: nothing is written on error", () => {
  it("a batch with one bad entry writes none of it", () => {
    const log = buildLog(user("u1", "hi"));
    expectRejected(
      log,
      () => plan(log, [user("ok1", "fine"), user("ok2", "fine"), toolResult("bad", "k9")]),
      "INVALID_ARGUMENT",
      '"bad"',
    );
    expect(log.has("ok1")).toBe(false);
    expect(log.has("ok2")).toBe(false);
    expect(log.headSeq).toBe(2);
  });
});

describe("planAppend: idempotent retries", () => {
  it("a retried batch with the same ids and content writes nothing and returns the stored entries", () => {
    const log = buildLog(user("u1", "hi"));
    const batch = [assistant("a2", "x"), user("u3", "y")];
    const first = appendBatch(log, batch);
    const retry = plan(log, batch);
    expect(retry.deduplicated).toBe(true);
    expect(retry.write).toEqual([]);
    expect(retry.entries).toEqual(first.write);
    expect(retry.entries.map((e) => e.seq)).toEqual([3n, 4n]);
  });

  it("is deduplicated after the head moved and with a now stale expectedSeq / expectedLeafId", () => {
    const log = buildLog(user("u1", "hi"));
    const head = log.headSeq;
    const batch = [assistant("a2", "x")];
    appendBatch(log, batch, { expectedSeq: head, expectedLeafId: "u1" });
    appendBatch(log, [user("u3", "someone else")]);
    const retry = plan(log, batch, { expectedSeq: head, expectedLeafId: "u1" });
    expect(retry.deduplicated).toBe(true);
    expect(retry.write).toEqual([]);
    expect(retry.entries[0]?.seq).toBe(3n);
    expect(log.headSeq).toBe(4);
  });

  it("an entry with the same id but other content fails with ALREADY_EXISTS", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    expectRejected(log, () => plan(log, [assistant("a2", "different")]), "ALREADY_EXISTS", '"a2"');
  });

  it("an entry with the same id but another parent fails with ALREADY_EXISTS", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    expectRejected(
      log,
      () => plan(log, [assistant("a2", "x", [], "root")]),
      "ALREADY_EXISTS",
      '"a2"',
    );
  });

  it("a batch mixing a stored entry with new ones fails with ALREADY_EXISTS and writes nothing", () => {
    const log = buildLog(user("u1", "hi"));
    expectRejected(
      log,
      () => plan(log, [user("u1", "hi"), user("u9", "new")]),
      "ALREADY_EXISTS",
      '"u1"',
    );
    expect(log.has("u9")).toBe(false);
  });
});

describe("planAppend: optimistic concurrency", () => {
  it("a stale expectedSeq fails with ABORTED", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    const err = expectRejected(
      log,
      () => plan(log, [user("u3", "y")], { expectedSeq: 2 }),
      "ABORTED",
    );
    expect(err.message).toContain("3");
  });

  it("a stale expectedLeafId fails with ABORTED naming both leaves", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    expectRejected(
      log,
      () => plan(log, [user("u3", "y")], { expectedLeafId: "u1" }),
      "ABORTED",
      '"u1"',
      '"a2"',
    );
  });

  it("matching expectations (number or bigint) succeed", () => {
    const log = buildLog(user("u1", "hi"));
    appendBatch(log, [user("u2", "y")], { expectedSeq: 2, expectedLeafId: "u1" });
    appendBatch(log, [user("u3", "z")], { expectedSeq: 3n });
    expect(log.headSeq).toBe(4);
  });
});

describe("planRewind", () => {
  it("moves the leaf to an entry id with a Leaf entry whose parent is the previous leaf", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    const p = rewindTo(log, { target: "u1" });
    const [lf] = p.write;
    expect(lf?.kind.case).toBe("leaf");
    expect(lf?.kind.value).toMatchObject({ leafId: "u1" });
    expect(lf?.parentId).toBe("a2");
    expect(lf?.seq).toBe(4n);
    expect(log.leafId).toBe("u1");
    expect(idsOf(log.path())).toEqual(["root", "u1"]);
  });

  it("accepts a label and goes to the newest Label entry with that text", () => {
    const log = buildLog(
      user("u1", "hi"),
      label("l1", "checkpoint"),
      assistant("a2", "x"),
      label("l2", "checkpoint"),
      user("u3", "y"),
    );
    rewindTo(log, { target: "checkpoint" });
    expect(log.leafId).toBe("l2");
    expect(idsOf(log.path())).toEqual(["root", "u1", "l1", "a2", "l2"]);
  });

  it("prefers an entry id over a label with the same text", () => {
    const log = buildLog(user("u1", "hi"), label("l1", "u1"), user("u2", "y"));
    expect(resolveTarget(log, "u1").id).toBe("u1");
  });

  it("fails with NOT_FOUND for an unknown target, naming it", () => {
    const log = buildLog(user("u1", "hi"));
    expectRejected(log, () => planRewind(log, { target: "nowhere" }), "NOT_FOUND", '"nowhere"');
  });

  it("fails with INVALID_ARGUMENT for a Leaf entry as target", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    rewindTo(log, { target: "u1", entryId: "mv1" });
    expectRejected(log, () => planRewind(log, { target: "mv1" }), "INVALID_ARGUMENT", '"mv1"');
  });

  it("checks expectations like an append", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    expectRejected(log, () => planRewind(log, { target: "u1", expectedSeq: 1 }), "ABORTED");
    expectRejected(log, () => planRewind(log, { target: "u1", expectedLeafId: "u1" }), "ABORTED");
  });

  it("a retried rewind with the same entryId writes nothing, even with stale expectations", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    const first = rewindTo(log, { target: "u1", entryId: "mv1", expectedSeq: 3 });
    appendBatch(log, [assistant("b2", "again")]);
    const retry = planRewind(log, { target: "u1", entryId: "mv1", expectedSeq: 3 });
    expect(retry.deduplicated).toBe(true);
    expect(retry.write).toEqual([]);
    expect(retry.entries).toEqual(first.write);
  });

  it("a retried rewind to a label is deduplicated after a newer Label took that text", () => {
    const log = buildLog(user("u1", "hi"), label("l1", "cp"), assistant("a2", "x"));
    rewindTo(log, { target: "cp", entryId: "mv1" });
    appendBatch(log, [user("u3", "y"), label("l4", "cp")]);
    const retry = planRewind(log, { target: "cp", entryId: "mv1" });
    expect(retry.deduplicated).toBe(true);
    expect(retry.entries[0]?.kind.value).toMatchObject({ leafId: "l1" });
    expect(planRewind(log, { target: "cp" }).write[0]?.kind.value).toMatchObject({ leafId: "l4" });
  });

  it("reusing a stored non-Leaf entry id as a rewind's entryId fails with ALREADY_EXISTS", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    expectRejected(
      log,
      () => planRewind(log, { target: "u1", entryId: "a2" }),
      "ALREADY_EXISTS",
      '"a2"',
    );
  });

  it("reusing a rewind's entryId for another target fails with ALREADY_EXISTS", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    rewindTo(log, { target: "u1", entryId: "mv1" });
    expectRejected(
      log,
      () => planRewind(log, { target: "a2", entryId: "mv1" }),
      "ALREADY_EXISTS",
      '"mv1"',
    );
  });
});

describe("planRewind: the compaction floor", () => {
  //   root ─ u1 ─ a2 ─ u3 ─ a4 ─ c5(replaces u1, a2; floor a4) ─ u6
  //                           └─ x7
  function floorLog() {
    const log = buildLog(
      user("u1", "one"),
      assistant("a2", "two"),
      user("u3", "three"),
      assistant("a4", "four"),
      user("x7", "sibling under the floor"),
      compaction("c5", "one and two", ["u1", "a2"], "a4"),
      user("u6", "six"),
    );
    return log;
  }

  it("rewinding before the floor fails with FAILED_PRECONDITION naming the target and the floor", () => {
    const log = floorLog();
    expect(log.leafId).toBe("u6");
    expectRejected(
      log,
      () => planRewind(log, { target: "u3" }),
      "FAILED_PRECONDITION",
      '"u3"',
      '"a4"',
    );
    expectRejected(log, () => planRewind(log, { target: "root" }), "FAILED_PRECONDITION", '"root"');
  });

  it("rewinding to the floor itself is allowed", () => {
    const log = floorLog();
    rewindTo(log, { target: "a4" });
    expect(log.leafId).toBe("a4");
  });

  it("rewinding to a descendant of the floor is allowed, on this branch or another", () => {
    const log = floorLog();
    rewindTo(log, { target: "c5" });
    expect(log.leafId).toBe("c5");
    const other = floorLog();
    rewindTo(other, { target: "x7" });
    expect(other.leafId).toBe("x7");
  });

  it("allowBeforeCompaction lifts the guard", () => {
    const log = floorLog();
    rewindTo(log, { target: "u3", allowBeforeCompaction: true });
    expect(idsOf(log.path())).toEqual(["root", "u1", "a2", "u3"]);
  });

  it("only the current path's compactions count", () => {
    const log = floorLog();
    rewindTo(log, { target: "x7" });
    rewindTo(log, { target: "u1" });
    expect(log.leafId).toBe("u1");
  });

  it("a retried rewind is deduplicated even after a later compaction moved the floor past its target", () => {
    const log = floorLog();
    rewindTo(log, { target: "x7", entryId: "mv1" });
    appendBatch(log, [user("u8", "eight"), compaction("c9", "sum", ["u8"])]);
    expectRejected(log, () => planRewind(log, { target: "x7" }), "FAILED_PRECONDITION");
    const retry = planRewind(log, { target: "x7", entryId: "mv1" });
    expect(retry.deduplicated).toBe(true);
    expect(retry.write).toEqual([]);
  });
});

describe("planReset", () => {
  it("moves the leaf to the root and keeps the history", () => {
    const log = buildLog(
      user("u1", "hi"),
      assistant("a2", "x"),
      compaction("c3", "s", ["u1", "a2"]),
    );
    const head = log.headSeq;
    const p = commit(log, planReset(log, { entryId: "rs1" }, { now: () => CLOCK }));
    expect(p.write[0]?.kind.value).toMatchObject({ leafId: "root" });
    expect(log.leafId).toBe("root");
    expect(idsOf(log.path())).toEqual(["root"]);
    expect(log.headSeq).toBe(head + 1);
    for (const id of ["u1", "a2", "c3"]) expect(log.has(id)).toBe(true);
  });

  it("the next append after a reset grows a new branch from the root", () => {
    const log = buildLog(user("u1", "hi"));
    commit(log, planReset(log, {}));
    appendBatch(log, [user("n1", "fresh")]);
    expect(idsOf(log.path())).toEqual(["root", "n1"]);
  });

  it("a retried reset with the same entryId writes nothing", () => {
    const log = buildLog(user("u1", "hi"));
    commit(log, planReset(log, { entryId: "rs1" }));
    appendBatch(log, [user("n1", "fresh")]);
    expect(planReset(log, { entryId: "rs1" }).write).toEqual([]);
  });
});

describe("tool results after a compaction", () => {
  it("a TOOL result for a call that a compaction replaced is INVALID_ARGUMENT naming the compaction", () => {
    const log = buildLog(
      user("u1", "q"),
      assistant("a1", "calling", ["call-1"]),
      compaction("c1", "summary", ["u1", "a1"]),
    );
    const before = log.headSeq;
    expectError(
      () => planAppend(log, { entries: [toolResult("t1", "call-1")] }),
      "INVALID_ARGUMENT",
      "t1",
      "call-1",
      "c1",
    );
    expect(log.headSeq).toBe(before);
  });

  it("a fractional expectedSeq is INVALID_ARGUMENT, not a crash", () => {
    const log = buildLog(user("u1", "q"));
    expectError(
      () => planAppend(log, { entries: [user("u2", "q")], expectedSeq: 1.5 }),
      "INVALID_ARGUMENT",
      "1.5",
    );
  });
});
