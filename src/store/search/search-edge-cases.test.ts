import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionFilterSchema } from "../../../gen/sessiond/v1/store_service_pb.js";
import { expectCode } from "../../../test/support/fixtures.js";
import { say, scanning, storeOn } from "../../../test/support/search-fixtures.js";
import { unavailable } from "../../core/errors.js";
import type { SessionKey } from "../../storage/engine.js";
import { MemoryEngine } from "../../storage/memory.js";
import { SessionStore } from "../session-store.js";

/**
 * Search edge cases on the memory engine, some through an engine wrapped to
 * misbehave: bad arguments, aborts, sessions deleted or records gone
 * meanwhile, equal creation times, titles, yielding to the event loop.
 */

describe("search rules on the memory engine", () => {
  async function seeded(): Promise<{ memory: MemoryEngine; store: SessionStore; ids: string[] }> {
    const memory = new MemoryEngine();
    const store = storeOn(memory);
    const ids: string[] = [];
    for (const title of ["one", "two"]) {
      const id = (await store.create({ title })).session.id;
      ids.push(id);
      await (await store.open(undefined, id)).append([say("word", `${title}-1`)]);
    }
    return { memory, store, ids };
  }

  it.each([-1, 1.5, Number.NaN])("page_size %s fails with INVALID_ARGUMENT", async (pageSize) => {
    const { store } = await seeded();
    await expectCode(store.search({ query: "word", pageSize }), "INVALID_ARGUMENT", "page_size");
  });

  it("page_size at the maximum is accepted", async () => {
    const memory = new MemoryEngine();
    const store = storeOn(memory, { maxPageSize: 3 });
    await expect(store.search({ query: "word", pageSize: 3 })).resolves.toMatchObject({ hits: [] });
  });

  it("a parent_session_id that is no session id fails with INVALID_ARGUMENT", async () => {
    const { store } = await seeded();
    await expectCode(
      store.search({ query: "word", parentSessionId: "../x" }),
      "INVALID_ARGUMENT",
      "parent_session_id",
    );
  });

  it("a bad workspace fails with INVALID_ARGUMENT", async () => {
    const { store } = await seeded();
    await expectCode(store.search({ query: "word", workspace: "no/such" }), "INVALID_ARGUMENT");
  });

  it.each([
    ["a scan", true],
    ["an index", false],
  ])("an aborted search (%s) stops with the signal's reason", async (_, scan) => {
    const { memory } = await seeded();
    const store = storeOn(scan ? scanning(memory) : memory);
    const controller = new AbortController();
    controller.abort(new Error("caller gone"));
    await expect(store.search({ query: "word", signal: controller.signal })).rejects.toThrow(
      "caller gone",
    );
  });

  it("a session deleted while the search runs is left out", async () => {
    const { memory, ids } = await seeded();
    const engine = scanning(memory, {
      async read(key: SessionKey, afterSeq: number, limit: number) {
        if (key.sessionId === ids[1]) await memory.delete(key);
        return memory.read(key, afterSeq, limit);
      },
    });
    const { hits } = await storeOn(engine).search({ query: "word" });
    expect(hits.map((h) => h.entryId)).toEqual(["one-1"]);
  });

  it("other errors of a scan fail the search", async () => {
    const { memory } = await seeded();
    const engine = scanning(memory, {
      async read() {
        throw unavailable("disk on fire");
      },
    });
    await expectCode(storeOn(engine).search({ query: "word" }), "UNAVAILABLE", "disk on fire");
  });

  it("a session whose record is gone by the time the page is titled keeps its root's title", async () => {
    const { memory } = await seeded();
    const engine = scanning(memory, {
      async list() {
        return [];
      },
    });
    const { hits } = await storeOn(engine).search({ query: "word" });
    expect(hits.map((h) => h.sessionTitle)).toEqual(["two", "one"]);
  });

  it("a hit shows the session's newest title", async () => {
    const { store, ids } = await seeded();
    await (await store.open(undefined, ids[0] as string)).append([
      { kind: { case: "sessionInfo", value: { title: "renamed" } } },
    ]);
    const { hits } = await store.search({ query: "word" });
    expect(hits.map((h) => h.sessionTitle)).toEqual(["two", "renamed"]);
  });

  it("sessions created in the same millisecond are ordered by id, both ways, across pages", async () => {
    const memory = new MemoryEngine();
    const store = new SessionStore(memory, { now: () => new Date("2026-05-01T00:00:00Z") });
    for (const id of ["s-b", "s-c", "s-a"]) {
      await store.create({ sessionId: id });
      await (await store.open(undefined, id)).append([say("word")]);
    }
    const all = async (order: "newest" | "oldest") => {
      const seen: string[] = [];
      let pageToken = "";
      do {
        const page = await store.search({ query: "word", order, pageSize: 1, pageToken });
        seen.push(...page.hits.map((h) => h.sessionId));
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      return seen;
    };
    expect(await all("newest")).toEqual(["s-c", "s-b", "s-a"]);
    expect(await all("oldest")).toEqual(["s-a", "s-b", "s-c"]);
  });

  it("with a filter, a session whose record is gone is left out", async () => {
    const { memory } = await seeded();
    const engine = scanning(memory, {
      async list() {
        return [];
      },
    });
    const filter = create(SessionFilterSchema, { titleContains: "o" });
    const { hits } = await storeOn(engine).search({ query: "word", filter });
    expect(hits).toEqual([]);
  });

  it("a long search lets other work of the process run", async () => {
    const { memory } = await seeded();
    let ranMeanwhile = false;
    let reads = 0;
    const engine = scanning(memory, {
      async read(key: SessionKey, afterSeq: number, limit: number) {
        if (reads++ === 1) ranMeanwhile = seenBefore;
        const until = performance.now() + 15;
        while (performance.now() < until) {
          // Busy: a scan that answers without waiting on anything.
        }
        return memory.read(key, afterSeq, limit);
      },
    });
    let seenBefore = false;
    setImmediate(() => {
      seenBefore = true;
    });
    await storeOn(engine).search({ query: "word" });
    expect(ranMeanwhile).toBe(true);
  });

  it("the next page starts at the first hit it shows, not after the sessions already read", async () => {
    const { store, ids } = await seeded();
    const first = await store.search({ query: "word", pageSize: 1 });
    expect(first.hits.map((h) => h.sessionId)).toEqual([ids[1]]);
    const rest = await store.search({ query: "word", pageSize: 1, pageToken: first.nextPageToken });
    expect(rest.hits.map((h) => h.sessionId)).toEqual([ids[0]]);
    expect(rest.nextPageToken).toBe("");
  });
});
