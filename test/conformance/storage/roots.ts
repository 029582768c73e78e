/**
 * Storage conformance, listing roots: `listRoots` gives the root entry of
 * every session of a workspace (subagents with their parent, whatever was
 * appended since), follows creates and deletes after a first listing, and
 * sees what another instance on the same storage creates and deletes.
 */

import { timestampMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { RootRecord, StorageEngine } from "../../../src/storage/engine.js";
import {
  appendOf,
  assistant,
  expectSameEntries,
  rootEntry,
  settle,
  ts,
  user,
} from "../../support/fixtures.js";
import { type ConformanceSuite, key, sorted, WS } from "./harness.js";

/** The "listing roots" tests. */
export function describeRoots(suite: ConformanceSuite): void {
  describe("listing roots", () => {
    /** The roots of a workspace by id, sorted. */
    async function rootsOf(e: StorageEngine, workspace = WS): Promise<RootRecord[]> {
      const roots = await e.listRoots(workspace);
      return [...roots].sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));
    }

    function expectRootOf(r: RootRecord | undefined, root: Entry, parent = ""): void {
      expect(r).toBeDefined();
      const info = root.kind.case === "sessionInfo" ? root.kind.value : undefined;
      expect(r?.sessionId).toBe(info?.sessionId);
      expect(r?.health).toBe("ok");
      expect(r?.healthDetail).toBe("");
      expect(r?.parentSessionId).toBe(parent);
      expect(r?.createdAtMs).toBe(timestampMs(info?.createdAt ?? ts(0)));
      expectSameEntries(r?.root ? [r.root] : [], [root]);
    }

    it("gives the root of every session, subagents with their parent, whatever was appended", async () => {
      const roots = new Map<string, Entry>();
      for (const [i, id] of ["root-a", "root-b", "root-c"].entries()) {
        const root = rootEntry(id, {
          timestamp: ts(1_767_225_600 + i * 60, i * 333_333_333),
          metadata: { n: i, tags: ["x", "y"] },
        });
        await suite.engine.create(key(id), [root]);
        roots.set(id, root);
      }
      const child = rootEntry("root-child", {
        parentSessionId: "root-a",
        agentType: "helper",
        spawnDepth: 1,
      });
      const grandchild = rootEntry("root-grandchild", {
        parentSessionId: "root-child",
        spawnDepth: 2,
      });
      await suite.engine.create(key("root-child"), [child]);
      await suite.engine.create(key("root-grandchild"), [grandchild]);
      await suite.engine.append(key("root-a"), appendOf([user("u1"), assistant("a1")]));
      await suite.engine.append(key("root-child"), appendOf([user("c1")]));
      await suite.createSession("elsewhere", "other-ws");
      await suite.persisted(async (e) => {
        const listed = await rootsOf(e);
        expect(listed.map((r) => r.sessionId)).toEqual([
          "root-a",
          "root-b",
          "root-c",
          "root-child",
          "root-grandchild",
        ]);
        for (const [id, root] of roots) {
          expectRootOf(
            listed.find((r) => r.sessionId === id),
            root,
          );
        }
        expectRootOf(listed[3], child, "root-a");
        expectRootOf(listed[4], grandchild, "root-child");
        expect((await rootsOf(e, "other-ws")).map((r) => r.sessionId)).toEqual(["elsewhere"]);
        expect(await e.listRoots("nowhere")).toEqual([]);
        // The roots agree with the full records.
        for (const r of listed) {
          const [record] = await e.list(WS, [r.sessionId]);
          expect(record?.root?.id).toBe(r.root?.id);
        }
      });
    });

    it("shows sessions created and hides sessions deleted after a first listing", async () => {
      await suite.createSession("keep-1");
      await suite.createSession("gone-1");
      expect((await rootsOf(suite.engine)).map((r) => r.sessionId)).toEqual(["gone-1", "keep-1"]);
      expect(await suite.engine.delete(key("gone-1"))).toBe(true);
      await suite.createSession("new-1");
      const sub = rootEntry("new-sub", { parentSessionId: "keep-1", spawnDepth: 1 });
      await suite.engine.create(key("new-sub"), [sub]);
      let listed = await rootsOf(suite.engine);
      expect(listed.map((r) => r.sessionId)).toEqual(["keep-1", "new-1", "new-sub"]);
      expectRootOf(listed[2], sub, "keep-1");
      expect(sorted(await suite.engine.listIds(WS))).toEqual(["keep-1", "new-1", "new-sub"]);
      expect(await suite.engine.delete(key("new-sub"))).toBe(true);
      // Re-created under the same id: the new root, not the remembered one.
      expect(await suite.engine.delete(key("keep-1"))).toBe(true);
      const again = rootEntry("keep-1", { id: "second-root", timestamp: ts(1_800_000_000) });
      await suite.engine.create(key("keep-1"), [again]);
      await suite.persisted(async (e) => {
        listed = await rootsOf(e);
        expect(listed.map((r) => r.sessionId)).toEqual(["keep-1", "new-1"]);
        expectRootOf(listed[0], again);
        expect(sorted(await e.listIds(WS))).toEqual(["keep-1", "new-1"]);
      });
    });

    it("sees the sessions another instance creates and deletes (a second process; skipped for engines that live in one process, like memory)", async (ctx) => {
      if (suite.harness.sibling === undefined) ctx.skip();
      const other = await (suite.harness.sibling as () => Promise<StorageEngine>)();
      await suite.createSession("mine");
      expect((await rootsOf(suite.engine)).map((r) => r.sessionId)).toEqual(["mine"]);
      expect(await suite.engine.listIds("shared-ws")).toEqual([]);

      const theirs = rootEntry("theirs", { title: "made elsewhere" });
      await other.create(key("theirs"), [theirs]);
      const theirSub = rootEntry("their-sub", { parentSessionId: "mine", spawnDepth: 1 });
      await other.create(key("their-sub"), [theirSub]);
      await other.create(key("far", "shared-ws"), [rootEntry("far")]);
      let listed = await rootsOf(suite.engine);
      expect(listed.map((r) => r.sessionId)).toEqual(["mine", "their-sub", "theirs"]);
      expectRootOf(listed[1], theirSub, "mine");
      expectRootOf(listed[2], theirs);
      expect(sorted(await suite.engine.listIds(WS))).toEqual(["mine", "their-sub", "theirs"]);
      expect(await suite.engine.listIds("shared-ws")).toEqual(["far"]);

      expect(await other.delete(key("theirs"))).toBe(true);
      expect(await other.delete(key("mine"))).toBe(true);
      expect((await rootsOf(suite.engine)).map((r) => r.sessionId)).toEqual(["their-sub"]);
      expect(await suite.engine.listIds(WS)).toEqual(["their-sub"]);

      // Long after the last change, so that nothing is "too recent to trust".
      await settle(250);
      expect(await suite.engine.listIds(WS)).toEqual(["their-sub"]);
      await other.create(key("later"), [rootEntry("later")]);
      await other.create(key("later-sub"), [rootEntry("later-sub", { parentSessionId: "later" })]);
      listed = await rootsOf(suite.engine);
      expect(listed.map((r) => r.sessionId)).toEqual(["later", "later-sub", "their-sub"]);
      expect(listed[1]?.parentSessionId).toBe("later");
      await settle(250);
      expect(await other.delete(key("later-sub"))).toBe(true);
      expect((await rootsOf(suite.engine)).map((r) => r.sessionId)).toEqual(["later", "their-sub"]);
    });
  });
}
