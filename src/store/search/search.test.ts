import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { SessionFilterSchema } from "../../../gen/sessiond/v1/store_service_pb.js";
import { expectCode } from "../../../test/support/fixtures.js";
import { message, say, storeOn } from "../../../test/support/search-fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../../test/support/store-engines.js";
import type { EngineFixture } from "../../../test/support/store-model.js";
import type { SessionStore } from "../session-store.js";

/**
 * SearchEntries rules on every in-process engine (memory, JSONL): what
 * matches, order, parents and filters, paging under change, refusals.
 */

for (const factory of STORE_ENGINE_FACTORIES) {
  describe(`search on ${factory.name}`, () => {
    let fixture: EngineFixture | undefined;
    afterEach(async () => {
      await fixture?.dispose();
      fixture = undefined;
    });
    async function open(limits = {}): Promise<SessionStore> {
      fixture = await factory.open();
      return storeOn(fixture.engine, limits);
    }

    it("finds the entries holding every word, case ignored, newest session first", async () => {
      const store = await open();
      const a = (await store.create({ title: "A" })).session.id;
      const b = (await store.create({ title: "B" })).session.id;
      await (await store.open(undefined, a)).append([
        say("Deploy the cluster", "a1"),
        say("deploy only", "a2"),
      ]);
      await (await store.open(undefined, b)).append([say("the CLUSTER needs a deploy", "b1")]);
      const { hits, nextPageToken } = await store.search({ query: "deploy cluster" });
      expect(hits.map((h) => [h.sessionId, h.entryId, h.sessionTitle])).toEqual([
        [b, "b1", "B"],
        [a, "a1", "A"],
      ]);
      expect(nextPageToken).toBe("");
    });

    it("oldest first puts the oldest session first", async () => {
      const store = await open();
      const a = (await store.create()).session.id;
      const b = (await store.create()).session.id;
      for (const id of [a, b]) await (await store.open(undefined, id)).append([say("needle")]);
      const { hits } = await store.search({ query: "needle", order: "oldest" });
      expect(hits.map((h) => h.sessionId)).toEqual([a, b]);
    });

    it("reads thinking, tool-call arguments as JSON and tool results, not images or labels", async () => {
      const store = await open();
      const s = await store.open(undefined, (await store.create()).session.id);
      await s.append([
        message(Role.ASSISTANT, [{ thinking: "ponder zebra" }], "think"),
        message(Role.ASSISTANT, [{ image: true }, { args: { path: "/etc/Zebra" } }], "call"),
        { id: "lbl", kind: { case: "label", value: { label: "zebra" } } },
      ]);
      const { hits } = await store.search({ query: "zebra" });
      expect(hits.map((h) => h.entryId)).toEqual(["think", "call"]);
      expect(hits[1]?.snippet).toBe('{"path":"/etc/Zebra"}');
      expect(hits[1]?.role).toBe(Role.ASSISTANT);
      const quoted = await store.search({ query: '"path":"/etc/zebra"' });
      expect(quoted.hits.map((h) => h.entryId)).toEqual(["call"]);
    });

    it("a hit carries the entry's seq, timestamp, role and a snippet", async () => {
      const store = await open();
      const s = await store.open(undefined, (await store.create()).session.id);
      const [stored] = (await s.append([say("find me here", "u1")])).entries;
      const [hit] = (await store.search({ query: "ME" })).hits;
      expect(hit?.seq).toBe(2n);
      expect(hit?.role).toBe(Role.USER);
      expect(hit?.timestamp).toEqual(stored?.timestamp);
      expect(hit?.snippet).toBe("find me here");
    });

    it("searches every branch, not only the current path", async () => {
      const store = await open();
      const s = await store.open(undefined, (await store.create()).session.id);
      await s.append([say("start", "u1"), say("abandoned idea", "u2")]);
      await s.rewind("u1");
      await s.append([say("new idea", "u3")]);
      const { hits } = await store.search({ query: "idea" });
      expect(hits.map((h) => h.entryId)).toEqual(["u2", "u3"]);
    });

    it("searches the subagents of a session with parent_session_id, else top-level sessions only", async () => {
      const store = await open();
      const parent = (await store.create()).session.id;
      const child = (await store.create({ parentSessionId: parent, agentType: "x" })).session.id;
      for (const id of [parent, child])
        await (await store.open(undefined, id)).append([say("word")]);
      expect((await store.search({ query: "word" })).hits.map((h) => h.sessionId)).toEqual([
        parent,
      ]);
      const sub = await store.search({ query: "word", parentSessionId: parent });
      expect(sub.hits.map((h) => h.sessionId)).toEqual([child]);
    });

    it("a filter narrows the sessions searched", async () => {
      const store = await open();
      const a = (await store.create({ title: "Alpha run" })).session.id;
      const b = (await store.create({ title: "beta" })).session.id;
      for (const id of [a, b]) await (await store.open(undefined, id)).append([say("word")]);
      const filter = create(SessionFilterSchema, { titleContains: "ALPHA" });
      const { hits } = await store.search({ query: "word", filter });
      expect(hits.map((h) => h.sessionId)).toEqual([a]);
    });

    it("a filter on tags and creation time is applied too, and on more sessions than one batch of records", async () => {
      const store = await open();
      const ids: string[] = [];
      for (let i = 0; i < 70; i++) {
        const id = (await store.create({ tags: { team: i % 2 ? "odd" : "even" } })).session.id;
        ids.push(id);
        await (await store.open(undefined, id)).append([say("word")]);
      }
      const createdBefore = (await store.get(undefined, ids[60] as string)).createdAt;
      const filter = create(SessionFilterSchema, { tags: { team: "even" }, createdBefore });
      const { hits } = await store.search({ query: "word", filter, pageSize: 100 });
      const want = ids.filter((_, i) => i % 2 === 0 && i < 60).reverse();
      expect(hits.map((h) => h.sessionId)).toEqual(want);
    });

    it("a malformed filter fails with INVALID_ARGUMENT", async () => {
      const store = await open();
      const filter = create(SessionFilterSchema, { createdAfter: { seconds: 1n, nanos: -1 } });
      await expectCode(
        store.search({ query: "x", filter }),
        "INVALID_ARGUMENT",
        "filter.created_after",
      );
    });

    it("pages hold page_size hits and the token continues after the last one", async () => {
      const store = await open();
      const s = await store.open(undefined, (await store.create()).session.id);
      await s.append(["m1", "m2", "m3"].map((id) => say("same", id)));
      const first = await store.search({ query: "same", pageSize: 2 });
      expect(first.hits.map((h) => h.entryId)).toEqual(["m1", "m2"]);
      expect(first.partialSessionIds).toEqual([]);
      const second = await store.search({
        query: "same",
        pageSize: 2,
        pageToken: first.nextPageToken,
      });
      expect(second.hits.map((h) => h.entryId)).toEqual(["m3"]);
      expect(second.nextPageToken).toBe("");
    });

    it("a full last page has no token", async () => {
      const store = await open();
      const s = await store.open(undefined, (await store.create()).session.id);
      await s.append([say("same"), say("same")]);
      expect((await store.search({ query: "same", pageSize: 2 })).nextPageToken).toBe("");
    });

    it("page_size 0 is the store's default page size", async () => {
      const store = await open({ defaultPageSize: 1 });
      const s = await store.open(undefined, (await store.create()).session.id);
      await s.append([say("same"), say("same")]);
      const { hits, nextPageToken } = await store.search({ query: "same", pageSize: 0 });
      expect(hits).toHaveLength(1);
      expect(nextPageToken).not.toBe("");
    });

    it("pages stay right while sessions are created, appended to and deleted between them", async () => {
      const store = await open();
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const id = (await store.create()).session.id;
        ids.push(id);
        await (await store.open(undefined, id)).append([
          say("hit", `e${i}a`),
          say("hit", `e${i}b`),
        ]);
      }
      // Newest first: ids[3], ids[2], ids[1], ids[0].
      const first = await store.search({ query: "hit", pageSize: 3 });
      expect(first.hits.map((h) => h.entryId)).toEqual(["e3a", "e3b", "e2a"]);
      const late = (await store.create()).session.id; // newer than the token: never shown
      await (await store.open(undefined, late)).append([say("hit", "late")]);
      await (await store.open(undefined, ids[2] as string)).append([say("hit", "e2c")]);
      await store.delete(undefined, ids[1] as string);
      const rest: string[] = [];
      let token = first.nextPageToken;
      while (token !== "") {
        const page = await store.search({ query: "hit", pageSize: 3, pageToken: token });
        rest.push(...page.hits.map((h) => h.entryId));
        token = page.nextPageToken;
      }
      expect(rest).toEqual(["e2b", "e2c", "e0a", "e0b"]);
    });

    it("an empty query fails with INVALID_ARGUMENT", async () => {
      const store = await open();
      await expectCode(store.search({ query: " \t " }), "INVALID_ARGUMENT", "query is empty");
    });

    it("a query over 256 characters fails with INVALID_ARGUMENT naming its length", async () => {
      const store = await open();
      await expectCode(
        store.search({ query: "é".repeat(257) }),
        "INVALID_ARGUMENT",
        "257 characters",
      );
      await expect(store.search({ query: "é".repeat(256) })).resolves.toBeDefined();
    });

    it("page_size over the limit fails with INVALID_ARGUMENT naming it", async () => {
      const store = await open({ maxPageSize: 10 });
      await expectCode(
        store.search({ query: "x", pageSize: 11 }),
        "INVALID_ARGUMENT",
        "page_size 11",
      );
    });

    it("a mangled page token fails with INVALID_ARGUMENT", async () => {
      const store = await open();
      await expectCode(
        store.search({ query: "x", pageToken: "garbage!" }),
        "INVALID_ARGUMENT",
        "page_token",
      );
    });

    it("a token of another query, order, filter or parent fails with INVALID_ARGUMENT", async () => {
      const store = await open();
      const s = await store.open(undefined, (await store.create()).session.id);
      await s.append([say("a b"), say("a b")]);
      const { nextPageToken: token } = await store.search({ query: "a b", pageSize: 1 });
      expect(token).not.toBe("");
      const other = "different search";
      await expectCode(store.search({ query: "a", pageToken: token }), "INVALID_ARGUMENT", other);
      await expectCode(
        store.search({ query: "a b", order: "oldest", pageToken: token }),
        "INVALID_ARGUMENT",
        other,
      );
      const filter = create(SessionFilterSchema, { titleContains: "x" });
      await expectCode(
        store.search({ query: "a b", filter, pageToken: token }),
        "INVALID_ARGUMENT",
        other,
      );
      await expectCode(
        store.search({ query: "a b", parentSessionId: "p1234", pageToken: token }),
        "INVALID_ARGUMENT",
        other,
      );
      // The same words, spelled otherwise, are the same search.
      const same = await store.search({ query: " B  A ", pageSize: 1, pageToken: token });
      expect(same.hits).toHaveLength(1);
    });
  });
}
