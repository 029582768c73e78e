/**
 * Storage conformance, planner errors: a planner that throws (a
 * SessiondError or a bug) fails only its own append, with that error; the
 * appends queued around it still succeed and the session stays writable.
 */
import { describe, expect, it } from "vitest";
import { failedPrecondition, isSessiondError } from "../../../src/core/errors.js";
import type { Planner } from "../../../src/storage/engine.js";
import { appendOf, seqs, user } from "../../support/fixtures.js";
import { type ConformanceSuite, key, sorted } from "./harness.js";

/** The "planner errors" tests. */
export function describePlannerErrors(suite: ConformanceSuite): void {
  describe("planner errors", () => {
    it("rejects with the planner's SessiondError; appends queued with it still succeed", async () => {
      const k = key("planner-error");
      await suite.createSession(k.sessionId);
      const refusal = failedPrecondition(`session "${k.sessionId}": refused by planner`);
      const planners: Planner[] = Array.from({ length: 5 }, (_, i) =>
        i === 2
          ? () => {
              throw refusal;
            }
          : appendOf([user(`q${i}`)]),
      );
      const results = await Promise.allSettled(planners.map((p) => suite.engine.append(k, p)));
      const rejected = results[2] as PromiseSettledResult<unknown>;
      expect(rejected.status).toBe("rejected");
      const reason = (rejected as PromiseRejectedResult).reason;
      expect(isSessiondError(reason, "FAILED_PRECONDITION")).toBe(true);
      expect((reason as Error).message).toBe(refusal.message);
      const ok = results.filter((r) => r.status === "fulfilled");
      expect(ok).toHaveLength(4);
      await suite.persisted(async (e) => {
        const all = await suite.readAll(e, k);
        expect(seqs(all)).toEqual([1, 2, 3, 4, 5]);
        expect(sorted(all.slice(1).map((x) => x.id))).toEqual(["q0", "q1", "q3", "q4"]);
      });
    });

    it("survives a planner that throws a non-SessiondError", async () => {
      const k = key("planner-bug");
      await suite.createSession(k.sessionId);
      const results = await Promise.allSettled([
        suite.engine.append(k, appendOf([user("before")])),
        suite.engine.append(k, () => {
          throw new TypeError("planner bug");
        }),
        suite.engine.append(k, appendOf([user("after")])),
      ]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      const next = await suite.engine.append(k, appendOf([user("later")]));
      expect(next.headSeq).toBe(4);
      expect(seqs(await suite.readAll(suite.engine, k))).toEqual([1, 2, 3, 4]);
    });
  });
}
