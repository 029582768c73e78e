/**
 * Storage conformance, listing sessions and workspaces: `list` reports
 * headSeq, leafId, messageCount, title, health, updatedAtMs and the root,
 * for every session or an explicit subset; `listIds` and `workspaces` see
 * exactly what exists, and one session id in two workspaces is two
 * sessions.
 */

import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  appendOf,
  assistant,
  expectCode,
  expectSameEntries,
  modelChange,
  rewindOf,
  rootEntry,
  ts,
  user,
} from "../../support/fixtures.js";
import { type ConformanceSuite, key, sorted, WS } from "./harness.js";

/** The "listing and workspaces" tests. */
export function describeListing(suite: ConformanceSuite): void {
  describe("listing and workspaces", () => {
    it("reports headSeq, leafId, messageCount, title, health and updatedAtMs", async () => {
      const a = key("listed-a");
      const b = key("listed-b");
      const rootA = await suite.createSession(a.sessionId);
      const rootB = await suite.createSession(b.sessionId);
      await suite.engine.append(
        a,
        appendOf([
          user("u1"),
          assistant("a1"),
          modelChange("mc", "model-z", "provider-y"),
          create(EntrySchema, {
            id: "retitle",
            kind: { case: "sessionInfo", value: { title: "new title", formatVersion: 1 } },
          }),
        ]),
      );
      const moved = await suite.engine.append(a, rewindOf("a1"));
      const lastA = moved.entries[0] as Entry;
      await suite.persisted(async (e) => {
        const records = await e.list(WS);
        expect(records.map((r) => r.sessionId).sort()).toEqual([a.sessionId, b.sessionId]);
        const recA = records.find((r) => r.sessionId === a.sessionId);
        expect(recA).toMatchObject({
          workspace: WS,
          sessionId: a.sessionId,
          title: "new title",
          headSeq: 6,
          leafId: "a1",
          messageCount: 2,
          health: "ok",
        });
        expect(recA?.updatedAtMs).toBeGreaterThan(0);
        expect(recA?.updatedAtMs).toBe(timestampMs(lastA.timestamp ?? ts(0)));
        expectSameEntries(recA?.root ? [recA.root] : [], [rootA]);
        const recB = records.find((r) => r.sessionId === b.sessionId);
        expect(recB).toMatchObject({
          sessionId: b.sessionId,
          title: `title of ${b.sessionId}`,
          headSeq: 1,
          leafId: rootB.id,
          messageCount: 0,
          health: "ok",
        });
        expect(recB?.updatedAtMs).toBe(timestampMs(rootB.timestamp ?? ts(0)));
      });
    });

    it("lists an explicit subset of ids, skipping unknown ones", async () => {
      for (const id of ["sub-a", "sub-b", "sub-c"]) await suite.createSession(id);
      await suite.persisted(async (e) => {
        const some = await e.list(WS, ["sub-c", "sub-a"]);
        expect(some.map((r) => r.sessionId).sort()).toEqual(["sub-a", "sub-c"]);
        const withUnknown = await e.list(WS, ["sub-b", "sub-missing"]);
        expect(withUnknown.map((r) => r.sessionId)).toEqual(["sub-b"]);
        expect(await e.list(WS, [])).toEqual([]);
      });
    });

    it("lists every session of a workspace; an unknown workspace is empty", async () => {
      const ids = Array.from({ length: 12 }, (_, i) => `many-${String(i).padStart(2, "0")}`);
      for (const id of ids) await suite.createSession(id);
      await suite.persisted(async (e) => {
        expect(sorted(await e.listIds(WS))).toEqual(ids);
        expect((await e.list(WS)).map((r) => r.sessionId).sort()).toEqual(ids);
        expect(await e.listIds("nowhere")).toEqual([]);
        expect(await e.list("nowhere")).toEqual([]);
      });
    });

    it("isolates workspaces: one session id in two workspaces is two sessions", async () => {
      expect(await suite.engine.workspaces()).toEqual([]);
      const inA = key("shared-id", "team-a");
      const inB = key("shared-id", "team.b_2");
      const rootA = rootEntry(inA.sessionId, { id: "root-a", title: "A" });
      const rootB = rootEntry(inB.sessionId, { id: "root-b", title: "B" });
      await suite.engine.create(inA, [rootA]);
      await suite.engine.create(inB, [rootB]);
      await suite.createSession("only-a", "team-a");
      await suite.engine.append(inA, appendOf([user("ua")]));
      // The same entry id in the other workspace's session is not a retry.
      const inBAppend = await suite.engine.append(inB, appendOf([user("ua", "different text")]));
      expect(inBAppend.deduplicated).toBe(false);
      await suite.persisted(async (e) => {
        expect(sorted(await e.workspaces())).toEqual(["team-a", "team.b_2"]);
        expect(sorted(await e.listIds("team-a"))).toEqual(["only-a", "shared-id"]);
        expect(await e.listIds("team.b_2")).toEqual(["shared-id"]);
        expect(await e.listIds(WS)).toEqual([]);
        const logA = await e.load(inA);
        const logB = await e.load(inB);
        expect(logA.root.id).toBe("root-a");
        expect(logB.root.id).toBe("root-b");
        expect(logA.title).toBe("A");
        expect(logB.title).toBe("B");
        expect(logA.get("ua")?.kind.value).not.toEqual(logB.get("ua")?.kind.value);
        expect((await e.list("team.b_2")).map((r) => r.title)).toEqual(["B"]);
      });
      expect(await suite.engine.delete(inB)).toBe(true);
      await suite.persisted(async (e) => {
        expect(await e.workspaces()).toEqual(["team-a"]);
        expect((await e.load(inA)).headSeq).toBe(2);
        await expectCode(e.load(inB), "NOT_FOUND");
      });
    });
  });
}
