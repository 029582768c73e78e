/**
 * Storage capabilities, keyset paging of roots: the optional `pageRoots`
 * gives, page after page to the end, exactly the plain selection from
 * `listRoots` (`expectedRootPage`: what the store does without it), in
 * both orders, for top-level sessions and subagents, with equal creation
 * times, while sessions are deleted and created between pages; an unknown
 * workspace or parent gives an empty page.
 */
import { expect, it } from "vitest";
import type { RootPageQuery, RootRecord, StorageEngine } from "../../../src/storage/engine.js";
import { rootEntry, ts } from "../../support/fixtures.js";
import { type ConformanceSuite, key, WS } from "./harness.js";

/**
 * The page `StorageEngine.pageRoots` must return, computed the plain way
 * from every root (`listRoots`): filter on the parent and the keyset, sort
 * by (createdAtMs, sessionId) with JavaScript's string order, reverse for
 * "desc", cut at `limit`. The store's top-k (src/store/top-k.ts) is checked
 * against the same filter + sort + slice.
 */
export function expectedRootPage(roots: readonly RootRecord[], q: RootPageQuery): RootRecord[] {
  const sign = q.order === "desc" ? -1 : 1;
  const cmp = (aMs: number, aId: string, bMs: number, bId: string) =>
    sign * (aMs - bMs || (aId < bId ? -1 : aId > bId ? 1 : 0));
  const after = q.after;
  return roots
    .filter(
      (r) =>
        r.parentSessionId === q.parentSessionId &&
        (after === undefined || cmp(r.createdAtMs, r.sessionId, after.createdMs, after.id) > 0),
    )
    .sort((a, b) => cmp(a.createdAtMs, a.sessionId, b.createdAtMs, b.sessionId))
    .slice(0, q.limit);
}

/** The `pageRoots` capability tests. */
export function pageRootsTests(suite: ConformanceSuite): void {
  /** What pages are compared on: the sort key, the health and the root's id. */
  function summary(roots: readonly RootRecord[]): string[] {
    return roots.map(
      (r) =>
        `${r.sessionId} @${r.createdAtMs} parent=${r.parentSessionId} ${r.health} root=${r.root?.id}`,
    );
  }

  /** Ids chosen to tell bytewise order from locale order: case, '-', '_', digits. */
  const TOP_IDS = ["A", "a", "a-", "a_", "B", "b", "Z", "z", "0", "9", "a-b", "aB"].flatMap(
    (p, i) => Array.from({ length: 7 }, (_, n) => `${p}${(n * 5 + i) % 7}`),
  );

  /**
   * 84 top-level sessions on 4 creation times (so most keys tie on time
   * and are ordered by id), one of them before 1970; 12 subagents of
   * "a-1", 5 of "B2", 1 of a subagent.
   */
  async function population(): Promise<string[]> {
    const parents: string[] = [];
    for (const [i, id] of TOP_IDS.entries()) {
      const timestamp = i === 5 ? ts(-86_400, 0) : ts(1_767_225_600 + (i % 4) * 60, 0);
      await suite.engine.create(key(id), [rootEntry(id, { timestamp })]);
    }
    for (const [parent, n] of [
      ["a-1", 12],
      ["B2", 5],
    ] as const) {
      parents.push(parent);
      for (let i = 0; i < n; i++) {
        const id = `${parent}-sub_${(i * 7) % n}`;
        const timestamp = ts(1_767_225_600 + (i % 3), 0);
        await suite.engine.create(key(id), [rootEntry(id, { parentSessionId: parent, timestamp })]);
      }
    }
    await suite.engine.create(key("a-1-sub_0-sub"), [
      rootEntry("a-1-sub_0-sub", { parentSessionId: "a-1-sub_0" }),
    ]);
    parents.push("a-1-sub_0");
    return parents;
  }

  /** Pages through one listing with `pageRoots`, checking each page against `listRoots`. */
  async function pageThrough(
    e: StorageEngine,
    q: Omit<RootPageQuery, "after">,
    between?: (after: NonNullable<RootPageQuery["after"]>) => Promise<void>,
  ): Promise<RootRecord[]> {
    const pageRoots = e.pageRoots?.bind(e) as NonNullable<StorageEngine["pageRoots"]>;
    const seen: RootRecord[] = [];
    let after: RootPageQuery["after"];
    for (let n = 0; ; n++) {
      if (after !== undefined && between !== undefined) await between(after);
      const query = { ...q, after };
      const page = await pageRoots(WS, query);
      const expected = expectedRootPage(await e.listRoots(WS), query);
      expect(summary(page), `page ${n} of ${JSON.stringify(query)}`).toEqual(summary(expected));
      seen.push(...page);
      const last = page[page.length - 1];
      if (page.length < q.limit || last === undefined) return seen;
      after = { createdMs: last.createdAtMs, id: last.sessionId };
    }
  }

  it("pageRoots: every page is the plain selection from listRoots, to the end (both orders, top level and subagents, equal creation times)", async (ctx) => {
    if (suite.engine.pageRoots === undefined) ctx.skip();
    const parents = await population();
    const roots = await suite.engine.listRoots(WS);
    for (const order of ["desc", "asc"] as const) {
      for (const parentSessionId of ["", ...parents, "nobody"]) {
        const whole = expectedRootPage(roots, { parentSessionId, order, limit: 1_000 });
        for (const limit of [2, 7, 1_000]) {
          const seen = await pageThrough(suite.engine, { parentSessionId, order, limit });
          expect(summary(seen), `${order} ${parentSessionId} by ${limit}`).toEqual(summary(whole));
        }
      }
    }
    // The data covers what it should: a creation time before 1970 first.
    const oldest = expectedRootPage(roots, { parentSessionId: "", order: "asc", limit: 1 });
    expect(summary(oldest)).toEqual(["A4 @-86400000 parent= ok root=root-A4"]);
  });

  it("pageRoots: sessions deleted and created between pages, the previous page's last one too", async (ctx) => {
    if (suite.engine.pageRoots === undefined) ctx.skip();
    await population();
    for (const order of ["desc", "asc"] as const) {
      let made = 0;
      const q = { parentSessionId: "", order, limit: 5 };
      const seen = await pageThrough(suite.engine, q, async (after) => {
        // The keyset anchor (the last session handed out) goes, and one
        // session on each side of it; new ones land on both sides too.
        const current = expectedRootPage(await suite.engine.listRoots(WS), { ...q, limit: 1_000 });
        const gone = new Set([after.id, current[0]?.sessionId, current.at(-1)?.sessionId]);
        for (const id of gone) {
          if (id !== undefined) expect(await suite.engine.delete(key(id))).toBe(true);
        }
        for (const seconds of [1_767_225_600, 1_767_225_660, 1_767_225_900]) {
          const id = `late-${order}-${made++}`;
          await suite.engine.create(key(id), [rootEntry(id, { timestamp: ts(seconds, 0) })]);
        }
      });
      // Nothing handed out twice, and every page was checked against listRoots.
      const ids = seen.map((r) => r.sessionId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeGreaterThan(20);
    }
  });

  it("pageRoots: an unknown workspace or parent gives an empty page", async (ctx) => {
    if (suite.engine.pageRoots === undefined) ctx.skip();
    await population();
    for (const order of ["desc", "asc"] as const) {
      const q = { parentSessionId: "", order, limit: 10 };
      expect(await suite.engine.pageRoots?.("nowhere", q)).toEqual([]);
      expect(await suite.engine.pageRoots?.(WS, { ...q, parentSessionId: "A0" })).toEqual([]);
    }
  });
}
