/**
 * Storage conformance, closing: `close` lets the writes already queued
 * finish, and a reopened engine reads them all.
 */
import { describe, expect, it } from "vitest";
import { appendOf, seqs, user } from "../../support/fixtures.js";
import { type ConformanceSuite, key } from "./harness.js";

/** The "close" tests. */
export function describeClose(suite: ConformanceSuite): void {
  describe("close", () => {
    it("finishes queued writes before closing", async () => {
      const k = key("closing");
      await suite.createSession(k.sessionId);
      const pending = Array.from({ length: 20 }, (_, i) =>
        suite.engine.append(k, appendOf([user(`c${i}`)])),
      );
      const settled = Promise.allSettled(pending);
      if (suite.harness.reopen !== undefined) {
        suite.engine = await suite.harness.reopen();
      } else {
        await suite.engine.close();
      }
      const results = await settled;
      expect(results.map((r) => r.status)).toEqual(Array(20).fill("fulfilled"));
      if (suite.harness.reopen !== undefined) {
        expect(seqs(await suite.readAll(suite.engine, k))).toEqual(
          Array.from({ length: 21 }, (_, i) => i + 1),
        );
      }
    });
  });
}
