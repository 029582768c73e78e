import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { assistant, branchSummary, info, user } from "../../test/support/fixtures.js";
import { CliError } from "./command.js";
import { batches, planReplay, reRoot } from "./import-replay.js";

const leaf = (id: string, target: string, parentId: string): Entry =>
  create(EntrySchema, { id, parentId, kind: { case: "leaf", value: { leafId: target } } });

function numbered(entries: Entry[]): Entry[] {
  entries.forEach((e, i) => {
    e.seq = BigInt(i + 1);
  });
  return entries;
}

describe("planReplay", () => {
  it("skips Leaf entries and keeps the leaf they set when nothing follows them", () => {
    const root = info("root", "t");
    if (root.kind.case === "sessionInfo") root.kind.value.sessionId = "s-1";
    const log = numbered([
      root,
      user("q1", "hello", "root"),
      assistant("a1", "hi", [], "q1"),
      leaf("mv", "q1", "a1"),
    ]);
    const plan = planReplay(log, "f");
    expect(plan.entries.map((e) => e.id)).toEqual(["q1", "a1"]);
    expect(plan.finalLeaf).toBe("q1");
    expect(plan.leafMoves).toBe(1);
    expect(plan.recordedId).toBe("s-1");
    expect(plan.info.title).toBe("t");
  });

  it("ends on the last entry when entries follow the last Leaf entry", () => {
    const log = numbered([
      info("root"),
      user("q1", "hello", "root"),
      leaf("mv", "root", "q1"),
      user("q2", "again", "root"),
    ]);
    expect(planReplay(log, "f").finalLeaf).toBe("q2");
  });

  it("refuses an invalid log before anything is sent, naming the file", () => {
    const log = numbered([info("root"), user("q1", "hello", "nowhere")]);
    expect(() => planReplay(log, "x.jsonl")).toThrow(CliError);
    expect(() => planReplay(log, "x.jsonl")).toThrow(/^x\.jsonl: /);
    expect(() => planReplay([], "x.jsonl")).toThrow(/no entries/);
  });
});

describe("reRoot", () => {
  it("points every reference to the old root at the new one and clears seqs", () => {
    const out = reRoot(
      numbered([user("q1", "a", "old"), branchSummary("bs", "gone", "old", "q1")]),
      "old",
      "new",
    );
    expect(out.map((e) => [e.parentId, e.seq])).toEqual([
      ["new", 0n],
      ["q1", 0n],
    ]);
    expect(out[1]?.kind.case === "branchSummary" && out[1].kind.value.fromId).toBe("new");
  });
});

describe("batches", () => {
  it("splits by count and by bytes, never leaving an entry out", () => {
    const entries = Array.from({ length: 7 }, (_, i) => user(`e${i}`, "x".repeat(100), "r"));
    expect(batches(entries, 3, 1_000_000).map((b) => b.length)).toEqual([3, 3, 1]);
    expect(batches(entries, 100, 250).map((b) => b.length)).toEqual([2, 2, 2, 1]);
    expect(batches(entries, 100, 10).map((b) => b.length)).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });
});
