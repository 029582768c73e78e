import { clone, create } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { assistant, expectError, info, toolResult, user } from "../../test/support/fixtures.js";
import { planAppend } from "./append-plan.js";
import { isSessiondError } from "./errors.js";
import { planImport } from "./import-plan.js";
import { SessionLog } from "./session-log.js";

function withSeqs(entries: Entry[]): Entry[] {
  return entries.map((e, i) => {
    const c = clone(EntrySchema, e);
    c.seq = BigInt(i + 1);
    return c;
  });
}

function rejects(entries: Entry[], fragment: string): void {
  try {
    planImport("imported", entries);
  } catch (err) {
    expect(isSessiondError(err, "INVALID_ARGUMENT")).toBe(true);
    expect((err as Error).message).toContain(fragment);
    return;
  }
  throw new Error("import was accepted");
}

describe("planImport", () => {
  it("accepts a valid branched log, keeps its seqs and sets the new session id", () => {
    const entries = withSeqs([
      info("r1"),
      user("a1", "q1", "r1"),
      assistant("b2", "answer", [], "a1"),
      assistant("b2x", "another answer", [], "a1"),
      create(EntrySchema, {
        id: "l1",
        parentId: "b2x",
        kind: { case: "leaf", value: { leafId: "b2" } },
      }),
    ]);
    (entries[1] as Entry).seq = 0n;
    const out = planImport("imported", entries);
    expect(out.map((e) => Number(e.seq))).toEqual([1, 2, 3, 4, 5]);
    expect(out.map((e) => e.id)).toEqual(["r1", "a1", "b2", "b2x", "l1"]);
    const root = out[0] as Entry;
    expect(root.kind.case === "sessionInfo" && root.kind.value.sessionId).toBe("imported");
  });

  it("fills the root's created_at from its timestamp and a format version of 0, and keeps set ones", () => {
    const bare = withSeqs([info("r1")]);
    (bare[0] as Entry).timestamp = create(TimestampSchema, { seconds: 1_700_000_000n });
    const root = planImport("imported", bare)[0] as Entry;
    const filled = root.kind.case === "sessionInfo" ? root.kind.value : undefined;
    expect(filled?.createdAt?.seconds).toBe(1_700_000_000n);
    expect(filled?.formatVersion).toBe(1);
    const set = withSeqs([info("r1")]);
    const setRoot = set[0] as Entry;
    if (setRoot.kind.case !== "sessionInfo") throw new Error("no root");
    setRoot.kind.value.createdAt = create(TimestampSchema, { seconds: 1_600_000_000n });
    setRoot.kind.value.formatVersion = 7;
    const kept = planImport("imported", set)[0] as Entry;
    const keptInfo = kept.kind.case === "sessionInfo" ? kept.kind.value : undefined;
    expect(keptInfo?.createdAt?.seconds).toBe(1_600_000_000n);
    expect(keptInfo?.formatVersion).toBe(7);
  });

  it("checks the root's tags as a creation would: keys, and no empty value", () => {
    const tagged = (tags: Record<string, string>) => {
      const root = info("r1");
      if (root.kind.case === "sessionInfo") root.kind.value.tags = tags;
      return withSeqs([root, user("u1", "q", "r1")]);
    };
    expect(planImport("imported", tagged({ user: "ana" }))[0]?.kind.value).toMatchObject({
      tags: { user: "ana" },
    });
    rejects(tagged({ "bad key": "v" }), 'imported entry "r1": tags: invalid tag key "bad key"');
    rejects(tagged({ user: "" }), 'imported entry "r1": tags: tag "user" has an empty value');
  });

  it("rejects a cycle in imported data without hanging", () => {
    rejects(withSeqs([info("r1"), user("x", "x", "y"), user("y", "y", "x")]), "cycle");
  });

  it("rejects a missing parent, naming it", () => {
    rejects(withSeqs([info("r1"), user("a1", "q", "ghost")]), "ghost");
  });

  it("rejects duplicate ids", () => {
    rejects(withSeqs([info("r1"), user("a1", "q", "r1"), user("a1", "q", "r1")]), "a1");
  });

  it("rejects a second root", () => {
    rejects(withSeqs([info("r1"), info("r2")]), "root");
  });

  it("rejects a child listed before its parent", () => {
    rejects(withSeqs([info("r1"), user("b", "b", "a"), user("a", "a", "r1")]), "before its parent");
  });

  it("rejects an orphan tool result with the live append rules", () => {
    rejects(withSeqs([info("r1"), user("a1", "q", "r1"), toolResult("t1", "call-9", "a1")]), "t1");
  });

  it("rejects a first entry that is not a SessionInfo", () => {
    rejects(withSeqs([user("a1", "q")]), "SessionInfo");
  });

  it("rejects a SessionInfo first entry that has a parent: it is not the root", () => {
    rejects(
      withSeqs([info("i1", "T", "r1"), info("r1")]),
      "the first entry must be a SessionInfo root",
    );
  });

  it("rejects a root whose id breaks the id rules, naming the root's id", () => {
    rejects(withSeqs([info("bad id")]), 'invalid id of the imported root "bad id"');
  });

  it("reports a rule broken on replay in the live Append's own words", () => {
    const before = withSeqs([info("r1"), user("a1", "q", "r1")]);
    const orphan = toolResult("t1", "call-9", "a1");
    const live = SessionLog.from("imported", planImport("imported", before));
    const liveErr = expectError(
      () => planAppend(live, { entries: [orphan] }, {}, true),
      "INVALID_ARGUMENT",
    );
    const importErr = expectError(
      () => planImport("imported", [...before, orphan]),
      "INVALID_ARGUMENT",
    );
    expect(importErr.message).toBe(liveErr.message);
  });

  it("reports another domain error on replay as INVALID_ARGUMENT naming the imported entry", () => {
    // The entry without id is given "b", which the next imported entry uses with other content.
    const entries = withSeqs([info("r1"), user("", "first", "r1"), user("b", "second", "r1")]);
    const err = expectError(
      () => planImport("imported", entries, { newId: () => "b" }),
      "INVALID_ARGUMENT",
      'imported entry "b": ',
      "already exists",
    );
    expect(err.message).toMatch(/^imported entry "b": entry "b" already exists/);
  });

  it("lets a fault that is not a domain error through unchanged", () => {
    const fault = new Error("clock stopped");
    const entries = withSeqs([info("r1"), user("a1", "q", "r1")]);
    const now = (): Date => {
      throw fault;
    };
    let thrown: unknown;
    try {
      planImport("imported", entries, { now });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBe(fault);
  });
});
