import { toBinary } from "@bufbuild/protobuf";
import { type Timestamp, timestampMs } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import type postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { Health, type SessionMeta } from "../../gen/sessiond/v1/session_pb.js";
import { assistant, compaction, expectCode, label, user } from "../../test/support/fixtures.js";
import { openPostgres, pgSkip, STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { shortId } from "../core/ids.js";
import type { StorageEngine, StorageEvent } from "../storage/engine.js";
import { PostgresEngine, type PostgresEngineOptions } from "../storage/postgres/index.js";
import { encodePageToken } from "./page-token.js";
import { SessionStore, type StoreOptions } from "./session-store.js";
import { smallest } from "./top-k.js";

const T0 = Date.UTC(2026, 2, 4, 5, 6, 7);
const BAD_SESSION_IDS = ["../x", "a/b", ".hidden", "", "a".repeat(200), "a\u0000b"];
const BAD_WORKSPACES = ["../x", "a/b", ".hidden", "a".repeat(200), "a\u0000b"];

function bytesOf(entries: readonly Entry[]): string[] {
  return entries.map((e) => Buffer.from(toBinary(EntrySchema, e)).toString("hex"));
}

// The whole store suite runs on PostgreSQL too (it has the optional engine
// capabilities, pageRoots and deleteMany, that memory and JSONL lack or only
// partly have), plus the tests of its SQL paths at the end.

describe.each(STORE_ENGINE_FACTORIES)("SessionStore on $name", (factory) => {
  let fixture: EngineFixture;
  let clockMs: number;
  let store: SessionStore;

  function newStore(options: StoreOptions = {}): SessionStore {
    return new SessionStore(fixture.engine, { now: () => new Date(clockMs), ...options });
  }

  /** Advances the pinned clock, so that the next session is strictly newer. */
  function tick(seconds = 1): void {
    clockMs += seconds * 1000;
  }

  async function createMany(n: number, workspace?: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push((await store.create({ workspace, title: `s${i}` })).session.id);
      tick();
    }
    return ids;
  }

  async function allEntries(ref: string, workspace?: string): Promise<Entry[]> {
    return (await (await store.open(workspace, ref)).entries(0, 1000)).entries;
  }

  beforeEach(async () => {
    fixture = await factory.open();
    clockMs = T0;
    store = newStore();
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  describe("create", () => {
    it("generates a UTC, time-sortable id from the clock", async () => {
      const first = await store.create();
      expect(first.created).toBe(true);
      expect(first.session.id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/);
      expect(first.session.id.startsWith("20260304-050607-")).toBe(true);
      clockMs = Date.UTC(2026, 2, 4, 23, 59, 58);
      const later = await store.create();
      expect(later.session.id.startsWith("20260304-235958-")).toBe(true);
      expect(later.session.id > first.session.id).toBe(true);
    });

    it("keeps a client-chosen id and puts the session in the default workspace", async () => {
      const { session, created } = await store.create({ sessionId: "my-session_1", title: "T" });
      expect(created).toBe(true);
      expect(session.id).toBe("my-session_1");
      expect(session.workspace).toBe("default");
      expect(session.title).toBe("T");
      expect(session.headSeq).toBe(1n);
      expect(await fixture.engine.listIds("default")).toEqual(["my-session_1"]);
    });

    it("is idempotent: the same id and parameters return the existing session", async () => {
      const params = { sessionId: "idem", title: "T", cwd: "/w", metadata: { a: 1, b: ["x"] } };
      const first = await store.create(params);
      tick(60);
      const again = await store.create(params);
      expect(again.created).toBe(false);
      expect(again.session).toEqual(first.session);
      expect(await fixture.engine.listIds("default")).toEqual(["idem"]);
    });

    it.each([
      ["title", { title: "other" }],
      ["cwd", { cwd: "/elsewhere" }],
      ["metadata", { metadata: { a: 2, b: ["x"] } }],
    ])("fails with ALREADY_EXISTS for the same id with another %s", async (_, change) => {
      const params = { sessionId: "idem", title: "T", cwd: "/w", metadata: { a: 1, b: ["x"] } };
      const first = await store.create(params);
      await expectCode(() => store.create({ ...params, ...change }), "ALREADY_EXISTS", '"idem"');
      expect(await store.get(undefined, "idem")).toEqual(first.session);
    });

    it.each(BAD_SESSION_IDS.map((id) => [JSON.stringify(id).slice(0, 20), id]))(
      "rejects the session id %s with INVALID_ARGUMENT and creates nothing",
      async (_, id) => {
        await store.create({ sessionId: "existing" });
        await expectCode(() => store.create({ sessionId: id }), "INVALID_ARGUMENT");
        expect(await fixture.engine.listIds("default")).toEqual(["existing"]);
        expect(await fixture.engine.workspaces()).toEqual(["default"]);
      },
    );

    it.each(BAD_WORKSPACES.map((ws) => [JSON.stringify(ws).slice(0, 20), ws]))(
      "rejects the workspace %s with INVALID_ARGUMENT and creates nothing",
      async (_, ws) => {
        await expectCode(() => store.create({ workspace: ws }), "INVALID_ARGUMENT");
        await expectCode(() => store.list({ workspace: ws }), "INVALID_ARGUMENT");
        expect(await fixture.engine.workspaces()).toEqual([]);
      },
    );

    it("treats an empty workspace as the default one", async () => {
      const { session } = await store.create({ workspace: "", sessionId: "s1" });
      expect(session.workspace).toBe("default");
      expect((await store.get("default", "s1")).id).toBe("s1");
    });

    it("keeps workspaces apart: one id may exist in two workspaces", async () => {
      await store.create({ workspace: "team-a", sessionId: "shared", title: "A" });
      const b = await store.create({ workspace: "team-b", sessionId: "shared", title: "B" });
      expect(b.created).toBe(true);
      await (await store.open("team-a", "shared")).append(user("u1", "only in A"));
      expect((await store.get("team-a", "shared")).headSeq).toBe(2n);
      expect((await store.get("team-b", "shared")).headSeq).toBe(1n);
      expect((await store.get("team-b", "shared")).title).toBe("B");
    });

    it("refuses a subagent of a missing parent with NOT_FOUND and creates nothing", async () => {
      await expectCode(
        () => store.create({ sessionId: "child", parentSessionId: "ghost", agentType: "x" }),
        "NOT_FOUND",
        '"ghost"',
      );
      expect(await fixture.engine.listIds("default")).toEqual([]);
    });

    it("refuses a subagent whose parent lives in another workspace", async () => {
      await store.create({ workspace: "other", sessionId: "parent" });
      await expectCode(
        () => store.create({ sessionId: "child", parentSessionId: "parent" }),
        "NOT_FOUND",
      );
      expect(await fixture.engine.listIds("default")).toEqual([]);
    });
  });

  describe("resolve and get", () => {
    beforeEach(async () => {
      for (const sessionId of ["abcd", "abcd-long", "zeta-1", "zeta-2", "unique-one"]) {
        await store.create({ sessionId });
      }
    });

    it("finds a session by its full id", async () => {
      expect(await store.resolve(undefined, "unique-one")).toEqual({
        workspace: "default",
        sessionId: "unique-one",
      });
      expect((await store.get(undefined, "zeta-1")).id).toBe("zeta-1");
    });

    it("finds a session by a unique prefix of at least 4 characters", async () => {
      expect((await store.get(undefined, "uniq")).id).toBe("unique-one");
      expect((await store.open(undefined, "abcd-")).id).toBe("abcd-long");
    });

    it("refuses a 3-character prefix with INVALID_ARGUMENT", async () => {
      await expectCode(() => store.get(undefined, "uni"), "INVALID_ARGUMENT", '"uni"');
    });

    it("finds a client-chosen full id shorter than the minimum prefix", async () => {
      await store.create({ sessionId: "ab" });
      await store.create({ sessionId: "abc" });
      expect((await store.get(undefined, "ab")).id).toBe("ab");
      expect((await store.open(undefined, "abc")).id).toBe("abc");
      expect(await store.delete(undefined, "abc")).toEqual(["abc"]);
    });

    it("answers NOT_FOUND when nothing matches", async () => {
      await expectCode(() => store.get(undefined, "nothing"), "NOT_FOUND", '"nothing"');
    });

    it("answers FAILED_PRECONDITION naming the candidates of an ambiguous prefix", async () => {
      await expectCode(
        () => store.get(undefined, "zeta"),
        "FAILED_PRECONDITION",
        "zeta-1",
        "zeta-2",
      );
    });

    it("prefers an exact id over a longer id it prefixes", async () => {
      expect((await store.get(undefined, "abcd")).id).toBe("abcd");
    });

    it("does not see sessions of another workspace", async () => {
      await store.create({ workspace: "elsewhere", sessionId: "hidden-session" });
      await expectCode(() => store.get(undefined, "hidden-session"), "NOT_FOUND");
      await expectCode(() => store.get("elsewhere", "unique-one"), "NOT_FOUND");
      await expectCode(() => store.open(undefined, "hidden"), "NOT_FOUND");
    });

    it.each(BAD_SESSION_IDS.map((id) => [JSON.stringify(id).slice(0, 20), id]))(
      "rejects the reference %s with INVALID_ARGUMENT",
      async (_, ref) => {
        await expectCode(() => store.get(undefined, ref), "INVALID_ARGUMENT");
      },
    );
  });

  describe("short ids", () => {
    // Client-chosen ids in the generated shape are generated ids to the
    // store (shortId goes by the shape): they give fixed random parts.
    const A = "20260304-050607-0a1b2c3d";
    const B = "20260304-050607-ffee0011";

    it("finds a generated session by a unique prefix of its random part", async () => {
      for (const sessionId of [A, B]) await store.create({ sessionId });
      expect((await store.get(undefined, "0a1b")).id).toBe(A);
      expect((await store.get(undefined, "ffee0011")).id).toBe(B);
      expect((await store.open(undefined, "ffee")).id).toBe(B);
      expect(await store.delete(undefined, "0a1b2c")).toEqual([A]);
    });

    it("finds each of 30 sessions generated in the same second by the short id", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) ids.push((await store.create()).session.id);
      expect(new Set(ids.map((id) => id.slice(0, 16))).size).toBe(1);
      for (const id of ids) expect((await store.get(undefined, shortId(id))).id).toBe(id);
    });

    it("answers FAILED_PRECONDITION naming both when one id's prefix is another's short-id prefix", async () => {
      const other = "20250101-000000-2026abcd";
      for (const sessionId of [A, other]) await store.create({ sessionId });
      await expectCode(() => store.get(undefined, "2026"), "FAILED_PRECONDITION", A, other);
      expect((await store.get(undefined, "2026a")).id).toBe(other);
    });

    it("answers FAILED_PRECONDITION naming both when two short ids share the prefix", async () => {
      const twin = "20260305-101010-0a1b9999";
      for (const sessionId of [A, B, twin]) await store.create({ sessionId });
      await expectCode(() => store.get(undefined, "0a1b"), "FAILED_PRECONDITION", A, twin);
      expect((await store.get(undefined, "0a1b9")).id).toBe(twin);
    });

    it("names the first 5 candidates in id order and marks that there are more", async () => {
      const ids = ["a", "b", "c", "d", "e", "f", "g"].map((c) => `20260304-0506${c}0-x`);
      for (const sessionId of [...ids].reverse()) await store.create({ sessionId });
      const err = await expectCode(() => store.get(undefined, "2026"), "FAILED_PRECONDITION");
      expect(err.message).toContain(`it matches ${ids.slice(0, 5).join(", ")}, …`);
    });

    it("prefers an exact client-chosen id over a short id it prefixes", async () => {
      for (const sessionId of ["0a1b", A]) await store.create({ sessionId });
      expect((await store.get(undefined, "0a1b")).id).toBe("0a1b");
      expect((await store.get(undefined, "0a1b2")).id).toBe(A);
    });

    it("does not match the middle of an id or the tail of a client-chosen id", async () => {
      for (const sessionId of [A, "team-0a1b2c3d"]) await store.create({ sessionId });
      await expectCode(() => store.get(undefined, "0506"), "NOT_FOUND", '"0506"');
      expect((await store.get(undefined, "0a1b")).id).toBe(A);
      await expectCode(() => store.get(undefined, "2c3d"), "NOT_FOUND");
    });

    it("keeps short-id matches inside the workspace", async () => {
      await store.create({ workspace: "elsewhere", sessionId: A });
      await expectCode(() => store.get(undefined, "0a1b"), "NOT_FOUND");
      expect((await store.get("elsewhere", "0a1b")).id).toBe(A);
    });
  });

  describe("missing arguments", () => {
    it.each([
      ["get", () => store.get(undefined, "")],
      ["open", () => store.open(undefined, "")],
      ["delete", () => store.delete(undefined, "")],
      ["fork", () => store.fork(undefined, "")],
    ] as const)("%s of an empty session says 'session is required'", async (_, call) => {
      await store.create({ sessionId: "some-session" });
      const err = await expectCode(call, "INVALID_ARGUMENT");
      expect(err.message).toMatch(/^session is required/);
    });

    it("rewind with an empty target says 'target is required' and writes nothing", async () => {
      await store.create({ sessionId: "s1" });
      const s = await store.open(undefined, "s1");
      await s.append(user("u1", "hi"));
      const err = await expectCode(() => s.rewind(""), "INVALID_ARGUMENT");
      expect(err.message).toMatch(/^target is required/);
      expect((await s.meta()).headSeq).toBe(2n);
    });

    it("an append error names the entry without id by its position in the batch", async () => {
      await store.create({ sessionId: "s1" });
      const s = await store.open(undefined, "s1");
      const roleless = user("", "no role");
      if (roleless.kind.case === "message") roleless.kind.value.role = 0;
      const err = await expectCode(
        () => s.append([user("", "fine"), roleless]),
        "INVALID_ARGUMENT",
      );
      expect(err.message).toBe("entries[1]: message role is not set");
      expect((await s.meta()).headSeq).toBe(1n);
    });
  });

  describe("list", () => {
    it("lists newest first by default and oldest first on request", async () => {
      const ids = await createMany(5);
      const newest = await store.list();
      expect(newest.sessions.map((s) => s.id)).toEqual([...ids].reverse());
      expect(newest.nextPageToken).toBe("");
      const oldest = await store.list({ order: "oldest" });
      expect(oldest.sessions.map((s) => s.id)).toEqual(ids);
    });

    it.each([
      ["newest", false],
      ["oldest", false],
      ["newest", true],
      ["oldest", true],
    ] as const)(
      "pages %s (same creation time: %s) through 25 sessions, each exactly once",
      async (order, sameTime) => {
        const ids: string[] = [];
        for (let i = 0; i < 25; i++) {
          ids.push((await store.create({ sessionId: `s-${(i * 7) % 25}` })).session.id);
          if (!sameTime) tick();
        }
        const expected = (await store.list({ order, pageSize: 100 })).sessions.map((s) => s.id);
        const byTime = order === "oldest" ? ids : [...ids].reverse();
        const byId = [...ids].sort();
        expect(expected).toEqual(sameTime ? (order === "oldest" ? byId : byId.reverse()) : byTime);

        const seen: string[] = [];
        const sizes: number[] = [];
        let token = "";
        do {
          const page = await store.list({ order, pageSize: 10, pageToken: token });
          sizes.push(page.sessions.length);
          seen.push(...page.sessions.map((s) => s.id));
          token = page.nextPageToken;
        } while (token !== "");
        expect(sizes).toEqual([10, 10, 5]);
        expect(seen).toEqual(expected);
      },
    );

    it("pages 120 sessions with ties and subagents mixed in: each exactly once, in order", async () => {
      const top: { id: string; ms: number }[] = [];
      for (let i = 0; i < 120; i++) {
        const id = `p-${(i * 37) % 120}`;
        await store.create({ sessionId: id });
        top.push({ id, ms: clockMs });
        if (i % 3 === 2) tick();
        if (i % 10 === 0) await store.create({ sessionId: `sub-${i}`, parentSessionId: id });
      }
      const key = (a: { id: string; ms: number }, b: { id: string; ms: number }) =>
        a.ms - b.ms || (a.id < b.id ? -1 : 1);
      const oldest = [...top].sort(key).map((s) => s.id);
      for (const [order, expected] of [
        ["oldest", oldest],
        ["newest", [...oldest].reverse()],
      ] as const) {
        const seen: string[] = [];
        let token = "";
        do {
          const page = await store.list({ order, pageSize: 7, pageToken: token });
          expect(page.sessions.length).toBeLessThanOrEqual(7);
          seen.push(...page.sessions.map((s) => s.id));
          token = page.nextPageToken;
        } while (token !== "");
        expect(seen).toEqual(expected);
      }
      const subs = (await store.list({ parentSessionId: "p-0", pageSize: 100 })).sessions;
      expect(subs.map((s) => s.id)).toEqual(["sub-0"]);
    });

    it("sees a session created after the first page on the next page, in order", async () => {
      await createMany(3);
      const first = await store.list({ order: "oldest", pageSize: 2 });
      const late = (await store.create({ sessionId: "late" })).session.id;
      const second = await store.list({
        order: "oldest",
        pageSize: 2,
        pageToken: first.nextPageToken,
      });
      expect(second.sessions.map((s) => s.id)).toContain(late);
    });

    it("rejects a garbage page token with INVALID_ARGUMENT", async () => {
      await createMany(3);
      for (const token of ["garbage!", "bm90IGpzb24", Buffer.from("[1,2]").toString("base64url")]) {
        await expectCode(() => store.list({ pageToken: token }), "INVALID_ARGUMENT", "page_token");
      }
    });

    it("rejects a well-formed page token with a key no listing issues", async () => {
      await createMany(3);
      for (const [createdMs, id] of [
        [T0 + 0.5, "s-1"],
        [T0, "../x"],
        [T0, "a\u0000b"],
        [T0, ""],
      ] as const) {
        const pageToken = encodePageToken({ createdMs, id, order: "desc", parent: "" });
        await expectCode(() => store.list({ pageToken }), "INVALID_ARGUMENT", "page_token");
      }
    });

    it("rejects a page token reused with another order or parent", async () => {
      const [parent] = await createMany(3);
      const { nextPageToken } = await store.list({ pageSize: 1 });
      expect(nextPageToken).not.toBe("");
      await expectCode(
        () => store.list({ pageSize: 1, pageToken: nextPageToken, order: "oldest" }),
        "INVALID_ARGUMENT",
      );
      await expectCode(
        () => store.list({ pageSize: 1, pageToken: nextPageToken, parentSessionId: parent }),
        "INVALID_ARGUMENT",
      );
    });

    it("rejects a page size over the maximum with INVALID_ARGUMENT", async () => {
      store = newStore({ limits: { maxPageSize: 50 } });
      await createMany(2);
      expect((await store.list({ pageSize: 50 })).sessions).toHaveLength(2);
      await expectCode(() => store.list({ pageSize: 51 }), "INVALID_ARGUMENT", "51");
      await expectCode(() => store.list({ pageSize: -1 }), "INVALID_ARGUMENT");
    });

    it("uses the default page size when none is given", async () => {
      store = newStore({ limits: { defaultPageSize: 3 } });
      await createMany(5);
      const page = await store.list();
      expect(page.sessions).toHaveLength(3);
      expect(page.nextPageToken).not.toBe("");
    });

    it("shows top-level sessions only, and a parent's subagents when asked", async () => {
      const [top, other] = await createMany(2);
      const parent = top as string;
      const child = (await store.create({ parentSessionId: parent, agentType: "researcher" }))
        .session;
      tick();
      const grandchild = (
        await store.create({ parentSessionId: child.id, agentType: "reader", sessionId: "gc" })
      ).session;
      const sibling = (await store.create({ parentSessionId: parent, sessionId: "sib" })).session;

      expect((await store.list({ order: "oldest" })).sessions.map((s) => s.id)).toEqual([
        parent,
        other,
      ]);
      const children = (await store.list({ parentSessionId: parent, order: "oldest" })).sessions;
      expect(children.map((s) => s.id)).toEqual([child.id, sibling.id]);
      expect((await store.list({ parentSessionId: child.id })).sessions.map((s) => s.id)).toEqual([
        "gc",
      ]);
      expect((await store.list({ parentSessionId: other as string })).sessions).toEqual([]);

      expect(child.spawnDepth).toBe(1);
      expect(child.parentSessionId).toBe(parent);
      expect(child.agentType).toBe("researcher");
      expect(grandchild.spawnDepth).toBe(2);
      expect(grandchild.parentSessionId).toBe(child.id);
      expect((await store.get(undefined, parent)).spawnDepth).toBe(0);
    });

    it("keeps a subagent's entries out of its parent's log", async () => {
      await store.create({ sessionId: "parent" });
      await store.create({ sessionId: "child", parentSessionId: "parent" });
      await (await store.open(undefined, "child")).append([
        user("c1", "sub"),
        assistant("c2", "ok"),
      ]);
      expect((await store.get(undefined, "parent")).headSeq).toBe(1n);
      expect((await store.get(undefined, "child")).headSeq).toBe(3n);
    });

    it("carries counts, leaf, title and health in each meta", async () => {
      await store.create({ sessionId: "counted", title: "Counting" });
      const s = await store.open(undefined, "counted");
      await s.append([user("u1", "q"), assistant("a1", "a"), label("l1", "done")]);
      const [meta] = (await store.list()).sessions as [SessionMeta];
      expect(meta.id).toBe("counted");
      expect(meta.entryCount).toBe(4n);
      expect(meta.messageCount).toBe(2n);
      expect(meta.headSeq).toBe(4n);
      expect(meta.leafId).toBe("l1");
      expect(meta.title).toBe("Counting");
      expect(meta.health).toBe(Health.OK);
      expect(await store.get(undefined, "counted")).toEqual(meta);
    });

    it("shows the newest SessionInfo title of the log", async () => {
      await store.create({ sessionId: "renamed", title: "old" });
      await (await store.open(undefined, "renamed")).append({
        id: "rename",
        kind: { case: "sessionInfo", value: { title: "new" } },
      });
      expect((await store.get(undefined, "renamed")).title).toBe("new");
    });

    it("lists only the asked workspace", async () => {
      await store.create({ workspace: "a", sessionId: "in-a" });
      await store.create({ workspace: "b", sessionId: "in-b" });
      expect((await store.list({ workspace: "a" })).sessions.map((s) => s.id)).toEqual(["in-a"]);
      expect((await store.list()).sessions).toEqual([]);
    });
  });

  describe("delete", () => {
    async function family(): Promise<void> {
      await store.create({ sessionId: "parent" });
      await store.create({ sessionId: "child", parentSessionId: "parent" });
      await store.create({ sessionId: "grandchild", parentSessionId: "child" });
      await store.create({ sessionId: "bystander" });
    }

    it("deletes only the session itself by default, leaving its subagents", async () => {
      await family();
      expect(await store.delete(undefined, "parent")).toEqual(["parent"]);
      await expectCode(() => store.get(undefined, "parent"), "NOT_FOUND");
      expect((await fixture.engine.listIds("default")).sort()).toEqual([
        "bystander",
        "child",
        "grandchild",
      ]);
      expect((await store.list({ parentSessionId: "child" })).sessions.map((s) => s.id)).toEqual([
        "grandchild",
      ]);
    });

    it("deletes subagents recursively when asked and returns every deleted id", async () => {
      await family();
      const deleted = await store.delete(undefined, "parent", { includeSubagents: true });
      expect([...deleted].sort()).toEqual(["child", "grandchild", "parent"]);
      for (const id of deleted) await expectCode(() => store.get(undefined, id), "NOT_FOUND");
      expect(await fixture.engine.listIds("default")).toEqual(["bystander"]);
    });

    it("resolves a prefix and answers NOT_FOUND for a missing session", async () => {
      await family();
      expect(await store.delete(undefined, "byst")).toEqual(["bystander"]);
      await expectCode(() => store.delete(undefined, "bystander"), "NOT_FOUND");
    });
  });

  describe("fork", () => {
    /**
     *   root ─ u1 ─ a1 ─ mark ─ u2 ─ a2 ─ c1 ─ u3        (c1 compacts u1, a1)
     *                     └─ x1                          (current path)
     */
    async function source(): Promise<string> {
      await store.create({ sessionId: "src", title: "Source", cwd: "/src", metadata: { k: "v" } });
      const s = await store.open(undefined, "src");
      await s.append([
        user("u1", "first question"),
        assistant("a1", "first answer"),
        label("mark", "checkpoint"),
        user("u2", "second question"),
        assistant("a2", "second answer"),
        compaction("c1", "talked about the first question", ["u1", "a1"]),
        user("u3", "third question"),
      ]);
      await s.rewind("checkpoint", { allowBeforeCompaction: true });
      await s.append(user("x1", "another branch"));
      return "src";
    }

    it("copies exactly the path to the entry after a new SessionInfo that records the source", async () => {
      await source();
      const meta = await store.fork(undefined, "src", { entry: "u3" });
      expect(meta.forkedFrom).toMatchObject({ sessionId: "src", entryId: "u3" });
      expect(meta.title).toBe("Source");
      expect(meta.spawnDepth).toBe(0);
      const entries = await allEntries(meta.id);
      const [root, ...copies] = entries as [Entry, ...Entry[]];
      expect(root.parentId).toBeUndefined();
      expect(root.kind.case).toBe("sessionInfo");
      if (root.kind.case === "sessionInfo") {
        expect(root.kind.value.sessionId).toBe(meta.id);
        expect(root.kind.value.forkedFrom).toMatchObject({ sessionId: "src", entryId: "u3" });
        expect(root.kind.value.cwd).toBe("/src");
      }
      expect(copies.map((e) => e.id)).toEqual(["u1", "a1", "mark", "u2", "a2", "c1", "u3"]);
      expect(copies.map((e) => e.parentId)).toEqual([
        root.id,
        "u1",
        "a1",
        "mark",
        "u2",
        "a2",
        "c1",
      ]);
      expect(entries.map((e) => e.seq)).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n]);
      expect(meta.headSeq).toBe(8n);
      expect(meta.leafId).toBe("u3");
      const srcEntries = await allEntries("src");
      for (const copy of copies.slice(1)) {
        const original = srcEntries.find((e) => e.id === copy.id) as Entry;
        expect(copy.kind).toEqual(original.kind);
      }
    });

    it("a retried fork with the same new id is idempotent; another fork point is ALREADY_EXISTS", async () => {
      await source();
      const first = await store.fork(undefined, "src", { entry: "u3", sessionId: "fork-retry" });
      const again = await store.fork(undefined, "src", { entry: "u3", sessionId: "fork-retry" });
      expect(again.id).toBe(first.id);
      expect(again.headSeq).toBe(first.headSeq);
      await expectCode(
        () => store.fork(undefined, "src", { entry: "a2", sessionId: "fork-retry" }),
        "ALREADY_EXISTS",
      );
      expect((await store.get(undefined, "fork-retry")).headSeq).toBe(first.headSeq);
    });

    it("a fork's updated_at is not before its created_at, though its copies keep older timestamps", async () => {
      await source();
      tick(3600);
      const meta = await store.fork(undefined, "src", { entry: "u3" });
      expect(timestampMs(meta.createdAt as Timestamp)).toBe(clockMs);
      expect(timestampMs(meta.updatedAt as Timestamp)).toBe(clockMs);
      const listed = (await store.list()).sessions.find((m) => m.id === meta.id);
      expect(timestampMs(listed?.updatedAt as Timestamp)).toBe(clockMs);
    });

    it("takes the title that is current on the forked path, not a newer one from another branch", async () => {
      await source();
      const s = await store.open(undefined, "src");
      await s.append({
        id: "retitle",
        kind: { case: "sessionInfo", value: { title: "Renamed on x1" } },
      });
      expect((await store.fork(undefined, "src", { entry: "u3" })).title).toBe("Source");
      expect((await store.fork(undefined, "src", { entry: "retitle" })).title).toBe(
        "Renamed on x1",
      );
    });

    it("forks at a label: the path up to that Label entry", async () => {
      await source();
      const meta = await store.fork(undefined, "src", { entry: "checkpoint" });
      expect(meta.forkedFrom).toMatchObject({ sessionId: "src", entryId: "mark" });
      const ids = (await allEntries(meta.id)).slice(1).map((e) => e.id);
      expect(ids).toEqual(["u1", "a1", "mark"]);
    });

    it("forks at the current leaf when no entry is given", async () => {
      await source();
      const meta = await store.fork(undefined, "src");
      expect((await allEntries(meta.id)).slice(1).map((e) => e.id)).toEqual([
        "u1",
        "a1",
        "mark",
        "x1",
      ]);
    });

    it("gives the fork the source's state at the fork point", async () => {
      await source();
      const src = await store.open(undefined, "src");
      for (const at of ["u3", "a2", "x1", "mark"]) {
        const meta = await store.fork(undefined, "src", { entry: at, sessionId: `fork-${at}` });
        const forked = await (await store.open(undefined, meta.id)).state();
        const original = await src.state({ atEntryId: at });
        expect(forked.messages).toEqual(original.messages);
        expect(forked.messages.length).toBeGreaterThan(0);
        expect(forked.label).toEqual(original.label);
        expect(forked.leafId).toBe(at);
      }
    });

    it("leaves the source untouched", async () => {
      await source();
      const before = await store.get(undefined, "src");
      const beforeBytes = bytesOf(await allEntries("src"));
      await store.fork(undefined, "src", { entry: "u3" });
      await store.fork(undefined, "src", { entry: "checkpoint" });
      const after = await store.get(undefined, "src");
      expect(after.headSeq).toBe(before.headSeq);
      expect(after.leafId).toBe(before.leafId);
      expect(bytesOf(await allEntries("src"))).toEqual(beforeBytes);
    });

    it("refuses a Leaf entry as fork point with INVALID_ARGUMENT", async () => {
      await source();
      const leafEntry = (await allEntries("src")).find((e) => e.kind.case === "leaf") as Entry;
      await expectCode(
        () => store.fork(undefined, "src", { entry: leafEntry.id }),
        "INVALID_ARGUMENT",
        leafEntry.id,
      );
      expect(await fixture.engine.listIds("default")).toEqual(["src"]);
    });

    it("answers NOT_FOUND for an unknown entry and creates nothing", async () => {
      await source();
      await expectCode(
        () => store.fork(undefined, "src", { entry: "nope" }),
        "NOT_FOUND",
        '"nope"',
      );
      expect(await fixture.engine.listIds("default")).toEqual(["src"]);
    });

    it("refuses to fork into an existing session id", async () => {
      await source();
      await store.create({ sessionId: "taken" });
      await expectCode(
        () => store.fork(undefined, "src", { entry: "u3", sessionId: "taken" }),
        "ALREADY_EXISTS",
      );
      expect((await store.get(undefined, "taken")).headSeq).toBe(1n);
    });

    it("refuses an invalid fork session id with INVALID_ARGUMENT", async () => {
      await source();
      await expectCode(
        () => store.fork(undefined, "src", { entry: "u3", sessionId: "../evil" }),
        "INVALID_ARGUMENT",
      );
      expect(await fixture.engine.listIds("default")).toEqual(["src"]);
    });
  });
});

