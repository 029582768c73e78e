/**
 * Storage conformance, deleting sessions: `delete` removes one session and
 * nothing else (not even an id sharing its prefix), a deleted id is
 * NOT_FOUND and can be created again from scratch; the optional
 * `deleteMany` removes several at once, returns those that existed in the
 * order given and announces each.
 */
import { describe, expect, it } from "vitest";
import type { StorageEngine, StorageEvent } from "../../../src/storage/engine.js";
import {
  appendOf,
  expectCode,
  expectSameEntries,
  rootEntry,
  seqs,
  user,
} from "../../support/fixtures.js";
import { type ConformanceSuite, key, sorted, WS } from "./harness.js";

/** The "delete" tests. */
export function describeDelete(suite: ConformanceSuite): void {
  describe("delete", () => {
    it("deletes one session; others (even with a prefix-sharing id) stay intact", async () => {
      for (const id of ["abcd", "abcd-1", "abcde", "other"]) {
        await suite.createSession(id);
        await suite.engine.append(key(id), appendOf([user(`${id}-m`)]));
      }
      const child = key("abcd-sub");
      await suite.engine.create(child, [rootEntry(child.sessionId, { parentSessionId: "abcd" })]);
      expect(await suite.engine.delete(key("abcd"))).toBe(true);
      await suite.persisted(async (e) => {
        const k = key("abcd");
        for (const err of [
          await expectCode(e.load(k), "NOT_FOUND"),
          await expectCode(e.read(k, 0, 10), "NOT_FOUND"),
          await expectCode(e.append(k, appendOf([user("zombie")])), "NOT_FOUND"),
        ]) {
          expect(err.message).toContain("abcd");
        }
        expect(await e.delete(k)).toBe(false);
        expect(sorted(await e.listIds(WS))).toEqual(["abcd-1", "abcd-sub", "abcde", "other"]);
        expect((await e.list(WS)).map((r) => r.sessionId).sort()).toEqual([
          "abcd-1",
          "abcd-sub",
          "abcde",
          "other",
        ]);
        for (const id of ["abcd-1", "abcde", "other"]) {
          const log = await e.load(key(id));
          expect(log.headSeq).toBe(2);
          expect(log.has(`${id}-m`)).toBe(true);
        }
      });
      expect(await suite.engine.delete(child)).toBe(true);
      expect(sorted(await suite.engine.listIds(WS))).toEqual(["abcd-1", "abcde", "other"]);
    });

    it("lets a deleted id be created again from scratch", async () => {
      const k = key("phoenix");
      await suite.engine.create(k, [rootEntry(k.sessionId, { id: "old-root", title: "old" })]);
      await suite.engine.append(k, appendOf([user("o1"), user("o2")]));
      expect(await suite.engine.delete(k)).toBe(true);
      const fresh = rootEntry(k.sessionId, { id: "new-root", title: "new" });
      await suite.engine.create(k, [fresh]);
      const r = await suite.engine.append(k, appendOf([user("o1", "new content")]));
      expect(r.deduplicated).toBe(false);
      expect(seqs(r.entries)).toEqual([2]);
      await suite.persisted(async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(2);
        expect(log.root.id).toBe("new-root");
        expect(log.title).toBe("new");
        expect(log.has("o2")).toBe(false);
        expectSameEntries(await suite.readAll(e, k), [fresh, ...r.entries]);
      });
    });
  });
}

/** The `deleteMany` capability test (storage capabilities). */
export function deleteManyTests(suite: ConformanceSuite): void {
  it("deleteMany: removes the sessions at once, returns those that existed in the order given, announces each", async (ctx) => {
    if (suite.engine.deleteMany === undefined) ctx.skip();
    for (const id of ["parent", "bystander"]) await suite.engine.create(key(id), [rootEntry(id)]);
    await suite.engine.create(key("child"), [rootEntry("child", { parentSessionId: "parent" })]);
    await suite.engine.create(key("grandchild"), [
      rootEntry("grandchild", { parentSessionId: "child" }),
    ]);
    await suite.engine.append(key("child"), appendOf([user("c1")]));
    await suite.engine.create(key("parent", "elsewhere"), [rootEntry("parent")]);
    const events: StorageEvent[] = [];
    const off = suite.engine.subscribe((e) => events.push(e));
    const removed = await suite.engine.deleteMany?.(WS, [
      "parent",
      "missing",
      "child",
      "grandchild",
      "child",
    ]);
    expect(removed).toEqual(["parent", "child", "grandchild"]);
    for (const id of ["parent", "child", "grandchild"]) {
      await expectCode(suite.engine.load(key(id)), "NOT_FOUND");
    }
    expect(
      events.filter((e) => e.type === "deleted").map((e) => `${e.workspace}/${e.sessionId}`),
    ).toEqual(["default/parent", "default/child", "default/grandchild"]);
    off();
    expect(await suite.engine.deleteMany?.(WS, ["parent", "child"])).toEqual([]);
    expect(await suite.engine.deleteMany?.(WS, [])).toEqual([]);
    const check = async (e: StorageEngine) => {
      expect(await e.listIds(WS)).toEqual(["bystander"]);
      expect(await e.listIds("elsewhere")).toEqual(["parent"]);
    };
    await check(suite.engine);
    if (suite.harness.reopen !== undefined) {
      suite.engine = await suite.harness.reopen();
      await check(suite.engine);
    }
    // A deleted id can be created again.
    await suite.engine.create(key("child"), [rootEntry("child", { id: "new-root" })]);
    expect((await suite.engine.load(key("child"))).headSeq).toBe(1);
  });
}
