import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { say, scanning, storeOn } from "../../../test/support/search-fixtures.js";
import { ENGINE_FACTORIES } from "../../../test/support/store-model.js";
import { dataLoss } from "../../core/errors.js";
import type { SessionKey } from "../../storage/engine.js";
import { JsonlEngine } from "../../storage/jsonl/jsonl-engine.js";
import { MemoryEngine } from "../../storage/memory.js";
import { SessionStore } from "../session-store.js";

/**
 * Search of corrupt sessions: searched up to the damage and named in
 * partial_session_ids only when a page's scan reached it (JSONL, and the
 * page-by-page read of engines without a scan of their own).
 */

describe("search over an engine without its own scan", () => {
  it("reads the log page by page through read()", async () => {
    const memory = ENGINE_FACTORIES.find((f) => f.name === "memory");
    if (memory === undefined) throw new Error("no memory engine");
    const fixture = await memory.open();
    try {
      const engine = scanning(fixture.engine);
      expect(engine.scanEntries).toBeUndefined();
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
    const engine = scanning(memory, {
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
