import { create, toBinary } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  EntryKind,
  type SessionState,
  SessionStateSchema,
  View,
} from "../../gen/sessiond/v1/session_pb.js";
import {
  assistant,
  branchSummary,
  compaction,
  custom,
  expectCode,
  kindless,
  label,
  leaf,
  modelChange,
  thinkingLevel,
  toolResult,
  user,
} from "../../test/support/fixtures.js";
import { ENGINE_FACTORIES, type EngineFixture } from "../../test/support/store-model.js";
import { messageText } from "../core/entry.js";
import type { Session } from "./session.js";
import { SessionStore, type StoreOptions } from "./session-store.js";

const CLOCK = new Date("2026-03-04T05:06:07.000Z");

/** [entry id, text] of each message of a state. */
function messagesOf(state: SessionState): [string, string][] {
  return state.messages.map((m) => [m.entryId, m.message ? messageText(m.message) : ""]);
}

describe.each(ENGINE_FACTORIES)("Session on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let session: Session;
  let rootId: string;

  async function openSession(options: StoreOptions = {}): Promise<void> {
    store = new SessionStore(fixture.engine, { now: () => CLOCK, ...options });
    const { session: meta } = await store.create({ sessionId: "sess", title: "Title" });
    session = await store.open(undefined, meta.id);
    rootId = meta.leafId;
  }

  async function entries(): Promise<Entry[]> {
    return (await session.entries(0, 1000)).entries;
  }

  async function parentsOf(...ids: string[]): Promise<(string | undefined)[]> {
    const all = await entries();
    return ids.map((id) => all.find((e) => e.id === id)?.parentId);
  }

  /** Every stored byte a client can observe: the raw log, both views and the tree. */
  async function snapshot(): Promise<string[]> {
    const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
    const tree = await session.tree();
    return [
      ...(await entries()).map((e) => hex(toBinary(EntrySchema, e))),
      hex(toBinary(SessionStateSchema, await session.state({ view: View.CONTEXT }))),
      hex(toBinary(SessionStateSchema, await session.state({ view: View.HISTORY }))),
      JSON.stringify(tree.nodes.map((n) => [n.id, n.onCurrentPath])),
      tree.leafId,
    ];
  }

  beforeEach(async () => {
    fixture = await factory.open();
    await openSession();
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  describe("append", () => {
    it("attaches one entry to the current leaf and makes it the leaf", async () => {
      const r = await session.append(user("u1", "hello"));
      expect(r.entries.map((e) => [e.id, e.parentId, e.seq])).toEqual([["u1", rootId, 2n]]);
      expect(r.headSeq).toBe(2);
      expect(r.leafId).toBe("u1");
      expect(r.deduplicated).toBe(false);
      const meta = await session.meta();
      expect(meta.leafId).toBe("u1");
      expect(meta.messageCount).toBe(1n);
    });

    it("fills in an id and the store's clock when the caller leaves them empty", async () => {
      const r = await session.append({
        kind: { case: "label", value: { label: "no-id" } },
      });
      const [stored] = r.entries as [Entry];
      expect(stored.id).toMatch(/^[0-9a-f]{16}$/);
      expect(stored.timestamp && timestampDate(stored.timestamp)).toEqual(CLOCK);
      expect((await entries()).map((e) => e.id)).toContain(stored.id);
    });

    it("chains a batch without parents onto the leaf, entry after entry", async () => {
      await session.append(user("u0", "before"));
      const r = await session.append([user("u1", "q"), assistant("a1", "a"), user("u2", "q2")]);
      expect(r.entries.map((e) => [e.id, e.parentId, e.seq])).toEqual([
        ["u1", "u0", 3n],
        ["a1", "u1", 4n],
        ["u2", "a1", 5n],
      ]);
      expect(r.leafId).toBe("u2");
      expect(r.headSeq).toBe(5);
    });

    it("defaults a batch entry's parent to the previous entry even after an explicit parent", async () => {
      await session.append([user("u1", "q"), assistant("a1", "a")]);
      await session.append([user("x1", "branch", "u1"), assistant("x2", "reply")]);
      expect(await parentsOf("x1", "x2")).toEqual(["u1", "x1"]);
      expect((await session.state()).leafId).toBe("x2");
    });

    it("writes nothing and fails with ABORTED when expectedSeq is stale", async () => {
      await session.append(user("u1", "q"));
      const before = await snapshot();
      await expectCode(
        () => session.append(user("u2", "late"), { expectedSeq: 1 }),
        "ABORTED",
        "expected head seq 1",
      );
      expect(await snapshot()).toEqual(before);
      const ok = await session.append(user("u2", "on time"), { expectedSeq: 2n });
      expect(ok.headSeq).toBe(3);
    });

    it("writes nothing and fails with ABORTED when expectedLeafId is not the leaf", async () => {
      await session.append([user("u1", "q"), assistant("a1", "a")]);
      const before = await snapshot();
      await expectCode(
        () => session.append(user("u2", "late"), { expectedLeafId: "u1" }),
        "ABORTED",
        '"u1"',
        '"a1"',
      );
      expect(await snapshot()).toEqual(before);
      await session.append(user("u2", "on time"), { expectedLeafId: "a1", expectedSeq: 3 });
      expect(await parentsOf("u2")).toEqual(["a1"]);
    });

    it("lets exactly one of two racing appends with the same expectedLeafId win, without forking", async () => {
      await session.append(user("u1", "q"));
      const results = await Promise.allSettled([
        session.append(assistant("agent-a", "from A"), { expectedLeafId: "u1" }),
        session.append(assistant("agent-b", "from B"), { expectedLeafId: "u1" }),
      ]);
      const ok = results.filter((r) => r.status === "fulfilled");
      const failed = results.filter((r) => r.status === "rejected");
      expect(ok).toHaveLength(1);
      expect(failed).toHaveLength(1);
      expect((failed[0] as PromiseRejectedResult).reason).toMatchObject({ code: "ABORTED" });
      const children = (await entries()).filter((e) => e.parentId === "u1");
      expect(children).toHaveLength(1);
      expect((await session.meta()).headSeq).toBe(3n);
    });

    it("serialises concurrent appends into one dense chain", async () => {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => session.append(user(`c${i}`, `concurrent ${i}`))),
      );
      const all = await entries();
      expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 21 }, (_, i) => BigInt(i + 1)));
      for (let i = 1; i < all.length; i++) {
        expect(all[i]?.parentId).toBe(all[i - 1]?.id);
      }
    });

    it("returns the stored entries for an identical retry and writes nothing", async () => {
      const first = await session.append([user("u1", "q"), assistant("a1", "a")]);
      await session.append(user("u2", "later"));
      const before = await snapshot();
      const retry = await session.append([user("u1", "q"), assistant("a1", "a")], {
        expectedSeq: 1,
      });
      expect(retry.deduplicated).toBe(true);
      expect(retry.entries).toEqual(first.entries);
      expect(retry.headSeq).toBe(4);
      expect(await snapshot()).toEqual(before);
    });

    it("refuses a reused id with other content with ALREADY_EXISTS and writes nothing", async () => {
      await session.append(user("u1", "q"));
      const before = await snapshot();
      await expectCode(() => session.append(user("u1", "other")), "ALREADY_EXISTS", '"u1"');
      await expectCode(
        () => session.append([user("u1", "q"), user("u9", "new")]),
        "ALREADY_EXISTS",
        '"u1"',
      );
      expect(await snapshot()).toEqual(before);
    });
  });

  describe("limits", () => {
    it("refuses more entries than maxEntriesPerAppend with RESOURCE_EXHAUSTED", async () => {
      await fixture.dispose();
      fixture = await factory.open();
      await openSession({ limits: { maxEntriesPerAppend: 3 } });
      const before = await snapshot();
      const four = [user("a", "1"), user("b", "2"), user("c", "3"), user("d", "4")];
      await expectCode(() => session.append(four), "RESOURCE_EXHAUSTED", "4", "3");
      expect(await snapshot()).toEqual(before);
      expect((await session.append(four.slice(0, 3))).headSeq).toBe(4);
    });

    it("refuses an entry over maxEntryBytes with RESOURCE_EXHAUSTED, the whole batch unwritten", async () => {
      await fixture.dispose();
      fixture = await factory.open();
      await openSession({ limits: { maxEntryBytes: 512 } });
      const before = await snapshot();
      await expectCode(
        () => session.append([user("small", "ok"), user("big", "x".repeat(600))]),
        "RESOURCE_EXHAUSTED",
        '"big"',
      );
      expect(await snapshot()).toEqual(before);
      expect((await session.append(user("fits", "x".repeat(300)))).headSeq).toBe(2);
    });
  });

  describe("bad input never damages stored data", () => {
    let leafEntryId: string;

    //   root ─ u1 ─ a1(call-1) ─ t1 ─ a2        (current path)
    //           └─ b1                            (another branch)
    beforeEach(async () => {
      await session.append([
        user("u1", "q"),
        assistant("a1", "calling", ["call-1"]),
        toolResult("t1", "call-1"),
        assistant("a2", "done"),
      ]);
      await session.append(user("b1", "side branch", "u1"));
      leafEntryId = (await session.rewind("a2")).entries[0]?.id as string;
    });

    const cases: [string, () => Entry[]][] = [
      ["an entry id with a path", () => [user("../x", "q")]],
      ["an entry id of 200 characters", () => [user("a".repeat(200), "q")]],
      ["an entry id with NUL", () => [user("a\u0000b", "q")]],
      ["an unknown parent", () => [user("n1", "q", "ghost")]],
      ["a Leaf entry appended directly", () => [leaf("lf", "u1")]],
      ["a Leaf entry as parent", () => [user("n1", "q", leafEntryId)]],
      ["an entry without kind", () => [kindless("k1")]],
      ["a tool result with no call", () => [toolResult("t9", "call-none")]],
      ["a second result for an answered call", () => [toolResult("t9", "call-1")]],
      ["a tool result whose call is on another branch", () => [toolResult("t9", "call-1", "b1")]],
      ["a compaction of an entry off its path", () => [compaction("cx", "s", ["b1"])]],
      ["a compaction of an unknown entry", () => [compaction("cx", "s", ["ghost"])]],
      ["a compaction separating a call from its result", () => [compaction("cx", "s", ["a1"])]],
      ["a compaction of the root", () => [compaction("cx", "s", [rootId])]],
      ["a branch summary of an unknown entry", () => [branchSummary("bs", "s", "ghost")]],
      ["a duplicate id in a batch", () => [user("d1", "q"), user("d1", "q")]],
      ["a valid entry followed by a bad one", () => [user("ok", "q"), user("bad", "q", "ghost")]],
      ["a NaN in custom data (no JSON form)", () => [custom("nan", "ns", { x: Number.NaN })]],
      [
        "a tool call whose arguments Value has no kind (no JSON form)",
        () => {
          const a = assistant("nv", "calling", ["call-nv"]);
          const part = a.kind.case === "message" ? a.kind.value.content[1] : undefined;
          if (part?.part.case === "toolCall") part.part.value.arguments = create(ValueSchema, {});
          return [a];
        },
      ],
    ];

    it.each(cases)("%s fails with INVALID_ARGUMENT and changes nothing", async (_, build) => {
      const before = await snapshot();
      const head = (await entries()).length;
      await expectCode(() => session.append(build()), "INVALID_ARGUMENT");
      expect(await snapshot()).toEqual(before);
      const next = await session.append(user("next", "still works"));
      expect(next.entries[0]?.seq).toBe(BigInt(head + 1));
      expect(next.entries[0]?.parentId).toBe("a2");
    });

    it("a rewind to a Leaf entry fails with INVALID_ARGUMENT and changes nothing", async () => {
      const before = await snapshot();
      await expectCode(() => session.rewind(leafEntryId), "INVALID_ARGUMENT", leafEntryId);
      await expectCode(() => session.rewind("ghost"), "NOT_FOUND", '"ghost"');
      expect(await snapshot()).toEqual(before);
    });
  });

  describe("rewind and reset", () => {
    beforeEach(async () => {
      await session.append([user("u1", "q1"), assistant("a1", "a1"), user("u2", "q2")]);
    });

    it("moves the leaf to an entry id, and the next append grows a new branch there", async () => {
      const r = await session.rewind("a1");
      expect(r.leafId).toBe("a1");
      expect(r.headSeq).toBe(5);
      expect(r.entries[0]?.kind).toMatchObject({ case: "leaf", value: { leafId: "a1" } });
      expect(r.entries[0]?.parentId).toBe("u2");
      await session.append(user("v2", "another q2"));
      expect(await parentsOf("v2")).toEqual(["a1"]);
      expect(messagesOf(await session.state())).toEqual([
        ["u1", "q1"],
        ["a1", "a1"],
        ["v2", "another q2"],
      ]);
    });

    it("moves the leaf to the newest Label entry with a label text", async () => {
      await session.append(label("old-mark", "mark", "u1"));
      await session.append(label("new-mark", "mark", "a1"));
      await session.append(user("u3", "q3"));
      const r = await session.rewind("mark");
      expect(r.leafId).toBe("new-mark");
      expect((await session.state()).label).toBe("mark");
      expect((await session.state()).messages.map((m) => m.entryId)).toEqual(["u1", "a1"]);
    });

    it("fails with ABORTED on a stale expectation", async () => {
      await expectCode(() => session.rewind("u1", { expectedLeafId: "a1" }), "ABORTED");
      expect((await session.meta()).leafId).toBe("u2");
    });

    it("de-duplicates a retried rewind that carries an entry id", async () => {
      const first = await session.rewind("u1", { entryId: "move-1" });
      await session.append(user("x", "after"));
      const retry = await session.rewind("u1", { entryId: "move-1" });
      expect(retry.deduplicated).toBe(true);
      expect(retry.entries).toEqual(first.entries);
      expect((await session.meta()).leafId).toBe("x");
    });

    it("de-duplicates a retried rewind even after a compaction moved the floor past its target", async () => {
      const first = await session.rewind("u1", { entryId: "move-1" });
      await session.append([user("x1", "x"), user("x2", "y"), compaction("cx", "s", ["x1"])]);
      const before = await snapshot();
      const retry = await session.rewind("u1", { entryId: "move-1" });
      expect(retry.deduplicated).toBe(true);
      expect(retry.entries).toEqual(first.entries);
      expect(await snapshot()).toEqual(before);
    });

    describe("compaction floor", () => {
      //   root ─ u1 ─ a1 ─ u2 ─ a2 ─ c1 ─ u3      c1 compacts u1, a1; the floor is a2
      beforeEach(async () => {
        await session.append([
          assistant("a2", "a2"),
          compaction("c1", "summary one", ["u1", "a1"]),
          user("u3", "q3"),
        ]);
      });

      it("is reported by GetState", async () => {
        expect((await session.state()).compactionFloorId).toBe("a2");
      });

      it("refuses a rewind before the floor with FAILED_PRECONDITION and writes nothing", async () => {
        const before = await snapshot();
        await expectCode(() => session.rewind("u2"), "FAILED_PRECONDITION", '"u2"', '"a2"');
        await expectCode(() => session.rewind(rootId), "FAILED_PRECONDITION");
        expect(await snapshot()).toEqual(before);
      });

      it("allows a rewind to the floor or below it", async () => {
        expect((await session.rewind("c1")).leafId).toBe("c1");
        expect((await session.rewind("u3")).leafId).toBe("u3");
        expect((await session.rewind("a2")).leafId).toBe("a2");
      });

      it("allows a rewind before the floor with allowBeforeCompaction", async () => {
        const r = await session.rewind("u2", { allowBeforeCompaction: true });
        expect(r.leafId).toBe("u2");
        expect(messagesOf(await session.state())).toEqual([
          ["u1", "q1"],
          ["a1", "a1"],
          ["u2", "q2"],
        ]);
      });
    });

    it("reset empties the context but keeps the history", async () => {
      const before = await entries();
      const r = await session.reset();
      expect(r.leafId).toBe(rootId);
      const state = await session.state();
      expect(state.messages).toEqual([]);
      expect(state.leafId).toBe(rootId);
      expect(state.title).toBe("Title");
      const after = await entries();
      expect(after.slice(0, before.length)).toEqual(before);
      expect(after).toHaveLength(before.length + 1);
      expect(after.at(-1)?.kind).toMatchObject({ case: "leaf", value: { leafId: rootId } });
      await session.append(user("fresh", "start over"));
      expect(await parentsOf("fresh")).toEqual([rootId]);
      expect((await session.meta()).messageCount).toBe(4n);
    });
  });

  describe("state", () => {
    //   root ─ m ─ t ─ u1 ─ a1 ─ u2 ─ a2 ─ c1 ─ lbl ─ x ─ bs ─ u3
    //   c1 compacts u1, a1; bs summarises the abandoned branch u1 ─ dead
    beforeEach(async () => {
      await session.append([
        modelChange("m", "gpt-x", "acme"),
        thinkingLevel("t", "high"),
        user("u1", "q1"),
        assistant("a1", "a1"),
        user("dead", "abandoned", "u1"),
        user("u2", "q2", "a1"),
        assistant("a2", "a2"),
        compaction("c1", "first exchange", ["u1", "a1"]),
        label("lbl", "after-compaction"),
        custom("x", "app", { step: 3 }),
        branchSummary("bs", "went nowhere", "dead"),
        user("u3", "q3"),
      ]);
    });

    it("CONTEXT folds compactions and renders branch summaries", async () => {
      const state = await session.state();
      expect(state.view).toBe(View.CONTEXT);
      expect(messagesOf(state)).toEqual([
        ["c1", "Previous conversation summary:\nfirst exchange"],
        ["u2", "q2"],
        ["a2", "a2"],
        ["bs", "Summary of an abandoned branch:\nwent nowhere"],
        ["u3", "q3"],
      ]);
      expect(state.model).toBe("gpt-x");
      expect(state.provider).toBe("acme");
      expect(state.thinkingLevel).toBe("high");
      expect(state.label).toBe("after-compaction");
      expect(state.title).toBe("Title");
      expect(state.custom.app).toEqual({ step: 3 });
      expect(state.leafId).toBe("u3");
      expect(state.currentLeafId).toBe("u3");
      expect(state.headSeq).toBe(13n);
    });

    it("HISTORY lists every message on the path, compactions and summaries skipped", async () => {
      const state = await session.state({ view: View.HISTORY });
      expect(state.view).toBe(View.HISTORY);
      expect(messagesOf(state).map(([id]) => id)).toEqual(["u1", "a1", "u2", "a2", "u3"]);
    });

    it("folds at an earlier entry without moving the leaf (time travel)", async () => {
      const state = await session.state({ atEntryId: "a2" });
      expect(messagesOf(state)).toEqual([
        ["u1", "q1"],
        ["a1", "a1"],
        ["u2", "q2"],
        ["a2", "a2"],
      ]);
      expect(state.leafId).toBe("a2");
      expect(state.currentLeafId).toBe("u3");
      expect(state.label).toBeUndefined();
      expect(state.compactionFloorId).toBeUndefined();
      const branch = await session.state({ atEntryId: "dead" });
      expect(branch.messages.map((m) => m.entryId)).toEqual(["u1", "dead"]);
      expect((await session.meta()).leafId).toBe("u3");
    });

    it("answers NOT_FOUND for an unknown entry and INVALID_ARGUMENT for a Leaf entry", async () => {
      await expectCode(() => session.state({ atEntryId: "ghost" }), "NOT_FOUND", '"ghost"');
      const moved = await session.rewind("u3");
      const leafEntry = moved.entries[0]?.id as string;
      await expectCode(
        () => session.state({ atEntryId: leafEntry }),
        "INVALID_ARGUMENT",
        leafEntry,
      );
    });
  });

  describe("entries", () => {
    beforeEach(async () => {
      await session.append(Array.from({ length: 24 }, (_, i) => user(`e${i + 2}`, `m${i}`)));
    });

    it("pages through the whole log in seq order", async () => {
      const seen: bigint[] = [];
      let after = 0;
      for (;;) {
        const page = await session.entries(after, 10);
        expect(page.headSeq).toBe(25);
        if (page.entries.length === 0) break;
        seen.push(...page.entries.map((e) => e.seq));
        after = Number(page.entries.at(-1)?.seq);
      }
      expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i + 1)));
    });

    it("uses the default page size for limit 0 and returns nothing past the head", async () => {
      expect((await session.entries(0, 0)).entries).toHaveLength(25);
      expect((await session.entries(25, 10)).entries).toEqual([]);
      expect((await session.entries(99, 10)).entries).toEqual([]);
    });

    it("rejects a negative after_seq, a negative limit or a limit over the maximum page size", async () => {
      await expectCode(() => session.entries(-1, 10), "INVALID_ARGUMENT");
      await expectCode(() => session.entries(0, -5), "INVALID_ARGUMENT");
      await expectCode(() => session.entries(0, store.limits.maxPageSize + 1), "INVALID_ARGUMENT");
    });
  });

  describe("tree", () => {
    //   root ─ u1 ─ a1 ─ lbl ─ u2            (abandoned)
    //           └─ x1 ─ x2                   (current path, after a rewind to u1)
    it("lists every entry in seq order and marks exactly the current path", async () => {
      await session.append([
        user("u1", "q"),
        assistant("a1", "a"),
        label("lbl", "v1"),
        user("u2", "q"),
      ]);
      const moved = await session.rewind("u1");
      await session.append([assistant("x1", "other"), user("x2", "more")]);
      const tree = await session.tree();
      const leafEntry = moved.entries[0]?.id as string;
      expect(tree.nodes.map((n) => n.id)).toEqual([
        rootId,
        "u1",
        "a1",
        "lbl",
        "u2",
        leafEntry,
        "x1",
        "x2",
      ]);
      expect(tree.nodes.map((n) => n.seq)).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n]);
      expect(tree.nodes.filter((n) => n.onCurrentPath).map((n) => n.id)).toEqual([
        rootId,
        "u1",
        "x1",
        "x2",
      ]);
      expect(tree.leafId).toBe("x2");
      expect(tree.headSeq).toBe(8);
      const byId = new Map(tree.nodes.map((n) => [n.id, n]));
      expect(byId.get("lbl")).toMatchObject({ kind: EntryKind.LABEL, label: "v1", parentId: "a1" });
      expect(byId.get(leafEntry)).toMatchObject({
        kind: EntryKind.LEAF,
        leafId: "u1",
        parentId: "u2",
      });
      expect(byId.get(rootId)?.kind).toBe(EntryKind.SESSION_INFO);
      expect(byId.get("x1")?.preview).toBe("other");
    });
  });
});
