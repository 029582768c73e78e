import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { SessionFilterSchema } from "../../gen/sessiond/v1/store_service_pb.js";
import { expectCode } from "../../test/support/fixtures.js";
import { ENGINE_FACTORIES, type EngineFixture } from "../../test/support/store-model.js";
import { dataLoss, unavailable } from "../core/errors.js";
import type { SessionKey, StorageEngine } from "../storage/engine.js";
import { JsonlEngine } from "../storage/jsonl/jsonl-engine.js";
import { MemoryEngine } from "../storage/memory.js";
import { SessionStore } from "./session-store.js";

/** A store on a clock that moves one second per session, so creation order is known. */
function storeOn(engine: StorageEngine, limits = {}): SessionStore {
  let t = Date.parse("2026-05-01T00:00:00Z");
  const now = () => {
    t += 1000;
    return new Date(t);
  };
  return new SessionStore(engine, { now, limits });
}

type Part = { text: string } | { thinking: string } | { args: JsonValue } | { image: true };

function message(role: Role, parts: readonly Part[], id?: string) {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: {
        role,
        content: parts.map((p) =>
          "text" in p
            ? { part: { case: "text" as const, value: p.text } }
            : "thinking" in p
              ? { part: { case: "thinking" as const, value: { thinking: p.thinking } } }
              : "args" in p
                ? {
                    part: {
                      case: "toolCall" as const,
                      value: {
                        id: `c${Math.random()}`.replace(".", ""),
                        name: "t",
                        arguments: fromJson(ValueSchema, p.args),
                      },
                    },
                  }
                : {
                    part: {
                      case: "image" as const,
                      value: { mimeType: "image/png", data: new Uint8Array([1]) },
                    },
                  },
        ),
      },
    },
  });
}

const say = (text: string, id?: string) => message(Role.USER, [{ text }], id);

for (const factory of ENGINE_FACTORIES) {
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

    it("results equal a brute-force scan of every session (random data, random pages)", async () => {
      const alphabet = [
        "ab",
        "Ab",
        "AB",
        "k",
        "\u212a",
        "I",
        "\u0130",
        "s",
        "\u017f",
        "\u03c2",
        "\u03a3",
        '"',
        "\\",
        "\n",
        " ",
        "x",
        "😀",
        "é",
      ];
      const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }).map((a) => a.join(""));
      const part: fc.Arbitrary<Part> = fc.oneof(
        text.map((t) => ({ text: t })),
        text.map((t) => ({ thinking: t })),
        text.map((t) => ({ args: { v: t, n: [1, t] } })),
      );
      const sessions = fc.array(
        fc.array(fc.array(part, { minLength: 1, maxLength: 3 }), { maxLength: 5 }),
        {
          minLength: 1,
          maxLength: 4,
        },
      );
      const query = fc
        .array(fc.constantFrom(...alphabet.filter((c) => c.trim() !== "")), {
          minLength: 1,
          maxLength: 3,
        })
        .chain((a) => fc.constantFrom(a.join(""), a.join(" ")));
      await fc.assert(
        fc.asyncProperty(
          sessions,
          query,
          fc.integer({ min: 1, max: 4 }),
          async (data, q, pageSize) => {
            const store = await open();
            try {
              const expected: string[] = [];
              const ids: string[] = [];
              for (const messages of data) {
                const id = (await store.create()).session.id;
                ids.unshift(id);
                const s = await store.open(undefined, id);
                if (messages.length > 0)
                  await s.append(messages.map((p) => message(Role.ASSISTANT, p)));
              }
              for (const id of ids) {
                const { entries } = await store.engine.read(
                  { workspace: "default", sessionId: id },
                  0,
                  1000,
                );
                for (const e of entries) if (bruteMatch(e, q)) expected.push(`${id}/${e.seq}`);
              }
              const got: string[] = [];
              let token = "";
              do {
                const page = await store.search({ query: q, pageSize, pageToken: token });
                expect(page.hits.length).toBeLessThanOrEqual(pageSize);
                got.push(...page.hits.map((h) => `${h.sessionId}/${h.seq}`));
                token = page.nextPageToken;
              } while (token !== "");
              expect(got).toEqual(expected);
            } finally {
              await fixture?.dispose();
              fixture = undefined;
            }
          },
        ),
        { numRuns: factory.name === "memory" ? 150 : 40 },
      );
    });

    it("the engine's pre-filter never drops a match its needles were made for", async () => {
      const store = await open();
      const s = await store.open(undefined, (await store.create()).session.id);
      await s.append([say('Say "HELLO" to C:\\Path, Kelvin \u212a and \u0130stanbul', "u1")]);
      for (const q of [
        "hello",
        '"hello"',
        "c:\\path",
        "kelvin",
        "k",
        "\u0130STANBUL",
        "istanbul",
      ]) {
        const got = (await store.search({ query: q })).hits.map((h) => h.entryId);
        expect(got, q).toEqual(q === "istanbul" ? [] : ["u1"]);
      }
    });
  });
}

