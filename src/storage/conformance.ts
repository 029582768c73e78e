/**
 * The storage conformance suite: one set of tests that every StorageEngine
 * (memory, jsonl, postgres) must pass unchanged. An engine's test file calls
 *
 *   describeStorageConformance("jsonl", async () => ({ engine, reopen, cleanup }));
 *
 * Factory contract:
 * - every call returns an engine on EMPTY storage (no sessions, no workspaces);
 * - `reopen` (optional) closes the current engine and opens a new one on the
 *   same storage; persistence checks run before and after it when given;
 * - `sibling` (optional) opens ANOTHER engine on the same storage while the
 *   current one stays open: a stand-in for a second process. Tests of what
 *   one instance sees of the other's changes run only when it is given;
 * - `cleanup` disposes of whatever engine is current at the end of the test
 *   (the one returned by the last `reopen`, if any), of every sibling and of
 *   the storage; it must tolerate those engines having been closed already.
 *
 * Everything asserted here is observable through the StorageEngine
 * interface; nothing depends on how an engine stores data.
 */
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import type { AppendPlan } from "../core/append-plan.js";
import { failedPrecondition, isSessiondError } from "../core/errors.js";
import { matchesSessionRef } from "../core/ids.js";
import {
  appendOf,
  assistantMsg,
  countMessages,
  expectCode,
  expectedRootPage,
  expectSameEntries,
  forkLikeEntries,
  kindless,
  labelEntry,
  modelChange,
  resetLeaf,
  rewindTo,
  rootEntry,
  seqs,
  settle,
  ts,
  userMsg,
} from "./conformance-helpers.js";
import type {
  Planner,
  RootPageQuery,
  RootRecord,
  SessionKey,
  StorageEngine,
  StorageEvent,
} from "./engine.js";

export interface ConformanceHarness {
  engine: StorageEngine;
  /** Closes the engine and opens a new one on the same storage. */
  reopen?: () => Promise<StorageEngine>;
  /** Opens another engine on the same storage, alive next to the current one. */
  sibling?: () => Promise<StorageEngine>;
  /** Disposes of the current engine and the storage. */
  cleanup: () => Promise<void>;
}

export type ConformanceFactory = () => Promise<ConformanceHarness>;

const WS = "default";

function key(sessionId: string, workspace = WS): SessionKey {
  return { workspace, sessionId };
}

function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}

/** Asserts that no entry (Leaf entries aside, which only record the old leaf) has two children. */
function expectNoFork(entries: readonly Entry[]): void {
  const children = new Map<string, string[]>();
  for (const e of entries) {
    if (e.kind.case === "leaf" || e.parentId === undefined) continue;
    children.set(e.parentId, [...(children.get(e.parentId) ?? []), e.id]);
  }
  const forks = [...children].filter(([, c]) => c.length > 1);
  expect(forks, "entries with more than one child").toEqual([]);
}

