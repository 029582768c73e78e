/**
 * Storage conformance, creating and loading a session: `create` stores the
 * given entries as they are (a root alone, a subagent, a fork-like log of
 * every kind), `load` and `read` give them back identically, also after a
 * reopen; an existing id is ALREADY_EXISTS, exactly one of several racing
 * creates of one id wins, and a create that breaks the log invariants
 * writes nothing.
 */

import { timestampMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { isSessiondError } from "../../../src/core/errors.js";
import {
  appendOf,
  assistant,
  countMessages,
  expectCode,
  expectSameEntries,
  forkLikeEntries,
  rootEntry,
  seqs,
  ts,
  user,
} from "../../support/fixtures.js";
import { type ConformanceSuite, key, sorted, WS } from "./harness.js";

/** The "create and load" tests. */
export function describeCreate(suite: ConformanceSuite): void {
  describe("create and load", () => {
    it("round-trips the root SessionInfo: headSeq 1, leaf = root", async () => {
      const k = key("20260101-120000-0a1b2c3d");
      const root = rootEntry(k.sessionId, {
        title: "first session",
        metadata: { user: "ada", n: 2, deep: { list: [true, null, "x"] } },
      });
      await suite.engine.create(k, [root]);
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.sessionId).toBe(k.sessionId);
        expect(log.headSeq).toBe(1);
        expect(log.leafId).toBe(root.id);
        expectSameEntries(log.entries(), [root]);
        expect(log.info.title).toBe("first session");
        const page = await e.read(k, 0, 100);
        expect(page.headSeq).toBe(1);
        expectSameEntries(page.entries, [root]);
      });
    });

    it("refuses an existing id with ALREADY_EXISTS and leaves the original untouched", async () => {
      const k = key("dup-session");
      const original = rootEntry(k.sessionId, { title: "original" });
      await suite.engine.create(k, [original]);
      const r = await suite.engine.append(k, appendOf([user("u1")]));
      const err = await expectCode(
        suite.engine.create(k, [rootEntry(k.sessionId, { id: "other-root", title: "impostor" })]),
        "ALREADY_EXISTS",
      );
      expect(err.message).toContain(k.sessionId);
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(2);
        expectSameEntries(log.entries(), [original, ...r.entries]);
        expect(log.title).toBe("original");
        expect(await e.listIds(WS)).toEqual([k.sessionId]);
      });
    });

    it("lets exactly one of several concurrent creates of one id win", async () => {
      const k = key("raced-create");
      const roots = Array.from({ length: 8 }, (_, i) =>
        rootEntry(k.sessionId, { id: `root-${i}`, title: `racer ${i}` }),
      );
      const results = await Promise.allSettled(roots.map((r) => suite.engine.create(k, [r])));
      const winners = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const r of results) {
        if (r.status === "rejected") expect(isSessiondError(r.reason, "ALREADY_EXISTS")).toBe(true);
      }
      const winner = roots[winners[0] as number] as Entry;
      await suite.persisted(async (e) => {
        expectSameEntries((await e.load(k)).entries(), [winner]);
        expect(await e.listIds(WS)).toEqual([k.sessionId]);
      });
    });

    it("writes nothing for a create whose entries break the log invariants", async () => {
      const k = key("bad-create");
      const root = rootEntry(k.sessionId);
      const bad = [
        root,
        user("m1", "a", { seq: 2, parentId: root.id, timestamp: ts(1_767_225_601) }),
        user("m2", "b", { seq: 3, parentId: "ghost", timestamp: ts(1_767_225_602) }),
      ];
      await expect(suite.engine.create(k, bad)).rejects.toThrow();
      await suite.persisted(async (e) => {
        await expectCode(e.load(k), "NOT_FOUND");
        expect(await e.listIds(WS)).toEqual([]);
      });
      await suite.engine.create(k, [root]);
      expect((await suite.engine.load(k)).headSeq).toBe(1);
    });

    it("creates subagent sessions that show in listIds and list", async () => {
      const parent = key("parent-session");
      const child = key("parent-session-sub1");
      await suite.createSession(parent.sessionId);
      const childRoot = rootEntry(child.sessionId, {
        title: "explorer",
        parentSessionId: parent.sessionId,
        agentType: "explorer",
        spawnDepth: 1,
      });
      await suite.engine.create(child, [childRoot]);
      const r = await suite.engine.append(child, appendOf([user("s1"), assistant("s2")]));
      await suite.persisted(async (e) => {
        expect(sorted(await e.listIds(WS))).toEqual([parent.sessionId, child.sessionId]);
        const records = await e.list(WS);
        expect(records.map((rec) => rec.sessionId).sort()).toEqual(
          [parent.sessionId, child.sessionId].sort(),
        );
        const rec = records.find((x) => x.sessionId === child.sessionId);
        expect(rec?.root?.kind.case).toBe("sessionInfo");
        expect(rec?.root?.kind.value).toMatchObject({
          parentSessionId: parent.sessionId,
          agentType: "explorer",
          spawnDepth: 1,
        });
        expect(rec?.headSeq).toBe(3);
        const log = await e.load(child);
        expectSameEntries(log.entries(), [childRoot, ...r.entries]);
        // Subagent entries never enter the parent's log.
        expect((await e.load(parent)).headSeq).toBe(1);
      });
      const more = await suite.engine.append(child, appendOf([user("s3")]));
      expect(seqs(more.entries)).toEqual([4]);
    });

    it("loads a fork-like create of 21 entries (Label, Compaction, ...) identically", async () => {
      const k = key("fork-like");
      const entries = forkLikeEntries(k.sessionId);
      expect(seqs(entries)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
      await suite.engine.create(k, entries);
      const last = entries[20] as Entry;
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(21);
        expect(log.leafId).toBe(last.id);
        expectSameEntries(log.entries(), entries);
        expect(log.labelTarget("before-refactor")).toBe("c08");
        expect(log.title).toBe("renamed fork");
        expect(log.messageCount).toBe(countMessages(entries));
        const pages: Entry[] = [];
        for (let after = 0; after < 21; after += 7) {
          const page = await e.read(k, after, 7);
          expect(page.headSeq).toBe(21);
          pages.push(...page.entries);
        }
        expectSameEntries(pages, entries);
        const [rec] = await e.list(WS, [k.sessionId]);
        expect(rec).toMatchObject({
          workspace: WS,
          sessionId: k.sessionId,
          headSeq: 21,
          leafId: last.id,
          messageCount: countMessages(entries),
          title: "renamed fork",
          health: "ok",
        });
        expect(rec?.updatedAtMs).toBe(timestampMs(last.timestamp ?? ts(0)));
        expectSameEntries(rec?.root ? [rec.root] : [], [entries[0] as Entry]);
      });
      const r = await suite.engine.append(k, appendOf([user("after-fork")]));
      expect(seqs(r.entries)).toEqual([22]);
      expect(r.entries[0]?.parentId).toBe(last.id);
    });
  });
}