/** The proto's rule written out independently: text parts, thinking and arguments' JSON, every word. */
function bruteMatch(entry: Entry, query: string): boolean {
  if (entry.kind.case !== "message") return false;
  const texts = entry.kind.value.content.map(({ part }) =>
    part.case === "text"
      ? part.value
      : part.case === "thinking"
        ? part.value.thinking
        : part.case === "toolCall" && part.value.arguments
          ? JSON.stringify(toJson(ValueSchema, part.value.arguments))
          : "",
  );
  // Character by character: case folding knows no context (a final sigma folds like any sigma).
  const fold = (s: string) => [...s].map((c) => c.toUpperCase().toLowerCase()).join("");
  const haystack = fold(texts.join("\n"));
  return query
    .split(/\s+/)
    .filter((w) => w !== "")
    .every((w) => haystack.includes(fold(w)));
}

describe("search over an engine without its own scan", () => {
  it("reads the log page by page through read()", async () => {
    const memory = ENGINE_FACTORIES.find((f) => f.name === "memory");
    if (memory === undefined) throw new Error("no memory engine");
    const fixture = await memory.open();
    try {
      const engine = fixture.engine;
      expect((engine as { scanEntries?: unknown }).scanEntries).toBeUndefined();
      const store = storeOn(engine);
      const s = await store.open(undefined, (await store.create()).session.id);
      await s.append(Array.from({ length: 600 }, (_, i) => say(i === 599 ? "last one" : "filler")));
      const { hits, partialSessionIds } = await store.search({ query: "last" });
      expect(hits.map((h) => h.seq)).toEqual([601n]);
      expect(partialSessionIds).toEqual([]);
    } finally {
      await fixture.dispose();
    }
  });
});