export function describeStorageConformance(name: string, factory: ConformanceFactory): void {
  describe(`storage conformance: ${name}`, () => {
    let harness: ConformanceHarness;
    /** The current engine (replaced by `persisted` when the harness can reopen). */
    let engine: StorageEngine;

    beforeEach(async () => {
      harness = await factory();
      engine = harness.engine;
    });

    afterEach(async () => {
      await harness.cleanup();
    });

    /** Runs `check` now and, when the engine can be reopened, again after a reopen. */
    async function persisted(check: (e: StorageEngine) => Promise<void>): Promise<void> {
      await check(engine);
      if (harness.reopen !== undefined) {
        engine = await harness.reopen();
        await check(engine);
      }
    }

    async function createSession(sessionId: string, workspace = WS): Promise<Entry> {
      const root = rootEntry(sessionId);
      await engine.create(key(sessionId, workspace), [root]);
      return root;
    }

    async function readAll(e: StorageEngine, k: SessionKey): Promise<Entry[]> {
      return (await e.read(k, 0, 1_000_000)).entries;
    }

    describe("create and load", () => {
      it("round-trips the root SessionInfo: headSeq 1, leaf = root", async () => {
        const k = key("20260101-120000-0a1b2c3d");
        const root = rootEntry(k.sessionId, {
          title: "first session",
          metadata: { user: "ada", n: 2, deep: { list: [true, null, "x"] } },
        });
        await engine.create(k, [root]);
        await persisted(async (e) => {
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
        await engine.create(k, [original]);
        const r = await engine.append(k, appendOf([userMsg("u1")]));
        const err = await expectCode(
          engine.create(k, [rootEntry(k.sessionId, { id: "other-root", title: "impostor" })]),
          "ALREADY_EXISTS",
        );
        expect(err.message).toContain(k.sessionId);
        await persisted(async (e) => {
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
        const results = await Promise.allSettled(roots.map((r) => engine.create(k, [r])));
        const winners = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
        expect(winners).toHaveLength(1);
        for (const r of results) {
          if (r.status === "rejected")
            expect(isSessiondError(r.reason, "ALREADY_EXISTS")).toBe(true);
        }
        const winner = roots[winners[0] as number] as Entry;
        await persisted(async (e) => {
          expectSameEntries((await e.load(k)).entries(), [winner]);
          expect(await e.listIds(WS)).toEqual([k.sessionId]);
        });
      });

      it("writes nothing for a create whose entries break the log invariants", async () => {
        const k = key("bad-create");
        const root = rootEntry(k.sessionId);
        const bad = [
          root,
          userMsg("m1", "a", { seq: 2, parentId: root.id, timestamp: ts(1_767_225_601) }),
          userMsg("m2", "b", { seq: 3, parentId: "ghost", timestamp: ts(1_767_225_602) }),
        ];
        await expect(engine.create(k, bad)).rejects.toThrow();
        await persisted(async (e) => {
          await expectCode(e.load(k), "NOT_FOUND");
          expect(await e.listIds(WS)).toEqual([]);
        });
        await engine.create(k, [root]);
        expect((await engine.load(k)).headSeq).toBe(1);
      });

      it("creates subagent sessions that show in listIds and list", async () => {
        const parent = key("parent-session");
        const child = key("parent-session-sub1");
        await createSession(parent.sessionId);
        const childRoot = rootEntry(child.sessionId, {
          title: "explorer",
          parentSessionId: parent.sessionId,
          agentType: "explorer",
          spawnDepth: 1,
        });
        await engine.create(child, [childRoot]);
        const r = await engine.append(child, appendOf([userMsg("s1"), assistantMsg("s2")]));
        await persisted(async (e) => {
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
        const more = await engine.append(child, appendOf([userMsg("s3")]));
        expect(seqs(more.entries)).toEqual([4]);
      });

      it("loads a fork-like create of 21 entries (Label, Compaction, ...) identically", async () => {
        const k = key("fork-like");
        const entries = forkLikeEntries(k.sessionId);
        expect(seqs(entries)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
        await engine.create(k, entries);
        const last = entries[20] as Entry;
        await persisted(async (e) => {
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
        const r = await engine.append(k, appendOf([userMsg("after-fork")]));
        expect(seqs(r.entries)).toEqual([22]);
        expect(r.entries[0]?.parentId).toBe(last.id);
      });
    });

    describe("append", () => {
      it("assigns dense seqs; read and load return exactly what was stored", async () => {
        const k = key("appender");
        const root = await createSession(k.sessionId);
        const r1 = await engine.append(k, appendOf([userMsg("u1")]));
        expect(r1.deduplicated).toBe(false);
        expect(seqs(r1.entries)).toEqual([2]);
        expect(r1.headSeq).toBe(2);
        expect(r1.leafId).toBe("u1");
        expect(r1.entries[0]?.parentId).toBe(root.id);
        const r2 = await engine.append(
          k,
          appendOf([assistantMsg("a1", "sure", { toolCalls: ["call-7"] }), userMsg("u2")]),
        );
        expect(seqs(r2.entries)).toEqual([3, 4]);
        expect(r2.entries.map((x) => x.parentId)).toEqual(["u1", "a1"]);
        expect(r2.headSeq).toBe(4);
        expect(r2.leafId).toBe("u2");
        const stored = [root, ...r1.entries, ...r2.entries];
        await persisted(async (e) => {
          expectSameEntries(await readAll(e, k), stored);
          const log = await e.load(k);
          expect(log.headSeq).toBe(4);
          expect(log.leafId).toBe("u2");
          expectSameEntries(log.entries(), stored);
        });
      });

      it("pages read by afterSeq and limit", async () => {
        const k = key("pager");
        await createSession(k.sessionId);
        await engine.append(k, appendOf(Array.from({ length: 9 }, (_, i) => userMsg(`p${i + 2}`))));
        await persisted(async (e) => {
          const cases: Array<[number, number, number[]]> = [
            [0, 1, [1]],
            [0, 100, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
            [3, 4, [4, 5, 6, 7]],
            [8, 100, [9, 10]],
            [9, 1, [10]],
            [10, 5, []],
            [12, 5, []],
          ];
          for (const [after, limit, want] of cases) {
            const page = await e.read(k, after, limit);
            expect(seqs(page.entries), `read(${after}, ${limit})`).toEqual(want);
            expect(page.headSeq).toBe(10);
          }
          expect((await e.read(k, 4, 1)).entries[0]?.id).toBe("p5");
        });
      });

      it("writes nothing of a batch of 5 whose 3rd entry is invalid", async () => {
        const k = key("atomic-batch");
        const root = await createSession(k.sessionId);
        const first = await engine.append(k, appendOf([userMsg("u1")]));
        const invalidThirds: Entry[] = [
          userMsg("b3", "orphan", { parentId: "ghost" }),
          kindless("b3"),
          labelEntry("b3", ""),
        ];
        for (const third of invalidThirds) {
          const batch = [
            userMsg("b1"),
            assistantMsg("b2"),
            third,
            userMsg("b4"),
            assistantMsg("b5"),
          ];
          await expectCode(engine.append(k, appendOf(batch)), "INVALID_ARGUMENT");
        }
        await persisted(async (e) => {
          const page = await e.read(k, 1, 100);
          expect(page.headSeq).toBe(2);
          expectSameEntries(page.entries, first.entries);
          const log = await e.load(k);
          expect(log.headSeq).toBe(2);
          expect(log.leafId).toBe("u1");
          for (const id of ["b1", "b2", "b3", "b4", "b5"]) expect(log.has(id)).toBe(false);
          const [rec] = await e.list(WS, [k.sessionId]);
          expect(rec?.headSeq).toBe(2);
          expect(rec?.messageCount).toBe(1);
        });
        const ok = await engine.append(
          k,
          appendOf([
            userMsg("b1"),
            assistantMsg("b2"),
            userMsg("b3"),
            userMsg("b4"),
            userMsg("b5"),
          ]),
        );
        expect(seqs(ok.entries)).toEqual([3, 4, 5, 6, 7]);
        expect(seqs(await readAll(engine, k))).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect((await engine.load(k)).root.id).toBe(root.id);
      });

      it("writes nothing of a plan whose 3rd entry breaks the log invariants", async () => {
        // A planner bug must not reach storage: the engine applies a batch all or nothing.
        const k = key("atomic-plan");
        await createSession(k.sessionId);
        await engine.append(k, appendOf([userMsg("u1")]));
        const variants: Array<(head: number, leaf: string) => Entry> = [
          (h) => userMsg("x3", "orphan", { seq: h + 3, parentId: "ghost", timestamp: ts(2e9) }),
          (h) => userMsg("x3", "gap", { seq: h + 4, parentId: "x2", timestamp: ts(2e9) }),
          (h) => userMsg("x1", "duplicate id", { seq: h + 3, parentId: "x2", timestamp: ts(2e9) }),
        ];
        for (const third of variants) {
          const planner: Planner = (log): AppendPlan => {
            const h = log.headSeq;
            const batch = [
              userMsg("x1", "one", { seq: h + 1, parentId: log.leafId, timestamp: ts(2e9) }),
              userMsg("x2", "two", { seq: h + 2, parentId: "x1", timestamp: ts(2e9) }),
              third(h, log.leafId),
              userMsg("x4", "four", { seq: h + 4, parentId: "x2", timestamp: ts(2e9) }),
              userMsg("x5", "five", { seq: h + 5, parentId: "x4", timestamp: ts(2e9) }),
            ];
            return { write: batch, entries: batch, deduplicated: false };
          };
          await expect(engine.append(k, planner)).rejects.toThrow();
        }
        await persisted(async (e) => {
          const log = await e.load(k);
          expect(log.headSeq).toBe(2);
          expect(log.leafId).toBe("u1");
          for (const id of ["x1", "x2", "x3", "x4", "x5"]) expect(log.has(id)).toBe(false);
          expect((await e.read(k, 2, 100)).entries).toEqual([]);
        });
        const ok = await engine.append(k, appendOf([userMsg("x1")]));
        expect(seqs(ok.entries)).toEqual([3]);
        expect(ok.entries[0]?.parentId).toBe("u1");
      });

      it("serialises 100 concurrent appends to one session: seqs 1..101, each entry once", async () => {
        const k = key("hundred");
        const root = await createSession(k.sessionId);
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            engine.append(k, appendOf([userMsg(`m${i}`, `message ${i}`)])),
          ),
        );
        const resultSeqs = results.flatMap((r) => seqs(r.entries)).sort((a, b) => a - b);
        expect(resultSeqs).toEqual(Array.from({ length: 100 }, (_, i) => i + 2));
        for (const r of results) {
          expect(r.headSeq).toBeGreaterThanOrEqual(Number(r.entries[0]?.seq));
        }
        await persisted(async (e) => {
          const all = await readAll(e, k);
          expect(seqs(all)).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
          const ids = all.map((x) => x.id);
          expect(new Set(ids).size).toBe(101);
          expect(sorted(ids)).toEqual(
            sorted([root.id, ...Array.from({ length: 100 }, (_, i) => `m${i}`)]),
          );
          // Each planner saw the log as left by the previous append: one linear chain.
          all.slice(1).forEach((x, i) => {
            expect(x.parentId).toBe(all[i]?.id);
          });
          const byId = new Map(results.map((r) => [r.entries[0]?.id, r.entries[0]]));
          for (const x of all.slice(1)) expectSameEntries([x], [byId.get(x.id) as Entry]);
          const log = await e.load(k);
          expect(log.headSeq).toBe(101);
          expect(log.leafId).toBe(all[100]?.id);
        });
      });

      it("keeps concurrent appends to different sessions apart", async () => {
        const names = ["multi-a", "multi-b", "multi-c", "multi-d"];
        for (const n of names) await createSession(n);
        await Promise.all(
          Array.from({ length: 25 }, (_, i) =>
            names.map((n) => engine.append(key(n), appendOf([userMsg(`${n}-${i}`)]))),
          ).flat(),
        );
        await persisted(async (e) => {
          for (const n of names) {
            const all = await readAll(e, key(n));
            expect(seqs(all)).toEqual(Array.from({ length: 26 }, (_, i) => i + 1));
            for (const x of all.slice(1)) expect(x.id.startsWith(`${n}-`)).toBe(true);
          }
        });
      });
    });

    describe("optimistic concurrency", () => {
      it("fails a stale expectedSeq with ABORTED and writes nothing", async () => {
        const k = key("cas-seq");
        await createSession(k.sessionId);
        await engine.append(k, appendOf([userMsg("u1")]));
        for (const stale of [0, 1, 3]) {
          await expectCode(
            engine.append(k, appendOf([userMsg("x")], { expectedSeq: stale })),
            "ABORTED",
          );
        }
        await persisted(async (e) => {
          const log = await e.load(k);
          expect(log.headSeq).toBe(2);
          expect(log.has("x")).toBe(false);
        });
        const ok = await engine.append(k, appendOf([userMsg("x")], { expectedSeq: 2 }));
        expect(ok.headSeq).toBe(3);
      });

      it("fails a stale expectedLeafId with ABORTED and writes nothing", async () => {
        const k = key("cas-leaf");
        await createSession(k.sessionId);
        await engine.append(k, appendOf([userMsg("u1"), assistantMsg("a1")]));
        await expectCode(
          engine.append(k, appendOf([userMsg("x")], { expectedLeafId: "u1" })),
          "ABORTED",
        );
        await persisted(async (e) => {
          const log = await e.load(k);
          expect(log.headSeq).toBe(3);
          expect(log.leafId).toBe("a1");
          expect(log.has("x")).toBe(false);
        });
        const ok = await engine.append(k, appendOf([userMsg("x")], { expectedLeafId: "a1" }));
        expect(ok.entries[0]?.parentId).toBe("a1");
      });

      it("lets one of two racing appends with the same expectedLeafId win; no fork", async () => {
        const k = key("cas-race");
        await createSession(k.sessionId);
        await engine.append(k, appendOf([userMsg("u1")]));
        const results = await Promise.allSettled(
          ["left", "right"].map((id) =>
            engine.append(k, appendOf([assistantMsg(id)], { expectedLeafId: "u1" })),
          ),
        );
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        const losers = results.filter((r) => r.status === "rejected");
        expect(losers).toHaveLength(1);
        expect(isSessiondError((losers[0] as PromiseRejectedResult).reason, "ABORTED")).toBe(true);
        await persisted(async (e) => {
          const all = await readAll(e, k);
          expect(all).toHaveLength(3);
          expectNoFork(all);
          expect(["left", "right"]).toContain(all[2]?.id);
        });
      });

      it("lets one of ten racing appends with the same expectedSeq win; no fork", async () => {
        const k = key("cas-race-seq");
        await createSession(k.sessionId);
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, (_, i) =>
            engine.append(
              k,
              appendOf([userMsg(`r${i}`), assistantMsg(`ra${i}`)], { expectedSeq: 1 }),
            ),
          ),
        );
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        for (const r of results) {
          if (r.status === "rejected") expect(isSessiondError(r.reason, "ABORTED")).toBe(true);
        }
        await persisted(async (e) => {
          const all = await readAll(e, k);
          expect(seqs(all)).toEqual([1, 2, 3]);
          expectNoFork(all);
        });
      });
    });

    describe("idempotent retries", () => {
      it("deduplicates a retried batch: same seqs, nothing written, also after the head moved", async () => {
        const k = key("retry");
        await createSession(k.sessionId);
        const batch = [userMsg("u1"), assistantMsg("a1", "ok", { toolCalls: ["c1"] })];
        const first = await engine.append(k, appendOf(batch));
        const again = await engine.append(k, appendOf(batch));
        expect(again.deduplicated).toBe(true);
        expect(again.write).toEqual([]);
        expect(seqs(again.entries)).toEqual([2, 3]);
        expectSameEntries(again.entries, first.entries);
        expect(again.headSeq).toBe(3);
        expect(again.leafId).toBe("a1");
        await engine.append(k, appendOf([userMsg("u2")]));
        await persisted(async (e) => {
          const retried = await e.append(k, appendOf(batch));
          expect(retried.deduplicated).toBe(true);
          expectSameEntries(retried.entries, first.entries);
          expect(retried.headSeq).toBe(4);
          expect(seqs(await readAll(e, k))).toEqual([1, 2, 3, 4]);
        });
      });

      it("refuses the same id with other content with ALREADY_EXISTS and writes nothing", async () => {
        const k = key("retry-conflict");
        await createSession(k.sessionId);
        const first = await engine.append(k, appendOf([userMsg("u1", "hello")]));
        const err = await expectCode(
          engine.append(k, appendOf([userMsg("u1", "something else")])),
          "ALREADY_EXISTS",
        );
        expect(err.message).toContain("u1");
        // A partial retry (a stored entry plus a new one) is not a retry either.
        await expectCode(
          engine.append(k, appendOf([userMsg("u1", "hello"), userMsg("n1")])),
          "ALREADY_EXISTS",
        );
        await persisted(async (e) => {
          const log = await e.load(k);
          expect(log.headSeq).toBe(2);
          expect(log.has("n1")).toBe(false);
          expectSameEntries([log.get("u1") as Entry], first.entries);
        });
      });
    });

    describe("rewind and reset", () => {
      it("rewind appends a Leaf entry, moves the leaf and persists", async () => {
        const k = key("rewinder");
        const root = await createSession(k.sessionId);
        await engine.append(
          k,
          appendOf([userMsg("u1"), assistantMsg("a1"), userMsg("u2"), assistantMsg("a2")]),
        );
        const r = await engine.append(k, rewindTo("a1"));
        expect(r.headSeq).toBe(6);
        expect(r.leafId).toBe("a1");
        expect(r.entries).toHaveLength(1);
        const leafEntry = r.entries[0] as Entry;
        expect(leafEntry.kind.case).toBe("leaf");
        expect(leafEntry.kind.value).toMatchObject({ leafId: "a1" });
        expect(leafEntry.parentId).toBe("a2");
        const branch = await engine.append(k, appendOf([userMsg("u3")]));
        expect(branch.entries[0]?.parentId).toBe("a1");
        expect(branch.headSeq).toBe(7);
        await persisted(async (e) => {
          const log = await e.load(k);
          expect(log.headSeq).toBe(7);
          expect(log.leafId).toBe("u3");
          expect(log.path().map((x) => x.id)).toEqual([root.id, "u1", "a1", "u3"]);
          const last = await e.read(k, 5, 1);
          expectSameEntries(last.entries, [leafEntry]);
        });
        // The leaf after a restart is the target of the last Leaf entry.
        const back = await engine.append(k, rewindTo("u2"));
        expect(back.headSeq).toBe(8);
        await persisted(async (e) => {
          const log = await e.load(k);
          expect(log.leafId).toBe("u2");
          expect(log.headSeq).toBe(8);
          const [rec] = await e.list(WS, [k.sessionId]);
          expect(rec?.leafId).toBe("u2");
        });
      });

      it("rewinds to a label and deduplicates a retried rewind", async () => {
        const k = key("rewind-label");
        await createSession(k.sessionId);
        await engine.append(
          k,
          appendOf([userMsg("u1"), labelEntry("l1", "checkpoint"), userMsg("u2")]),
        );
        const r = await engine.append(k, rewindTo("checkpoint", "move-1"));
        expect(r.leafId).toBe("l1");
        expect(r.headSeq).toBe(5);
        const retry = await engine.append(k, rewindTo("checkpoint", "move-1"));
        expect(retry.deduplicated).toBe(true);
        expect(retry.headSeq).toBe(5);
        await persisted(async (e) => {
          const log = await e.load(k);
          expect(log.leafId).toBe("l1");
          expect(log.headSeq).toBe(5);
        });
      });

      it("reset moves the leaf to the root and persists", async () => {
        const k = key("resetter");
        const root = await createSession(k.sessionId);
        await engine.append(k, appendOf([userMsg("u1"), assistantMsg("a1")]));
        const r = await engine.append(k, resetLeaf());
        expect(r.leafId).toBe(root.id);
        expect(r.headSeq).toBe(4);
        expect(r.entries[0]?.kind).toMatchObject({ case: "leaf", value: { leafId: root.id } });
        await persisted(async (e) => {
          const log = await e.load(k);
          expect(log.leafId).toBe(root.id);
          expect(log.headSeq).toBe(4);
          expect(log.path().map((x) => x.id)).toEqual([root.id]);
        });
        const next = await engine.append(k, appendOf([userMsg("fresh")]));
        expect(next.entries[0]?.parentId).toBe(root.id);
        expect(next.headSeq).toBe(5);
      });
    });

    describe("planner errors", () => {
      it("rejects with the planner's SessiondError; appends queued with it still succeed", async () => {
        const k = key("planner-error");
        await createSession(k.sessionId);
        const refusal = failedPrecondition(`session "${k.sessionId}": refused by planner`);
        const planners: Planner[] = Array.from({ length: 5 }, (_, i) =>
          i === 2
            ? () => {
                throw refusal;
              }
            : appendOf([userMsg(`q${i}`)]),
        );
        const results = await Promise.allSettled(planners.map((p) => engine.append(k, p)));
        const rejected = results[2] as PromiseSettledResult<unknown>;
        expect(rejected.status).toBe("rejected");
        const reason = (rejected as PromiseRejectedResult).reason;
        expect(isSessiondError(reason, "FAILED_PRECONDITION")).toBe(true);
        expect((reason as Error).message).toBe(refusal.message);
        const ok = results.filter((r) => r.status === "fulfilled");
        expect(ok).toHaveLength(4);
        await persisted(async (e) => {
          const all = await readAll(e, k);
          expect(seqs(all)).toEqual([1, 2, 3, 4, 5]);
          expect(sorted(all.slice(1).map((x) => x.id))).toEqual(["q0", "q1", "q3", "q4"]);
        });
      });

      it("survives a planner that throws a non-SessiondError", async () => {
        const k = key("planner-bug");
        await createSession(k.sessionId);
        const results = await Promise.allSettled([
          engine.append(k, appendOf([userMsg("before")])),
          engine.append(k, () => {
            throw new TypeError("planner bug");
          }),
          engine.append(k, appendOf([userMsg("after")])),
        ]);
        expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
        const next = await engine.append(k, appendOf([userMsg("later")]));
        expect(next.headSeq).toBe(4);
        expect(seqs(await readAll(engine, k))).toEqual([1, 2, 3, 4]);
      });
    });

    describe("listing and workspaces", () => {
      it("reports headSeq, leafId, messageCount, title, health and updatedAtMs", async () => {
        const a = key("listed-a");
        const b = key("listed-b");
        const rootA = await createSession(a.sessionId);
        const rootB = await createSession(b.sessionId);
        await engine.append(
          a,
          appendOf([
            userMsg("u1"),
            assistantMsg("a1"),
            modelChange("mc", "model-z"),
            create(EntrySchema, {
              id: "retitle",
              kind: { case: "sessionInfo", value: { title: "new title", formatVersion: 1 } },
            }),
          ]),
        );
        const moved = await engine.append(a, rewindTo("a1"));
        const lastA = moved.entries[0] as Entry;
        await persisted(async (e) => {
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
        for (const id of ["sub-a", "sub-b", "sub-c"]) await createSession(id);
        await persisted(async (e) => {
          const some = await e.list(WS, ["sub-c", "sub-a"]);
          expect(some.map((r) => r.sessionId).sort()).toEqual(["sub-a", "sub-c"]);
          const withUnknown = await e.list(WS, ["sub-b", "sub-missing"]);
          expect(withUnknown.map((r) => r.sessionId)).toEqual(["sub-b"]);
          expect(await e.list(WS, [])).toEqual([]);
        });
      });

      it("lists every session of a workspace; an unknown workspace is empty", async () => {
        const ids = Array.from({ length: 12 }, (_, i) => `many-${String(i).padStart(2, "0")}`);
        for (const id of ids) await createSession(id);
        await persisted(async (e) => {
          expect(sorted(await e.listIds(WS))).toEqual(ids);
          expect((await e.list(WS)).map((r) => r.sessionId).sort()).toEqual(ids);
          expect(await e.listIds("nowhere")).toEqual([]);
          expect(await e.list("nowhere")).toEqual([]);
        });
      });

      it("isolates workspaces: one session id in two workspaces is two sessions", async () => {
        expect(await engine.workspaces()).toEqual([]);
        const inA = key("shared-id", "team-a");
        const inB = key("shared-id", "team.b_2");
        const rootA = rootEntry(inA.sessionId, { id: "root-a", title: "A" });
        const rootB = rootEntry(inB.sessionId, { id: "root-b", title: "B" });
        await engine.create(inA, [rootA]);
        await engine.create(inB, [rootB]);
        await createSession("only-a", "team-a");
        await engine.append(inA, appendOf([userMsg("ua")]));
        // The same entry id in the other workspace's session is not a retry.
        const inBAppend = await engine.append(inB, appendOf([userMsg("ua", "different text")]));
        expect(inBAppend.deduplicated).toBe(false);
        await persisted(async (e) => {
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
        expect(await engine.delete(inB)).toBe(true);
        await persisted(async (e) => {
          expect(await e.workspaces()).toEqual(["team-a"]);
          expect((await e.load(inA)).headSeq).toBe(2);
          await expectCode(e.load(inB), "NOT_FOUND");
        });
      });
    });

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
          await engine.create(key(id), [root]);
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
        await engine.create(key("root-child"), [child]);
        await engine.create(key("root-grandchild"), [grandchild]);
        await engine.append(key("root-a"), appendOf([userMsg("u1"), assistantMsg("a1")]));
        await engine.append(key("root-child"), appendOf([userMsg("c1")]));
        await createSession("elsewhere", "other-ws");
        await persisted(async (e) => {
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
        await createSession("keep-1");
        await createSession("gone-1");
        expect((await rootsOf(engine)).map((r) => r.sessionId)).toEqual(["gone-1", "keep-1"]);
        expect(await engine.delete(key("gone-1"))).toBe(true);
        await createSession("new-1");
        const sub = rootEntry("new-sub", { parentSessionId: "keep-1", spawnDepth: 1 });
        await engine.create(key("new-sub"), [sub]);
        let listed = await rootsOf(engine);
        expect(listed.map((r) => r.sessionId)).toEqual(["keep-1", "new-1", "new-sub"]);
        expectRootOf(listed[2], sub, "keep-1");
        expect(sorted(await engine.listIds(WS))).toEqual(["keep-1", "new-1", "new-sub"]);
        expect(await engine.delete(key("new-sub"))).toBe(true);
        // Re-created under the same id: the new root, not the remembered one.
        expect(await engine.delete(key("keep-1"))).toBe(true);
        const again = rootEntry("keep-1", { id: "second-root", timestamp: ts(1_800_000_000) });
        await engine.create(key("keep-1"), [again]);
        await persisted(async (e) => {
          listed = await rootsOf(e);
          expect(listed.map((r) => r.sessionId)).toEqual(["keep-1", "new-1"]);
          expectRootOf(listed[0], again);
          expect(sorted(await e.listIds(WS))).toEqual(["keep-1", "new-1"]);
        });
      });

      it("sees the sessions another instance creates and deletes (a second process; skipped for engines that live in one process, like memory)", async (ctx) => {
        if (harness.sibling === undefined) ctx.skip();
        const other = await (harness.sibling as () => Promise<StorageEngine>)();
        await createSession("mine");
        expect((await rootsOf(engine)).map((r) => r.sessionId)).toEqual(["mine"]);
        expect(await engine.listIds("shared-ws")).toEqual([]);

        const theirs = rootEntry("theirs", { title: "made elsewhere" });
        await other.create(key("theirs"), [theirs]);
        const theirSub = rootEntry("their-sub", { parentSessionId: "mine", spawnDepth: 1 });
        await other.create(key("their-sub"), [theirSub]);
        await other.create(key("far", "shared-ws"), [rootEntry("far")]);
        let listed = await rootsOf(engine);
        expect(listed.map((r) => r.sessionId)).toEqual(["mine", "their-sub", "theirs"]);
        expectRootOf(listed[1], theirSub, "mine");
        expectRootOf(listed[2], theirs);
        expect(sorted(await engine.listIds(WS))).toEqual(["mine", "their-sub", "theirs"]);
        expect(await engine.listIds("shared-ws")).toEqual(["far"]);

        expect(await other.delete(key("theirs"))).toBe(true);
        expect(await other.delete(key("mine"))).toBe(true);
        expect((await rootsOf(engine)).map((r) => r.sessionId)).toEqual(["their-sub"]);
        expect(await engine.listIds(WS)).toEqual(["their-sub"]);

        // Long after the last change, so that nothing is "too recent to trust".
        await settle(250);
        expect(await engine.listIds(WS)).toEqual(["their-sub"]);
        await other.create(key("later"), [rootEntry("later")]);
        await other.create(key("later-sub"), [
          rootEntry("later-sub", { parentSessionId: "later" }),
        ]);
        listed = await rootsOf(engine);
        expect(listed.map((r) => r.sessionId)).toEqual(["later", "later-sub", "their-sub"]);
        expect(listed[1]?.parentSessionId).toBe("later");
        await settle(250);
        expect(await other.delete(key("later-sub"))).toBe(true);
        expect((await rootsOf(engine)).map((r) => r.sessionId)).toEqual(["later", "their-sub"]);
      });
    });

    describe("delete", () => {
      it("deletes one session; others (even with a prefix-sharing id) stay intact", async () => {
        for (const id of ["abcd", "abcd-1", "abcde", "other"]) {
          await createSession(id);
          await engine.append(key(id), appendOf([userMsg(`${id}-m`)]));
        }
        const child = key("abcd-sub");
        await engine.create(child, [rootEntry(child.sessionId, { parentSessionId: "abcd" })]);
        expect(await engine.delete(key("abcd"))).toBe(true);
        await persisted(async (e) => {
          const k = key("abcd");
          for (const err of [
            await expectCode(e.load(k), "NOT_FOUND"),
            await expectCode(e.read(k, 0, 10), "NOT_FOUND"),
            await expectCode(e.append(k, appendOf([userMsg("zombie")])), "NOT_FOUND"),
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
        expect(await engine.delete(child)).toBe(true);
        expect(sorted(await engine.listIds(WS))).toEqual(["abcd-1", "abcde", "other"]);
      });

      it("lets a deleted id be created again from scratch", async () => {
        const k = key("phoenix");
        await engine.create(k, [rootEntry(k.sessionId, { id: "old-root", title: "old" })]);
        await engine.append(k, appendOf([userMsg("o1"), userMsg("o2")]));
        expect(await engine.delete(k)).toBe(true);
        const fresh = rootEntry(k.sessionId, { id: "new-root", title: "new" });
        await engine.create(k, [fresh]);
        const r = await engine.append(k, appendOf([userMsg("o1", "new content")]));
        expect(r.deduplicated).toBe(false);
        expect(seqs(r.entries)).toEqual([2]);
        await persisted(async (e) => {
          const log = await e.load(k);
          expect(log.headSeq).toBe(2);
          expect(log.root.id).toBe("new-root");
          expect(log.title).toBe("new");
          expect(log.has("o2")).toBe(false);
          expectSameEntries(await readAll(e, k), [fresh, ...r.entries]);
        });
      });
    });

    describe("notifications", () => {
      it("announces created, appended and deleted after the data is readable", async () => {
        const k = key("watched");
        const events: StorageEvent[] = [];
        const checks: Promise<{ event: StorageEvent; headSeq: number; count: number }>[] = [];
        const current = engine;
        current.subscribe((event) => {
          events.push(event);
          if (event.type !== "deleted" && event.sessionId === k.sessionId) {
            checks.push(
              current
                .read(k, 0, 1_000_000)
                .then((p) => ({ event, headSeq: p.headSeq, count: p.entries.length })),
            );
          }
        });
        await createSession(k.sessionId);
        await engine.append(k, appendOf([userMsg("u1"), assistantMsg("a1")]));
        await engine.append(k, appendOf([userMsg("u2")]));
        await vi.waitFor(() => {
          expect(events.filter((e) => e.type === "appended").map((e) => e.headSeq)).toContain(4);
        });
        const mine = events.filter((e) => e.sessionId === k.sessionId);
        expect(mine[0]).toEqual({
          type: "created",
          workspace: WS,
          sessionId: k.sessionId,
          headSeq: 1,
        });
        const appended = mine.filter((e) => e.type === "appended");
        for (const e of appended) {
          expect(e).toMatchObject({ workspace: WS, sessionId: k.sessionId });
          expect(e.headSeq).toBeGreaterThanOrEqual(3);
          expect(e.headSeq).toBeLessThanOrEqual(4);
        }
        const heads = appended.map((e) => e.headSeq);
        expect(heads).toEqual([...heads].sort((x, y) => x - y));
        for (const c of await Promise.all(checks)) {
          expect(c.headSeq, `read() on a ${c.event.type} event`).toBeGreaterThanOrEqual(
            c.event.headSeq,
          );
          expect(c.count).toBeGreaterThanOrEqual(c.event.headSeq);
        }
        expect(checks.length).toBeGreaterThanOrEqual(2);
        await engine.delete(k);
        await vi.waitFor(() => {
          expect(events.at(-1)).toEqual({
            type: "deleted",
            workspace: WS,
            sessionId: k.sessionId,
            headSeq: 0,
          });
        });
      });

      it("stops announcing to an unsubscribed listener", async () => {
        const k = key("unsubscribed");
        const gone: StorageEvent[] = [];
        const kept: StorageEvent[] = [];
        const unsubscribe = engine.subscribe((e) => gone.push(e));
        engine.subscribe((e) => kept.push(e));
        await createSession(k.sessionId);
        await vi.waitFor(() => expect(gone.map((e) => e.type)).toContain("created"));
        unsubscribe();
        const before = gone.length;
        await engine.append(k, appendOf([userMsg("u1")]));
        await engine.delete(k);
        await vi.waitFor(() => expect(kept.map((e) => e.type)).toContain("deleted"));
        await settle();
        expect(gone.length).toBe(before);
      });

      it("does not let a throwing listener fail a change or starve other listeners", async () => {
        const k = key("noisy");
        const seen: StorageEvent[] = [];
        // The engine reports the bug as a process warning; capture it instead of printing it.
        const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
        onTestFinished(() => warn.mockRestore());
        engine.subscribe(() => {
          throw new Error("listener bug");
        });
        engine.subscribe((e) => seen.push(e));
        await createSession(k.sessionId);
        const r = await engine.append(k, appendOf([userMsg("u1")]));
        expect(r.headSeq).toBe(2);
        expect(await engine.delete(k)).toBe(true);
        await vi.waitFor(() =>
          expect(seen.map((e) => e.type)).toEqual(["created", "appended", "deleted"]),
        );
        expect(warn).toHaveBeenCalledWith(expect.stringContaining("storage listener failed"));
      });
    });

    describe("unknown sessions", () => {
      it("reports NOT_FOUND for load, read and append, naming the session", async () => {
        await createSession("exists");
        for (const k of [key("ghost-session"), key("ghost-session", "ghost-ws")]) {
          const errs = [
            await expectCode(engine.load(k), "NOT_FOUND"),
            await expectCode(engine.read(k, 0, 10), "NOT_FOUND"),
            await expectCode(engine.append(k, appendOf([userMsg("u1")])), "NOT_FOUND"),
            await expectCode(engine.append(k, resetLeaf()), "NOT_FOUND"),
          ];
          for (const err of errs) expect(err.message).toContain("ghost-session");
          expect(await engine.delete(k)).toBe(false);
        }
        expect(await engine.listIds(WS)).toEqual(["exists"]);
        expect(await engine.workspaces()).toEqual([WS]);
      });
    });

    describe("close", () => {
      it("finishes queued writes before closing", async () => {
        const k = key("closing");
        await createSession(k.sessionId);
        const pending = Array.from({ length: 20 }, (_, i) =>
          engine.append(k, appendOf([userMsg(`c${i}`)])),
        );
        const settled = Promise.allSettled(pending);
        if (harness.reopen !== undefined) {
          engine = await harness.reopen();
        } else {
          await engine.close();
        }
        const results = await settled;
        expect(results.map((r) => r.status)).toEqual(Array(20).fill("fulfilled"));
        if (harness.reopen !== undefined) {
          expect(seqs(await readAll(engine, k))).toEqual(
            Array.from({ length: 21 }, (_, i) => i + 1),
          );
        }
      });
    });
  });
}

/**
 * The optional capabilities of StorageEngine (`pageRoots`, `deleteMany`),
 * for the engines that have them; a test of a capability the engine lacks
 * is skipped. Same factory contract as `describeStorageConformance`.
 *
 * `pageRoots` is checked against the plain selection from `listRoots`
 * (`expectedRootPage`: what the store does without it) on the same data,
 * page after page to the end.
 */
export function describeCapabilityConformance(name: string, factory: ConformanceFactory): void {
  describe(`storage capabilities: ${name}`, () => {
    let harness: ConformanceHarness;
    let engine: StorageEngine;

    beforeEach(async () => {
      harness = await factory();
      engine = harness.engine;
    });

    afterEach(async () => {
      await harness.cleanup();
    });

    it("exists (when the engine has it): true for a session, false for a missing or deleted one", async () => {
      if (engine.exists === undefined) return;
      await engine.create(key("here"), [rootEntry("here")]);
      expect(await engine.exists(key("here"))).toBe(true);
      expect(await engine.exists(key("her"))).toBe(false);
      expect(await engine.exists({ workspace: "other-ws", sessionId: "here" })).toBe(false);
      expect(await engine.delete(key("here"))).toBe(true);
      expect(await engine.exists(key("here"))).toBe(false);
    });

    it("idsByRef (when the engine has it): the first ids in bytewise order that matchesSessionRef picks from listIds", async () => {
      if (engine.idsByRef === undefined) return;
      // Prefixes shared across ids and random parts, with characters whose
      // bytewise order differs from a locale's: case, '-', '_', digits.
      const ids = [
        "20260304-050607-0a1b2c3d",
        "20260304-050607-0a1bffff",
        "20260305-000000-2026abcd",
        "20260306-111111-abcdef01",
        "20260306-111111-ABCDEF01",
        "0a1b-client",
        "0a1b_client",
        "0a1bZ",
        "0a1B",
        "team-0a1b2c3d",
        "abcd",
        "abcd-e",
      ];
      for (const id of ids) await engine.create(key(id), [rootEntry(id)]);
      await engine.create(key("0a1b9999", "other-ws"), [rootEntry("0a1b9999")]);
      const refs = ["0a1b", "0a1b2", "0a1bf", "2026", "20260306", "abcd", "abcdef01", "ABCD"];
      refs.push("0a1b_", "0a1b-", "0a1B", "team", "0506", "ffff", "20260304-050607-0a1b2c3d");
      const all = await engine.listIds(WS);
      for (const ref of refs) {
        const wanted = all.filter((id) => matchesSessionRef(id, ref)).sort();
        for (const limit of [1, 2, 6]) {
          expect(await engine.idsByRef(WS, ref, limit), `${ref} limit ${limit}`).toEqual(
            wanted.slice(0, limit),
          );
        }
      }
    });

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
        await engine.create(key(id), [rootEntry(id, { timestamp })]);
      }
      for (const [parent, n] of [
        ["a-1", 12],
        ["B2", 5],
      ] as const) {
        parents.push(parent);
        for (let i = 0; i < n; i++) {
          const id = `${parent}-sub_${(i * 7) % n}`;
          const timestamp = ts(1_767_225_600 + (i % 3), 0);
          await engine.create(key(id), [rootEntry(id, { parentSessionId: parent, timestamp })]);
        }
      }
      await engine.create(key("a-1-sub_0-sub"), [
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
      if (engine.pageRoots === undefined) ctx.skip();
      const parents = await population();
      const roots = await engine.listRoots(WS);
      for (const order of ["desc", "asc"] as const) {
        for (const parentSessionId of ["", ...parents, "nobody"]) {
          const whole = expectedRootPage(roots, { parentSessionId, order, limit: 1_000 });
          for (const limit of [2, 7, 1_000]) {
            const seen = await pageThrough(engine, { parentSessionId, order, limit });
            expect(summary(seen), `${order} ${parentSessionId} by ${limit}`).toEqual(
              summary(whole),
            );
          }
        }
      }
      // The data covers what it should: a creation time before 1970 first.
      const oldest = expectedRootPage(roots, { parentSessionId: "", order: "asc", limit: 1 });
      expect(summary(oldest)).toEqual(["A4 @-86400000 parent= ok root=root-A4"]);
    });

    it("pageRoots: sessions deleted and created between pages, the previous page's last one too", async (ctx) => {
      if (engine.pageRoots === undefined) ctx.skip();
      await population();
      for (const order of ["desc", "asc"] as const) {
        let made = 0;
        const q = { parentSessionId: "", order, limit: 5 };
        const seen = await pageThrough(engine, q, async (after) => {
          // The keyset anchor (the last session handed out) goes, and one
          // session on each side of it; new ones land on both sides too.
          const current = expectedRootPage(await engine.listRoots(WS), { ...q, limit: 1_000 });
          const gone = new Set([after.id, current[0]?.sessionId, current.at(-1)?.sessionId]);
          for (const id of gone) {
            if (id !== undefined) expect(await engine.delete(key(id))).toBe(true);
          }
          for (const seconds of [1_767_225_600, 1_767_225_660, 1_767_225_900]) {
            const id = `late-${order}-${made++}`;
            await engine.create(key(id), [rootEntry(id, { timestamp: ts(seconds, 0) })]);
          }
        });
        // Nothing handed out twice, and every page was checked against listRoots.
        const ids = seen.map((r) => r.sessionId);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.length).toBeGreaterThan(20);
      }
    });

    it("pageRoots: an unknown workspace or parent gives an empty page", async (ctx) => {
      if (engine.pageRoots === undefined) ctx.skip();
      await population();
      for (const order of ["desc", "asc"] as const) {
        const q = { parentSessionId: "", order, limit: 10 };
        expect(await engine.pageRoots?.("nowhere", q)).toEqual([]);
        expect(await engine.pageRoots?.(WS, { ...q, parentSessionId: "A0" })).toEqual([]);
      }
    });

    it("deleteMany: removes the sessions at once, returns those that existed in the order given, announces each", async (ctx) => {
      if (engine.deleteMany === undefined) ctx.skip();
      for (const id of ["parent", "bystander"]) await engine.create(key(id), [rootEntry(id)]);
      await engine.create(key("child"), [rootEntry("child", { parentSessionId: "parent" })]);
      await engine.create(key("grandchild"), [
        rootEntry("grandchild", { parentSessionId: "child" }),
      ]);
      await engine.append(key("child"), appendOf([userMsg("c1")]));
      await engine.create(key("parent", "elsewhere"), [rootEntry("parent")]);
      const events: StorageEvent[] = [];
      const off = engine.subscribe((e) => events.push(e));
      const removed = await engine.deleteMany?.(WS, [
        "parent",
        "missing",
        "child",
        "grandchild",
        "child",
      ]);
      expect(removed).toEqual(["parent", "child", "grandchild"]);
      for (const id of ["parent", "child", "grandchild"]) {
        await expectCode(engine.load(key(id)), "NOT_FOUND");
      }
      expect(
        events.filter((e) => e.type === "deleted").map((e) => `${e.workspace}/${e.sessionId}`),
      ).toEqual(["default/parent", "default/child", "default/grandchild"]);
      off();
      expect(await engine.deleteMany?.(WS, ["parent", "child"])).toEqual([]);
      expect(await engine.deleteMany?.(WS, [])).toEqual([]);
      const check = async (e: StorageEngine) => {
        expect(await e.listIds(WS)).toEqual(["bystander"]);
        expect(await e.listIds("elsewhere")).toEqual(["parent"]);
      };
      await check(engine);
      if (harness.reopen !== undefined) {
        engine = await harness.reopen();
        await check(engine);
      }
      // A deleted id can be created again.
      await engine.create(key("child"), [rootEntry("child", { id: "new-root" })]);
      expect((await engine.load(key("child"))).headSeq).toBe(1);
    });
  });
}
