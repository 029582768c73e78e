/**
 * Storage conformance, unknown sessions: load, read and append (Reset
 * included) of a session that does not exist are NOT_FOUND naming it, in a
 * known or an unknown workspace; deleting it reports false.
 */
import { describe, expect, it } from "vitest";
import { appendOf, expectCode, resetOf, user } from "../../support/fixtures.js";
import { type ConformanceSuite, key, WS } from "./harness.js";

/** The "unknown sessions" tests. */
export function describeUnknownSessions(suite: ConformanceSuite): void {
  describe("unknown sessions", () => {
    it("reports NOT_FOUND for load, read and append, naming the session", async () => {
      await suite.createSession("exists");
      for (const k of [key("ghost-session"), key("ghost-session", "ghost-ws")]) {
        const errs = [
          await expectCode(suite.engine.load(k), "NOT_FOUND"),
          await expectCode(suite.engine.read(k, 0, 10), "NOT_FOUND"),
          await expectCode(suite.engine.append(k, appendOf([user("u1")])), "NOT_FOUND"),
          await expectCode(suite.engine.append(k, resetOf()), "NOT_FOUND"),
        ];
        for (const err of errs) expect(err.message).toContain("ghost-session");
        expect(await suite.engine.delete(k)).toBe(false);
      }
      expect(await suite.engine.listIds(WS)).toEqual(["exists"]);
      expect(await suite.engine.workspaces()).toEqual([WS]);
    });
  });
}