describe("search of corrupt sessions", () => {
  it("JSONL: a corrupt session is searched up to the damage and named partial", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "sessiond-search-"));
    const engine = new JsonlEngine({ dataDir });
    try {
      const store = storeOn(engine);
      const bad = (await store.create()).session.id;
      const good = (await store.create()).session.id;
      for (const id of [bad, good]) {
        await (await store.open(undefined, id)).append(
          ["m1", "m2", "m3", "m4"].map((e) => say("word", e)),
        );
      }
      const file = join(dataDir, "default", "sessions", `${bad}.jsonl`);
      const lines = (await readFile(file, "utf8")).split("\n");
      lines[3] = (lines[3] as string).replace("word", "wore"); // line 4 = m3: its CRC no longer holds
      await writeFile(file, lines.join("\n"));
      const res = await store.search({ query: "word" });
      expect(res.hits.map((h) => `${h.sessionId === bad ? "bad" : "good"}/${h.entryId}`)).toEqual([
        "good/m1",
        "good/m2",
        "good/m3",
        "good/m4",
        "bad/m1",
        "bad/m2",
      ]);
      expect(res.partialSessionIds).toEqual([bad]);
    } finally {
      await engine.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("JSONL: a corrupt session the page did not reach is not named, in the same session or a later one", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "sessiond-search-"));
    const engine = new JsonlEngine({ dataDir });
    try {
      const store = storeOn(engine);
      const older = (await store.create()).session.id;
      const newer = (await store.create()).session.id;
      for (const id of [older, newer]) {
        // One write per entry: the records of one write are offered together, at its last.
        const s = await store.open(undefined, id);
        for (const e of ["m1", "m2", "m3", "m4"]) await s.append([say("word", e)]);
      }
      // newer: m3 damaged (m4 intact after it); older: m1 damaged, so any scan of it reports it.
      for (const [id, line] of [
        [newer, 3],
        [older, 1],
      ] as const) {
        const file = join(dataDir, "default", "sessions", `${id}.jsonl`);
        const lines = (await readFile(file, "utf8")).split("\n");
        lines[line] = (lines[line] as string).replace("word", "wore");
        await writeFile(file, lines.join("\n"));
      }
      const first = await store.search({ query: "word", pageSize: 1 });
      expect(first.hits.map((h) => h.entryId)).toEqual(["m1"]);
      expect(first.partialSessionIds).toEqual([]);
      const next = await store.search({
        query: "word",
        pageSize: 2,
        pageToken: first.nextPageToken,
      });
      expect(
        next.hits.map((h) => `${h.sessionId === newer ? "newer" : "older"}/${h.entryId}`),
      ).toEqual(["newer/m2"]);
      expect(next.partialSessionIds).toEqual([newer, older]);
      expect(next.nextPageToken).toBe("");
    } finally {
      await engine.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("an engine without its own scan: read up to the page that fails, then entry by entry", async () => {
    const memory = new MemoryEngine();
    const store = storeOn(memory);
    const id = (await store.create()).session.id;
    await (await store.open(undefined, id)).append(
      Array.from({ length: 300 }, (_, i) => say("word", `m${i + 2}`)),
    );
    const damagedAt = 280;
    const reads: [number, number][] = [];
    const engine: StorageEngine = Object.assign(Object.create(memory) as MemoryEngine, {
      async read(key: SessionKey, afterSeq: number, limit: number) {
        reads.push([afterSeq, limit]);
        const page = await memory.read(key, afterSeq, limit);
        if (page.entries.some((e) => Number(e.seq) >= damagedAt)) throw dataLoss("damaged");
        return page;
      },
    });
    const res = await new SessionStore(engine).search({ query: "word", pageSize: 1000 });
    expect(res.hits.map((h) => Number(h.seq))).toEqual(
      Array.from({ length: damagedAt - 2 }, (_, i) => i + 2),
    );
    expect(res.partialSessionIds).toEqual([id]);
    expect(reads.slice(0, 3)).toEqual([
      [0, 256],
      [256, 256],
      [256, 1],
    ]);
  });
});

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

  it("an aborted search stops with the signal's reason", async () => {
    const { store } = await seeded();
    const controller = new AbortController();
    controller.abort(new Error("caller gone"));
    await expect(store.search({ query: "word", signal: controller.signal })).rejects.toThrow(
      "caller gone",
    );
  });

  it("a session deleted while the search runs is left out", async () => {
    const { memory, ids } = await seeded();
    const engine: StorageEngine = Object.assign(Object.create(memory) as MemoryEngine, {
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
    const engine: StorageEngine = Object.assign(Object.create(memory) as MemoryEngine, {
      async read() {
        throw unavailable("disk on fire");
      },
    });
    await expectCode(storeOn(engine).search({ query: "word" }), "UNAVAILABLE", "disk on fire");
  });

  it("a session whose record is gone by the time the page is titled keeps its root's title", async () => {
    const { memory } = await seeded();
    const engine: StorageEngine = Object.assign(Object.create(memory) as MemoryEngine, {
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
    const engine: StorageEngine = Object.assign(Object.create(memory) as MemoryEngine, {
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
    const engine: StorageEngine = Object.assign(Object.create(memory) as MemoryEngine, {
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
