/**
 * Storage conformance, appending: `append` runs the planner on the current
 * log and stores its plan with dense seqs; `read` pages by afterSeq and
 * limit; a batch or a plan that breaks the log invariants is written all or
 * nothing; concurrent appends to one session are serialised (each planner
 * sees the log the previous append left), those to different sessions kept
 * apart.
 */
import { describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { AppendPlan } from "../../../src/core/append-plan.js";
import type { Planner } from "../../../src/storage/engine.js";
import {
  appendOf,
  assistant,
  expectCode,
  expectSameEntries,
  kindless,
  label,
  seqs,
  ts,
  user,
} from "../../support/fixtures.js";
import { type ConformanceSuite, key, sorted, WS } from "./harness.js";

/** The "append" tests. */
export function describeAppend(suite: ConformanceSuite): void {
  describe("append", () => {
    it("assigns dense seqs; read and load return exactly what was stored", async () => {
      const k = key("appender");
      const root = await suite.createSession(k.sessionId);
      const r1 = await suite.engine.append(k, appendOf([user("u1")]));
      expect(r1.deduplicated).toBe(false);
      expect(seqs(r1.entries)).toEqual([2]);
      expect(r1.headSeq).toBe(2);
      expect(r1.leafId).toBe("u1");
      expect(r1.entries[0]?.parentId).toBe(root.id);
      const r2 = await suite.engine.append(
        k,
        appendOf([assistant("a1", "sure", ["call-7"]), user("u2")]),
      );
      expect(seqs(r2.entries)).toEqual([3, 4]);
      expect(r2.entries.map((x) => x.parentId)).toEqual(["u1", "a1"]);
      expect(r2.headSeq).toBe(4);
      expect(r2.leafId).toBe("u2");
      const stored = [root, ...r1.entries, ...r2.entries];
      await suite.persisted(async (e) => {
        expectSameEntries(await suite.readAll(e, k), stored);
        const log = await e.load(k);
        expect(log.headSeq).toBe(4);
        expect(log.leafId).toBe("u2");
        expectSameEntries(log.entries(), stored);
      });
    });

    it("pages read by afterSeq and limit", async () => {
      const k = key("pager");
      await suite.createSession(k.sessionId);
      await suite.engine.append(
        k,
        appendOf(Array.from({ length: 9 }, (_, i) => user(`p${i + 2}`))),
      );
      await suite.persisted(async (e) => {
        const cases: Array<[number, number, number[]]> = [
          [0, 1, [1]],
          [0, 100, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
          [3, 4, [4, 5, 6, 7]],
          [8, 100, [9, 10]],
          [9, 1, [10]],
          [10, 5, []],
          [12, 5, []],
        ];
        for (const [after, limit, want] of cases) {
          const page = await e.read(k, after, limit);
          expect(seqs(page.entries), `read(${after}, ${limit})`).toEqual(want);
          expect(page.headSeq).toBe(10);
        }
        expect((await e.read(k, 4, 1)).entries[0]?.id).toBe("p5");
      });
    });

    it("writes nothing of a batch of 5 whose 3rd entry is invalid", async () => {
      const k = key("atomic-batch");
      const root = await suite.createSession(k.sessionId);
      const first = await suite.engine.append(k, appendOf([user("u1")]));
      const invalidThirds: Entry[] = [
        user("b3", "orphan", { parentId: "ghost" }),
        kindless("b3"),
        label("b3", ""),
      ];
      for (const third of invalidThirds) {
        const batch = [user("b1"), assistant("b2"), third, user("b4"), assistant("b5")];
        await expectCode(suite.engine.append(k, appendOf(batch)), "INVALID_ARGUMENT");
      }
      await suite.persisted(async (e) => {
        const page = await e.read(k, 1, 100);
        expect(page.headSeq).toBe(2);
        expectSameEntries(page.entries, first.entries);
        const log = await e.load(k);
        expect(log.headSeq).toBe(2);
        expect(log.leafId).toBe("u1");
        for (const id of ["b1", "b2", "b3", "b4", "b5"]) expect(log.has(id)).toBe(false);
        const [rec] = await e.list(WS, [k.sessionId]);
        expect(rec?.headSeq).toBe(2);
        expect(rec?.messageCount).toBe(1);
      });
      const ok = await suite.engine.append(
        k,
        appendOf([user("b1"), assistant("b2"), user("b3"), user("b4"), user("b5")]),
      );
      expect(seqs(ok.entries)).toEqual([3, 4, 5, 6, 7]);
      expect(seqs(await suite.readAll(suite.engine, k))).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect((await suite.engine.load(k)).root.id).toBe(root.id);
    });

    it("writes nothing of a plan whose 3rd entry breaks the log invariants", async () => {
      // A planner bug must not reach storage: the engine applies a batch all or nothing.
      const k = key("atomic-plan");
      await suite.createSession(k.sessionId);
      await suite.engine.append(k, appendOf([user("u1")]));
      const variants: Array<(head: number, leaf: string) => Entry> = [
        (h) => user("x3", "orphan", { seq: h + 3, parentId: "ghost", timestamp: ts(2e9) }),
        (h) => user("x3", "gap", { seq: h + 4, parentId: "x2", timestamp: ts(2e9) }),
        (h) => user("x1", "duplicate id", { seq: h + 3, parentId: "x2", timestamp: ts(2e9) }),
      ];
      for (const third of variants) {
        const planner: Planner = (log): AppendPlan => {
          const h = log.headSeq;
          const batch = [
            user("x1", "one", { seq: h + 1, parentId: log.leafId, timestamp: ts(2e9) }),
            user("x2", "two", { seq: h + 2, parentId: "x1", timestamp: ts(2e9) }),
            third(h, log.leafId),
            user("x4", "four", { seq: h + 4, parentId: "x2", timestamp: ts(2e9) }),
            user("x5", "five", { seq: h + 5, parentId: "x4", timestamp: ts(2e9) }),
          ];
          return { write: batch, entries: batch, deduplicated: false };
        };
        await expect(suite.engine.append(k, planner)).rejects.toThrow();
      }
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(2);
        expect(log.leafId).toBe("u1");
        for (const id of ["x1", "x2", "x3", "x4", "x5"]) expect(log.has(id)).toBe(false);
        expect((await e.read(k, 2, 100)).entries).toEqual([]);
      });
      const ok = await suite.engine.append(k, appendOf([user("x1")]));
      expect(seqs(ok.entries)).toEqual([3]);
      expect(ok.entries[0]?.parentId).toBe("u1");
    });

    it("serialises 100 concurrent appends to one session: seqs 1..101, each entry once", async () => {
      const k = key("hundred");
      const root = await suite.createSession(k.sessionId);
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          suite.engine.append(k, appendOf([user(`m${i}`, `message ${i}`)])),
        ),
      );
      const resultSeqs = results.flatMap((r) => seqs(r.entries)).sort((a, b) => a - b);
      expect(resultSeqs).toEqual(Array.from({ length: 100 }, (_, i) => i + 2));
      for (const r of results) {
        expect(r.headSeq).toBeGreaterThanOrEqual(Number(r.entries[0]?.seq));
      }
      await suite.persisted(async (e) => {
        const all = await suite.readAll(e, k);
        expect(seqs(all)).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
        const ids = all.map((x) => x.id);
        expect(new Set(ids).size).toBe(101);
        expect(sorted(ids)).toEqual(
          sorted([root.id, ...Array.from({ length: 100 }, (_, i) => `m${i}`)]),
        );
        // Each planner saw the log as left by the previous append: one linear chain.
        all.slice(1).forEach((x, i) => {
          expect(x.parentId).toBe(all[i]?.id);
        });
        const byId = new Map(results.map((r) => [r.entries[0]?.id, r.entries[0]]));
        for (const x of all.slice(1)) expectSameEntries([x], [byId.get(x.id) as Entry]);
        const log = await e.load(k);
        expect(log.headSeq).toBe(101);
        expect(log.leafId).toBe(all[100]?.id);
      });
    });

    it("keeps concurrent appends to different sessions apart", async () => {
      const names = ["multi-a", "multi-b", "multi-c", "multi-d"];
      for (const n of names) await suite.createSession(n);
      await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          names.map((n) => suite.engine.append(key(n), appendOf([user(`${n}-${i}`)]))),
        ).flat(),
      );
      await suite.persisted(async (e) => {
        for (const n of names) {
          const all = await suite.readAll(e, key(n));
          expect(seqs(all)).toEqual(Array.from({ length: 26 }, (_, i) => i + 1));
          for (const x of all.slice(1)) expect(x.id.startsWith(`${n}-`)).toBe(true);
        }
      });
    });
  });
}