describe.skipIf(pgSkip !== undefined)("SessionStore on postgres: the SQL paths", () => {
  let engine: PostgresEngine;
  let url: string;
  let admin: postgres.Sql;
  const others: PostgresEngine[] = [];
  let clockMs = T0;

  beforeEach(async () => {
    ({ engine, url, admin } = await openPostgres());
    clockMs = T0;
  });

  afterEach(async () => {
    await engine.close();
    for (const o of others.splice(0)) await o.close();
  });

  function storeOn(e: StorageEngine): SessionStore {
    return new SessionStore(e, { now: () => new Date(clockMs) });
  }

  async function replica(extra: Partial<PostgresEngineOptions> = {}): Promise<PostgresEngine> {
    const e = await PostgresEngine.open({ url, ...extra });
    others.push(e);
    return e;
  }

  /** The same engine without pageRoots: the store then picks each page in JavaScript (top-k). */
  function jsPaging(e: StorageEngine): StorageEngine {
    return new Proxy(e, {
      get(target, prop) {
        if (prop === "pageRoots") return undefined;
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  }

  async function count(table: "sessiond_sessions" | "sessiond_entries", id: string) {
    const [row] = await admin<{ n: string }[]>`
      SELECT count(*) AS n FROM ${admin(table)} WHERE session_id = ${id}`;
    return Number(row?.n);
  }

  it("gives the same pages and page tokens with the SQL keyset as with the JavaScript top-k, also with deletions between pages", async () => {
    const sql = storeOn(engine);
    const js = storeOn(jsPaging(engine));
    expect(engine.pageRoots).toBeDefined();
    expect(jsPaging(engine).pageRoots).toBeUndefined();
    const prefixes = ["a", "B", "a-", "a_", "Z", "0"];
    const parents: string[] = [];
    for (let i = 0; i < 150; i++) {
      const id = `${prefixes[i % prefixes.length]}${(i * 37) % 150}`;
      await sql.create({ sessionId: id });
      if (i % 10 === 0) {
        parents.push(id);
        for (let j = 0; j < 1 + (i % 4); j++) {
          await sql.create({ sessionId: `${id}-sub${(j * 3) % 4}`, parentSessionId: id });
        }
      }
      if (i % 4 === 3) clockMs += 1000; // four sessions per creation time
    }
    const withSubagents = parents[3] as string;
    let made = 0;
    for (const order of ["newest", "oldest"] as const) {
      for (const parentSessionId of [undefined, withSubagents]) {
        for (const pageSize of [7, 40]) {
          let tokenSql = "";
          let tokenJs = "";
          const seen: string[] = [];
          for (let n = 0; ; n++) {
            const a = await sql.list({ order, parentSessionId, pageSize, pageToken: tokenSql });
            const b = await js.list({ order, parentSessionId, pageSize, pageToken: tokenJs });
            const what = `${order} ${parentSessionId ?? "top"} by ${pageSize}, page ${n}`;
            expect(
              a.sessions.map((m) => m.id),
              what,
            ).toEqual(b.sessions.map((m) => m.id));
            expect(a.nextPageToken, what).toBe(b.nextPageToken);
            seen.push(...a.sessions.map((m) => m.id));
            tokenSql = a.nextPageToken;
            tokenJs = b.nextPageToken;
            if (tokenSql === "") break;
            if (n % 2 === 0) {
              // The page's last session (the keyset anchor) goes, with its
              // subagents if any, and new sessions appear on both sides.
              const last = a.sessions.at(-1)?.id as string;
              if (last !== withSubagents) {
                await sql.delete(undefined, last, { includeSubagents: true });
              }
              clockMs += 1000;
              await sql.create({ sessionId: `late-${made++}` });
              await sql.create({ sessionId: `late-${made++}`, parentSessionId: withSubagents });
            }
          }
          expect(new Set(seen).size).toBe(seen.length);
        }
      }
    }
  });

  it("deletes a session with its subagents in one transaction: all or nothing, NOT_FOUND as before, watchers of another replica hear each deletion", async () => {
    const store = storeOn(engine);
    await store.create({ sessionId: "parent" });
    await store.create({ sessionId: "child-1", parentSessionId: "parent" });
    await store.create({ sessionId: "child-2", parentSessionId: "parent" });
    await store.create({ sessionId: "grandchild", parentSessionId: "child-1" });
    await store.create({ sessionId: "bystander" });
    const family = ["child-1", "child-2", "grandchild", "parent"];
    const other = await replica();
    const heard: StorageEvent[] = [];
    other.subscribe((e) => heard.push(e));
    await new Promise((r) => setTimeout(r, 300)); // the replica's LISTEN is up
    await admin.unsafe(`
      CREATE OR REPLACE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'refused: %', OLD.session_id; END $$;
      CREATE TRIGGER refuse_delete BEFORE DELETE ON sessiond_sessions
        FOR EACH ROW WHEN (OLD.session_id = 'grandchild') EXECUTE FUNCTION refuse_delete();`);
    try {
      await expectCode(
        () => store.delete(undefined, "parent", { includeSubagents: true }),
        "UNAVAILABLE",
        "refused: grandchild",
      );
    } finally {
      await admin.unsafe("DROP TRIGGER refuse_delete ON sessiond_sessions");
    }
    expect((await other.listIds("default")).sort()).toEqual(["bystander", ...family]);
    for (const id of family) expect((await store.get(undefined, id)).id).toBe(id);

    const deleted = await store.delete(undefined, "pare", { includeSubagents: true });
    expect(deleted[0]).toBe("parent");
    expect([...deleted].sort()).toEqual(family);
    await vi.waitFor(() =>
      expect(
        heard
          .filter((e) => e.type === "deleted")
          .map((e) => e.sessionId)
          .sort(),
      ).toEqual(family),
    );
    expect(heard.filter((e) => e.type === "deleted" && e.sessionId === "bystander")).toEqual([]);
    for (const id of family) {
      await expectCode(() => store.get(undefined, id), "NOT_FOUND");
      expect(await count("sessiond_entries", id)).toBe(0);
    }
    await expectCode(
      () => store.delete(undefined, "parent", { includeSubagents: true }),
      "NOT_FOUND",
      "parent",
    );
    expect(await other.listIds("default")).toEqual(["bystander"]);
  });

  it("creates a fork in one transaction: a failure midway leaves no row, a retry succeeds, racing replicas create it once", async () => {
    // Two rows per INSERT: a fork of 9 entries is 1 + 5 statements in its transaction.
    const chunky = await replica({ insertChunk: 2 });
    const store = storeOn(chunky);
    await store.create({ sessionId: "src", title: "Source" });
    const src = await store.open(undefined, "src");
    await src.append(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0 ? user(`u${i}`, `question ${i}`) : assistant(`a${i}`, `answer ${i}`),
      ),
    );
    const watcher = await replica();
    const heard: StorageEvent[] = [];
    watcher.subscribe((e) => heard.push(e));
    await new Promise((r) => setTimeout(r, 300));
    // Counts the fork's rows as they are inserted (a sequence is not rolled
    // back), and fails the insert of seq 7: three INSERTs in.
    await admin.unsafe(`
      CREATE SEQUENCE IF NOT EXISTS fork_rows;
      CREATE OR REPLACE FUNCTION fail_fork() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM nextval('fork_rows');
          IF NEW.seq = 7 THEN RAISE EXCEPTION 'forced failure at seq %', NEW.seq; END IF;
          RETURN NEW;
        END $$;
      CREATE TRIGGER fail_fork BEFORE INSERT ON sessiond_entries
        FOR EACH ROW WHEN (NEW.session_id = 'fork-1') EXECUTE FUNCTION fail_fork();`);
    try {
      await expectCode(
        () => store.fork(undefined, "src", { sessionId: "fork-1" }),
        "UNAVAILABLE",
        "forced failure at seq 7",
      );
      const [rows] = await admin<{ n: string }[]>`SELECT last_value AS n FROM fork_rows`;
      expect(Number(rows?.n)).toBe(7); // seqs 1..6 were written, then rolled back
    } finally {
      await admin.unsafe("DROP TRIGGER fail_fork ON sessiond_entries; DROP SEQUENCE fork_rows");
    }
    expect(await count("sessiond_sessions", "fork-1")).toBe(0);
    expect(await count("sessiond_entries", "fork-1")).toBe(0);
    await expectCode(() => store.get(undefined, "fork-1"), "NOT_FOUND");
    expect(await watcher.listIds("default")).toEqual(["src"]);

    const fork = await store.fork(undefined, "src", { sessionId: "fork-1" });
    expect(fork.headSeq).toBe(9n);
    expect(fork.forkedFrom?.sessionId).toBe("src");
    expect(await count("sessiond_entries", "fork-1")).toBe(9);
    await vi.waitFor(() =>
      expect(heard.filter((e) => e.sessionId === "fork-1").map((e) => e.type)).toEqual(["created"]),
    );

    // Two replicas fork to one new id at once: one creates it, the other's
    // create conflicts and the retry rule returns the same session.
    const [x, y] = await Promise.all([
      store.fork(undefined, "src", { sessionId: "fork-2", entry: "a5" }),
      storeOn(watcher).fork(undefined, "src", { sessionId: "fork-2", entry: "a5" }),
    ]);
    expect(x.id).toBe("fork-2");
    expect(y.headSeq).toBe(x.headSeq);
    expect(x.headSeq).toBe(7n);
    expect(await count("sessiond_sessions", "fork-2")).toBe(1);
    expect(await count("sessiond_entries", "fork-2")).toBe(7);
  });
});

describe("smallest", () => {
  it("equals filter + sort + slice", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 300 }),
        fc.integer({ min: 0, max: 40 }),
        (items, k) => {
          const keep = (n: number) => n % 7 !== 3;
          const cmp = (a: number, b: number) => a - b;
          expect(smallest(items, k, keep, cmp)).toEqual(items.filter(keep).sort(cmp).slice(0, k));
        },
      ),
    );
  });
});
