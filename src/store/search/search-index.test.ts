import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionFilterSchema } from "../../../gen/sessiond/v1/store_service_pb.js";
import { say, scanning, storeOn } from "../../../test/support/search-fixtures.js";
import type { Candidate, CandidateQuery, StorageEngine } from "../../storage/engine.js";
import { MemoryEngine } from "../../storage/memory.js";
import type { SessionStore } from "../session-store.js";

/**
 * Search through an engine's index of entry text (searchCandidates; the
 * memory engine has the reference one, PostgreSQL a trigram index):
 * candidates asked a batch at a time, the words and the filter checked by
 * the store, and the same pages as a scan of every session gives.
 */

/** Every page of a search, hit by hit as "session/seq". */
async function allHits(
  store: SessionStore,
  query: string,
  opts: { pageSize?: number; filter?: ReturnType<typeof create<typeof SessionFilterSchema>> } = {},
): Promise<string[]> {
  const seen: string[] = [];
  let pageToken = "";
  do {
    const page = await store.search({ query, pageToken, ...opts });
    seen.push(...page.hits.map((h) => `${h.sessionId}/${h.seq}`));
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return seen;
}

/** The memory engine, counting its candidate queries. */
function counted(memory: MemoryEngine): { engine: StorageEngine; queries: CandidateQuery[] } {
  const queries: CandidateQuery[] = [];
  const engine = Object.assign(Object.create(memory) as MemoryEngine, {
    searchCandidates(workspace: string, q: CandidateQuery) {
      queries.push(q);
      return memory.searchCandidates(workspace, q);
    },
  });
  return { engine, queries };
}

describe("search through an index of entry text", () => {
  it("asks for more candidates until the page is full, and pages like a scan", async () => {
    const memory = new MemoryEngine();
    const { engine, queries } = counted(memory);
    const store = storeOn(engine);
    for (let i = 0; i < 3; i++) {
      const s = await store.open(undefined, (await store.create({ title: `s${i}` })).session.id);
      // Every entry holds both needles (one in its id); only every 100th holds both words.
      await s.append(
        Array.from({ length: 300 }, (_, j) =>
          say(j % 100 === 99 ? "alpha beta" : "alpha", `beta-${i}-${j}`),
        ),
      );
    }
    const indexed = await allHits(store, "alpha beta", { pageSize: 2 });
    expect(indexed).toHaveLength(9);
    expect(indexed).toEqual(
      await allHits(storeOn(scanning(memory)), "alpha beta", { pageSize: 2 }),
    );
    // The first page needs the candidates of more than one batch.
    expect(queries[0]).toMatchObject({ needles: ["alpha", "beta"], limit: 256, order: "desc" });
    expect(queries[1]?.after).toMatchObject({ seq: 257 });
  });

  it("a page bigger than a batch asks for a page and one at once", async () => {
    const memory = new MemoryEngine();
    const { engine, queries } = counted(memory);
    const store = storeOn(engine, { maxPageSize: 1000 });
    const s = await store.open(undefined, (await store.create()).session.id);
    await s.append(Array.from({ length: 400 }, () => say("alpha")));
    const page = await store.search({ query: "alpha", pageSize: 300 });
    expect(page.hits).toHaveLength(300);
    expect(page.nextPageToken).not.toBe("");
    expect(queries.map((q) => q.limit)).toEqual([301]);
  });

  it("a filter leaves out the sessions it rules out, across batches", async () => {
    const memory = new MemoryEngine();
    const store = storeOn(memory);
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      const title = i === 0 ? "the one" : `other ${i}`;
      const id = (await store.create({ title })).session.id;
      ids.push(id);
      await (await store.open(undefined, id)).append([say("alpha")]);
    }
    const filter = create(SessionFilterSchema, { titleContains: "the one" });
    // The oldest session comes last, after more than a batch of candidates.
    expect(await allHits(store, "alpha", { filter })).toEqual([`${ids[0]}/2`]);
    expect(await allHits(storeOn(scanning(memory)), "alpha", { filter })).toEqual([`${ids[0]}/2`]);
  });

  it("a candidate that does not decode names its session partial, once", async () => {
    const memory = new MemoryEngine();
    const store = storeOn(memory);
    const id = (await store.create()).session.id;
    await (await store.open(undefined, id)).append([say("alpha"), say("alpha"), say("alpha")]);
    const engine = Object.assign(Object.create(memory) as MemoryEngine, {
      async searchCandidates(workspace: string, q: CandidateQuery): Promise<Candidate[]> {
        const found = await memory.searchCandidates(workspace, q);
        return found.map((c) => (c.seq === 3 ? c : { ...c, entry: undefined }));
      },
    });
    const res = await storeOn(engine).search({ query: "alpha" });
    expect(res.hits.map((h) => h.seq)).toEqual([3n]);
    expect(res.partialSessionIds).toEqual([id]);
  });

  it("a page that is full looks no further: damage past it is not named", async () => {
    const memory = new MemoryEngine();
    const store = storeOn(memory);
    const older = (await store.create()).session.id;
    await (await store.open(undefined, older)).append([say("alpha")]);
    const newer = (await store.create()).session.id;
    await (await store.open(undefined, newer)).append([say("alpha"), say("alpha")]);
    const engine = Object.assign(Object.create(memory) as MemoryEngine, {
      async searchCandidates(workspace: string, q: CandidateQuery): Promise<Candidate[]> {
        const found = await memory.searchCandidates(workspace, q);
        return found.map((c) => (c.root.sessionId === older ? { ...c, entry: undefined } : c));
      },
    });
    const res = await storeOn(engine).search({ query: "alpha", pageSize: 1 });
    expect(res.hits.map((h) => `${h.sessionId}/${h.seq}`)).toEqual([`${newer}/2`]);
    expect(res.nextPageToken).not.toBe("");
    expect(res.partialSessionIds).toEqual([]);
  });
});
