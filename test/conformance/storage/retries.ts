/**
 * Storage conformance, idempotent retries: a retried batch is deduplicated
 * (the stored entries and seqs come back, nothing is written), also after
 * the head moved; the same id with other content, or a partial retry, is
 * ALREADY_EXISTS and writes nothing.
 */
import { describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  appendOf,
  assistant,
  expectCode,
  expectSameEntries,
  seqs,
  user,
} from "../../support/fixtures.js";
import { type ConformanceSuite, key } from "./harness.js";

/** The "idempotent retries" tests. */
export function describeRetries(suite: ConformanceSuite): void {
  describe("idempotent retries", () => {
    it("deduplicates a retried batch: same seqs, nothing written, also after the head moved", async () => {
      const k = key("retry");
      await suite.createSession(k.sessionId);
      const batch = [user("u1"), assistant("a1", "ok", ["c1"])];
      const first = await suite.engine.append(k, appendOf(batch));
      const again = await suite.engine.append(k, appendOf(batch));
      expect(again.deduplicated).toBe(true);
      expect(again.write).toEqual([]);
      expect(seqs(again.entries)).toEqual([2, 3]);
      expectSameEntries(again.entries, first.entries);
      expect(again.headSeq).toBe(3);
      expect(again.leafId).toBe("a1");
      await suite.engine.append(k, appendOf([user("u2")]));
      await suite.persisted(async (e) => {
        const retried = await e.append(k, appendOf(batch));
        expect(retried.deduplicated).toBe(true);
        expectSameEntries(retried.entries, first.entries);
        expect(retried.headSeq).toBe(4);
        expect(seqs(await suite.readAll(e, k))).toEqual([1, 2, 3, 4]);
      });
    });

    it("refuses the same id with other content with ALREADY_EXISTS and writes nothing", async () => {
      const k = key("retry-conflict");
      await suite.createSession(k.sessionId);
      const first = await suite.engine.append(k, appendOf([user("u1", "hello")]));
      const err = await expectCode(
        suite.engine.append(k, appendOf([user("u1", "something else")])),
        "ALREADY_EXISTS",
      );
      expect(err.message).toContain("u1");
      // A partial retry (a stored entry plus a new one) is not a retry either.
      await expectCode(
        suite.engine.append(k, appendOf([user("u1", "hello"), user("n1")])),
        "ALREADY_EXISTS",
      );
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(2);
        expect(log.has("n1")).toBe(false);
        expectSameEntries([log.get("u1") as Entry], first.entries);
      });
    });
  });
}
