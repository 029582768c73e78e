/**
 * Storage conformance, optimistic concurrency: a stale expectedSeq or
 * expectedLeafId is ABORTED and writes nothing, and of several racing
 * appends with the same expectation exactly one wins, so the log never
 * forks.
 */
import { describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { isSessiondError } from "../../../src/core/errors.js";
import { appendOf, assistant, expectCode, seqs, user } from "../../support/fixtures.js";
import { type ConformanceSuite, key } from "./harness.js";

/** Asserts that no entry (Leaf entries aside, which only record the old leaf) has two children. */
function expectNoFork(entries: readonly Entry[]): void {
  const children = new Map<string, string[]>();
  for (const e of entries) {
    if (e.kind.case === "leaf" || e.parentId === undefined) continue;
    children.set(e.parentId, [...(children.get(e.parentId) ?? []), e.id]);
  }
  const forks = [...children].filter(([, c]) => c.length > 1);
  expect(forks, "entries with more than one child").toEqual([]);
}

/** The "optimistic concurrency" tests. */
export function describeOptimisticConcurrency(suite: ConformanceSuite): void {
  describe("optimistic concurrency", () => {
    it("fails a stale expectedSeq with ABORTED and writes nothing", async () => {
      const k = key("cas-seq");
      await suite.createSession(k.sessionId);
      await suite.engine.append(k, appendOf([user("u1")]));
      for (const stale of [0, 1, 3]) {
        await expectCode(
          suite.engine.append(k, appendOf([user("x")], { expectedSeq: stale })),
          "ABORTED",
        );
      }
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(2);
        expect(log.has("x")).toBe(false);
      });
      const ok = await suite.engine.append(k, appendOf([user("x")], { expectedSeq: 2 }));
      expect(ok.headSeq).toBe(3);
    });

    it("fails a stale expectedLeafId with ABORTED and writes nothing", async () => {
      const k = key("cas-leaf");
      await suite.createSession(k.sessionId);
      await suite.engine.append(k, appendOf([user("u1"), assistant("a1")]));
      await expectCode(
        suite.engine.append(k, appendOf([user("x")], { expectedLeafId: "u1" })),
        "ABORTED",
      );
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(3);
        expect(log.leafId).toBe("a1");
        expect(log.has("x")).toBe(false);
      });
      const ok = await suite.engine.append(k, appendOf([user("x")], { expectedLeafId: "a1" }));
      expect(ok.entries[0]?.parentId).toBe("a1");
    });

    it("lets one of two racing appends with the same expectedLeafId win; no fork", async () => {
      const k = key("cas-race");
      await suite.createSession(k.sessionId);
      await suite.engine.append(k, appendOf([user("u1")]));
      const results = await Promise.allSettled(
        ["left", "right"].map((id) =>
          suite.engine.append(k, appendOf([assistant(id)], { expectedLeafId: "u1" })),
        ),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const losers = results.filter((r) => r.status === "rejected");
      expect(losers).toHaveLength(1);
      expect(isSessiondError((losers[0] as PromiseRejectedResult).reason, "ABORTED")).toBe(true);
      await suite.persisted(async (e) => {
        const all = await suite.readAll(e, k);
        expect(all).toHaveLength(3);
        expectNoFork(all);
        expect(["left", "right"]).toContain(all[2]?.id);
      });
    });

    it("lets one of ten racing appends with the same expectedSeq win; no fork", async () => {
      const k = key("cas-race-seq");
      await suite.createSession(k.sessionId);
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          suite.engine.append(
            k,
            appendOf([user(`r${i}`), assistant(`ra${i}`)], { expectedSeq: 1 }),
          ),
        ),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results) {
        if (r.status === "rejected") expect(isSessiondError(r.reason, "ABORTED")).toBe(true);
      }
      await suite.persisted(async (e) => {
        const all = await suite.readAll(e, k);
        expect(seqs(all)).toEqual([1, 2, 3]);
        expectNoFork(all);
      });
    });
  });
}
