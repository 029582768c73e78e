/**
 * Storage conformance, the workspace listing (`workspacePage`, what
 * ListWorkspaces pages on): the workspaces that hold sessions, by name in
 * bytewise order, each with its top-level and subagent sessions counted,
 * after a name, at most a limit, optionally only some names; an emptied
 * workspace drops out; another instance's creates and deletes are seen.
 */

import { describe, expect, it } from "vitest";
import type { StorageEngine, WorkspaceRecord } from "../../../src/storage/engine.js";
import { rootEntry } from "../../support/fixtures.js";
import { type ConformanceSuite, key } from "./harness.js";

/** Every workspace of the engine, page by page of `limit`. */
async function allPages(e: StorageEngine, limit: number): Promise<WorkspaceRecord[]> {
  const out: WorkspaceRecord[] = [];
  let after = "";
  for (;;) {
    const page = await e.workspacePage({ after, limit });
    out.push(...page);
    const last = page[page.length - 1];
    if (page.length < limit || last === undefined) return out;
    after = last.name;
  }
}

const counts = (sessionCount: number, subagentCount: number) => ({ sessionCount, subagentCount });

/** The "workspace listing" tests. */
export function describeWorkspaces(suite: ConformanceSuite): void {
  describe("workspace listing", () => {
    it("lists the workspaces that hold sessions by name, with top-level and subagent counts", async () => {
      await suite.createSession("one", "beta");
      await suite.createSession("two", "alpha");
      await suite.createSession("three", "alpha");
      await suite.engine.create(key("helper", "alpha"), [
        rootEntry("helper", { parentSessionId: "two", spawnDepth: 1 }),
      ]);
      await suite.persisted(async (e) => {
        expect(await e.workspacePage({ after: "", limit: 10 })).toEqual([
          { name: "alpha", ...counts(2, 1) },
          { name: "beta", ...counts(1, 0) },
        ]);
      });
    });

    it("orders names bytewise and pages after a name, at most `limit` a page", async () => {
      // Upper case before lower case, digits first, '-' < '.' < '_' (ASCII).
      const names = ["b_1", "a", "B", "b-1", "0", "b.1", "ab"];
      for (const [i, ws] of names.entries()) await suite.createSession(`s${i}`, ws);
      const bytewise = ["0", "B", "a", "ab", "b-1", "b.1", "b_1"];
      await suite.persisted(async (e) => {
        expect((await e.workspacePage({ after: "", limit: 100 })).map((w) => w.name)).toEqual(
          bytewise,
        );
        expect((await e.workspacePage({ after: "B", limit: 2 })).map((w) => w.name)).toEqual([
          "a",
          "ab",
        ]);
        // A name that is not a workspace is a place in the order all the same.
        expect((await e.workspacePage({ after: "b", limit: 100 })).map((w) => w.name)).toEqual([
          "b-1",
          "b.1",
          "b_1",
        ]);
        expect(await e.workspacePage({ after: "b_1", limit: 100 })).toEqual([]);
        for (const limit of [1, 2, 3]) {
          expect((await allPages(e, limit)).map((w) => w.name)).toEqual(bytewise);
        }
      });
    });

    it("lists only the names asked for, when `only` is given", async () => {
      for (const ws of ["red", "green", "blue"]) await suite.createSession(`in-${ws}`, ws);
      await suite.persisted(async (e) => {
        const only = new Set(["red", "blue", "never-created"]);
        expect(await e.workspacePage({ after: "", limit: 10, only })).toEqual([
          { name: "blue", ...counts(1, 0) },
          { name: "red", ...counts(1, 0) },
        ]);
        expect(
          (await e.workspacePage({ after: "blue", limit: 10, only })).map((w) => w.name),
        ).toEqual(["red"]);
        expect(await e.workspacePage({ after: "", limit: 10, only: new Set() })).toEqual([]);
      });
    });

    it("leaves out a workspace whose sessions were all deleted, and counts what is left", async () => {
      await suite.createSession("gone", "emptied");
      await suite.createSession("stays", "kept");
      await suite.createSession("goes-too", "kept");
      expect(await suite.engine.delete(key("gone", "emptied"))).toBe(true);
      expect(await suite.engine.delete(key("goes-too", "kept"))).toBe(true);
      await suite.persisted(async (e) => {
        expect(await e.workspacePage({ after: "", limit: 10 })).toEqual([
          { name: "kept", ...counts(1, 0) },
        ]);
      });
    });

    it("is empty on empty storage", async () => {
      expect(await suite.engine.workspacePage({ after: "", limit: 10 })).toEqual([]);
    });

    it("sees the workspaces another instance fills and empties (a second process; skipped for engines that live in one process, like memory)", async (ctx) => {
      if (suite.harness.sibling === undefined) ctx.skip();
      const other = await (suite.harness.sibling as () => Promise<StorageEngine>)();
      await suite.createSession("mine", "here");
      expect((await suite.engine.workspacePage({ after: "", limit: 10 })).length).toBe(1);
      await other.create(key("theirs", "there"), [rootEntry("theirs")]);
      await other.create(key("their-sub", "here"), [
        rootEntry("their-sub", { parentSessionId: "mine", spawnDepth: 1 }),
      ]);
      expect(await suite.engine.workspacePage({ after: "", limit: 10 })).toEqual([
        { name: "here", ...counts(1, 1) },
        { name: "there", ...counts(1, 0) },
      ]);
      expect(await other.delete(key("theirs", "there"))).toBe(true);
      expect(await suite.engine.workspacePage({ after: "", limit: 10 })).toEqual([
        { name: "here", ...counts(1, 1) },
      ]);
    });
  });
}
