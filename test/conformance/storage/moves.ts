/**
 * Storage conformance, moving the leaf: a Rewind (to an entry or a label)
 * and a Reset append a Leaf entry, move the leaf, and the leaf after a
 * reopen is the target of the last Leaf entry; a retried move is
 * deduplicated.
 */
import { describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  appendOf,
  assistant,
  expectSameEntries,
  label,
  resetOf,
  rewindOf,
  user,
} from "../../support/fixtures.js";
import { type ConformanceSuite, key, WS } from "./harness.js";

/** The "rewind and reset" tests. */
export function describeMoves(suite: ConformanceSuite): void {
  describe("rewind and reset", () => {
    it("rewind appends a Leaf entry, moves the leaf and persists", async () => {
      const k = key("rewinder");
      const root = await suite.createSession(k.sessionId);
      await suite.engine.append(
        k,
        appendOf([user("u1"), assistant("a1"), user("u2"), assistant("a2")]),
      );
      const r = await suite.engine.append(k, rewindOf("a1"));
      expect(r.headSeq).toBe(6);
      expect(r.leafId).toBe("a1");
      expect(r.entries).toHaveLength(1);
      const leafEntry = r.entries[0] as Entry;
      expect(leafEntry.kind.case).toBe("leaf");
      expect(leafEntry.kind.value).toMatchObject({ leafId: "a1" });
      expect(leafEntry.parentId).toBe("a2");
      const branch = await suite.engine.append(k, appendOf([user("u3")]));
      expect(branch.entries[0]?.parentId).toBe("a1");
      expect(branch.headSeq).toBe(7);
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(7);
        expect(log.leafId).toBe("u3");
        expect(log.path().map((x) => x.id)).toEqual([root.id, "u1", "a1", "u3"]);
        const last = await e.read(k, 5, 1);
        expectSameEntries(last.entries, [leafEntry]);
      });
      // The leaf after a restart is the target of the last Leaf entry.
      const back = await suite.engine.append(k, rewindOf("u2"));
      expect(back.headSeq).toBe(8);
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.leafId).toBe("u2");
        expect(log.headSeq).toBe(8);
        const [rec] = await e.list(WS, [k.sessionId]);
        expect(rec?.leafId).toBe("u2");
      });
    });

    it("rewinds to a label and deduplicates a retried rewind", async () => {
      const k = key("rewind-label");
      await suite.createSession(k.sessionId);
      await suite.engine.append(k, appendOf([user("u1"), label("l1", "checkpoint"), user("u2")]));
      const r = await suite.engine.append(k, rewindOf("checkpoint", "move-1"));
      expect(r.leafId).toBe("l1");
      expect(r.headSeq).toBe(5);
      const retry = await suite.engine.append(k, rewindOf("checkpoint", "move-1"));
      expect(retry.deduplicated).toBe(true);
      expect(retry.headSeq).toBe(5);
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.leafId).toBe("l1");
        expect(log.headSeq).toBe(5);
      });
    });

    it("reset moves the leaf to the root and persists", async () => {
      const k = key("resetter");
      const root = await suite.createSession(k.sessionId);
      await suite.engine.append(k, appendOf([user("u1"), assistant("a1")]));
      const r = await suite.engine.append(k, resetOf());
      expect(r.leafId).toBe(root.id);
      expect(r.headSeq).toBe(4);
      expect(r.entries[0]?.kind).toMatchObject({ case: "leaf", value: { leafId: root.id } });
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.leafId).toBe(root.id);
        expect(log.headSeq).toBe(4);
        expect(log.path().map((x) => x.id)).toEqual([root.id]);
      });
      const next = await suite.engine.append(k, appendOf([user("fresh")]));
      expect(next.entries[0]?.parentId).toBe(root.id);
      expect(next.headSeq).toBe(5);
    });
  });
}
