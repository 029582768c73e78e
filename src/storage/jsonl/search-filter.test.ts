import { copyFile, readdir, readFile, rename, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { assistant, user } from "../../../test/support/fixtures.js";
import { sealedTestDirs } from "../../../test/support/jsonl/sealed-dirs.js";
import type { SearchInput } from "../../store/search/search.js";
import { SessionStore } from "../../store/session-store.js";
import { type FsOps, nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { filterPath } from "./search-filter.js";

/**
 * The search filter of sealed sessions (search-filter.ts): a search on a
 * sealed workspace finds exactly what it finds on a clear one, while the
 * sessions and records the filter rules out are not opened; the filter
 * follows appends, and forgets what redaction and erasure remove.
 */

const SEALED = "secret";
const CLEAR = "plain";
const MARKERS = ["MARKER-ALPHA-7f3a", "MARKER-BRAVO-19c2", "MARKER-CHARLIE-e04d"];

const dirs = sealedTestDirs();
/** Log files (`.jsonl`) the engines opened, by base name, since the last reset. */
let opened: string[] = [];

const countingFs: FsOps = {
  ...nodeFs,
  open(p, flags, mode) {
    if (p.endsWith(".jsonl")) opened.push(path.basename(p, ".jsonl"));
    return nodeFs.open(p, flags, mode);
  },
};

beforeEach(() => {
  opened = [];
});

function newStore(): SessionStore {
  return new SessionStore(
    new JsonlEngine({
      dataDir: dirs.dataDir,
      fs: countingFs,
      encryption: { keys: dirs.keyring, workspaces: [SEALED] },
    }),
  );
}

const TEXTS: Record<string, string[]> = {
  s1: [`Hello, World! please keep ${MARKERS[0]} safe`, "the naïve café serves crème brûlée"],
  s2: [`I will keep ${MARKERS[1]} and ${MARKERS[2]}`, "Rare word: ZyxWvut appears once."],
  s3: ["straße STRASSE Σίσυφος ς", "a b c; x-y_z (parenthesised) 3.14159"],
  s4: ["nothing special here", "just ordinary words, mostly"],
};

async function fill(store: SessionStore, workspace: string): Promise<void> {
  for (const [id, [u, a]] of Object.entries(TEXTS)) {
    await store.create({ workspace, sessionId: id });
    const s = await store.open(workspace, id);
    await s.append([user("u1", u)]);
    await s.append([assistant("a1", a)]);
  }
}

async function hits(store: SessionStore, input: SearchInput): Promise<string[]> {
  const res = await store.search({ pageSize: 100, ...input });
  return res.hits.map((h) => `${h.sessionId}/${h.entryId}`);
}

/** The session ids whose logs were opened by `run`. */
async function logsOpenedBy(run: () => Promise<unknown>): Promise<string[]> {
  opened = [];
  await run();
  return [...new Set(opened)].sort();
}

/** Where a filter file's bits start: after its header (magic, four numbers, a count) and index. */
const BITS_AT = (file: Buffer): number => 44 + file.readUInt32LE(40) * 8;

function sidecar(workspace: string, id: string): string {
  return filterPath(path.join(dirs.dataDir, workspace, "sessions", `${id}.jsonl`));
}

async function sidecarsHoldMarkers(): Promise<string[]> {
  const found: string[] = [];
  const dir = path.join(dirs.dataDir, SEALED, "sessions");
  for (const name of await readdir(dir)) {
    if (!name.endsWith(".search")) continue;
    const bytes = await readFile(path.join(dir, name));
    for (const m of [...MARKERS, ...MARKERS.map((x) => x.toLowerCase())]) {
      if (bytes.includes(m)) found.push(`${name}: ${m}`);
    }
  }
  return found;
}

const QUERIES = [
  "zyxwvut",
  "ZYXWVUT",
  "zyx",
  "xwv",
  "wvut appears",
  "hello",
  "HELLO, world!",
  "world!",
  "keep",
  "marker-bravo",
  "bravo-19c2",
  "7F3A",
  "naïve",
  "CAFÉ",
  "brûl",
  "STRASSE",
  "straße",
  "σίσυφος",
  "ΣΊΣΥΦΟΣ",
  "x-y_z",
  "(parenthesised)",
  "3.14",
  "a",
  "b c",
  "ordinary words",
  "nowhere-at-all",
  "qq",
];

describe("search on sealed sessions with the search filter", () => {
  it("finds exactly what the same search finds on a clear workspace, before and after the filter exists", async () => {
    const store = newStore();
    await fill(store, SEALED);
    await fill(store, CLEAR);
    for (const round of ["building", "built"]) {
      for (const query of QUERIES) {
        const clear = await hits(store, { workspace: CLEAR, query });
        expect({ round, query, hits: await hits(store, { workspace: SEALED, query }) }).toEqual({
          round,
          query,
          hits: clear,
        });
      }
    }
    // Page by page (a page's scan of a session starts after a seq).
    for (const query of ["keep", "a", "hello", "words"]) {
      const paged = async (workspace: string) => {
        const out: string[] = [];
        let pageToken = "";
        do {
          const res = await store.search({ workspace, query, pageSize: 1, pageToken });
          out.push(...res.hits.map((h) => `${h.sessionId}/${h.entryId}`));
          pageToken = res.nextPageToken;
        } while (pageToken !== "");
        return out;
      };
      expect({ query, hits: await paged(SEALED) }).toEqual({ query, hits: await paged(CLEAR) });
    }
    await store.close();
    // A fresh engine reads the filters beside the logs.
    const fresh = newStore();
    for (const query of QUERIES) {
      const clear = await hits(fresh, { workspace: CLEAR, query });
      expect({ query, hits: await hits(fresh, { workspace: SEALED, query }) }).toEqual({
        query,
        hits: clear,
      });
    }
    await fresh.close();
  });

  it("opens no sealed log its filter rules out, in the engine that built it and in a fresh one", async () => {
    const store = newStore();
    await fill(store, SEALED);
    // The first search opens every log (and builds the filters).
    expect(await logsOpenedBy(() => hits(store, { workspace: SEALED, query: "zyxwvut" }))).toEqual([
      "s1",
      "s2",
      "s3",
      "s4",
    ]);
    expect(
      await logsOpenedBy(async () => {
        expect(await hits(store, { workspace: SEALED, query: "ZyxWvut" })).toEqual(["s2/a1"]);
      }),
    ).toEqual(["s2"]);
    expect(
      await logsOpenedBy(() => hits(store, { workspace: SEALED, query: "nowhere-at-all" })),
    ).toEqual([]);
    await store.close();
    const fresh = newStore();
    // (Its first listing reads the logs' first lines: not the search's doing.)
    await fresh.list({ workspace: SEALED });
    expect(
      await logsOpenedBy(async () => {
        expect(await hits(fresh, { workspace: SEALED, query: "café serves" })).toEqual(["s1/a1"]);
      }),
    ).toEqual(["s1"]);
    await fresh.close();
    // Never in clear in the filters.
    expect(await sidecarsHoldMarkers()).toEqual([]);
  });

  it("finds a word of an entry appended after the filter was built", async () => {
    const store = newStore();
    await fill(store, SEALED);
    expect(await hits(store, { workspace: SEALED, query: "latecomer" })).toEqual([]);
    const before = await readFile(sidecar(SEALED, "s4"));
    const s = await store.open(SEALED, "s4");
    await s.append([user("u2", "a Latecomer word")]);
    expect(await hits(store, { workspace: SEALED, query: "latecomer" })).toEqual(["s4/u2"]);
    // The filter now covers the new entry too (it grew), and a fresh engine finds it through it.
    expect((await readFile(sidecar(SEALED, "s4"))).length).toBeGreaterThan(before.length);
    await s.append([assistant("a2", "and another newcomer")]);
    await store.close();
    const fresh = newStore();
    await fresh.list({ workspace: SEALED });
    expect(await hits(fresh, { workspace: SEALED, query: "latecomer" })).toEqual(["s4/u2"]);
    expect(await hits(fresh, { workspace: SEALED, query: "newcomer" })).toEqual(["s4/a2"]);
    expect(await logsOpenedBy(() => hits(fresh, { workspace: SEALED, query: "newcomer" }))).toEqual(
      ["s4"],
    );
    await fresh.close();
  });

  it("after an erasure: the filter file is gone and the old words are not found", async () => {
    const store = newStore();
    await fill(store, SEALED);
    expect(await hits(store, { workspace: SEALED, query: MARKERS[1] as string })).toEqual([
      "s2/u1",
    ]);
    expect((await readFile(sidecar(SEALED, "s2"))).length).toBeGreaterThan(0);
    await store.erase({ workspace: SEALED, sessionIds: ["s2"], by: "dpo", why: "request" });
    await expect(readFile(sidecar(SEALED, "s2"))).rejects.toThrow(/ENOENT/);
    for (const m of MARKERS.slice(1)) {
      expect(await hits(store, { workspace: SEALED, query: m })).toEqual([]);
    }
    expect(await hits(store, { workspace: SEALED, query: "zyxwvut" })).toEqual([]);
    await store.close();
    const fresh = newStore();
    expect(await hits(fresh, { workspace: SEALED, query: "zyxwvut" })).toEqual([]);
    await fresh.close();
    await expect(readFile(sidecar(SEALED, "s2"))).rejects.toThrow(/ENOENT/);
    expect(await sidecarsHoldMarkers()).toEqual([]);
  });

  it("after a redaction: the filter is dropped and the one rebuilt does not hold the redacted words", async () => {
    const store = newStore();
    await fill(store, SEALED);
    expect(await hits(store, { workspace: SEALED, query: "zyxwvut" })).toEqual(["s2/a1"]);
    await (await store.open(SEALED, "s2")).redact(["a1"], { by: "ops", why: "pasted secret" });
    await expect(readFile(sidecar(SEALED, "s2"))).rejects.toThrow(/ENOENT/);
    expect(await hits(store, { workspace: SEALED, query: "zyxwvut" })).toEqual([]);
    // Rebuilt by that search: it rules s2 out for the redacted word, not for a kept one.
    expect((await readFile(sidecar(SEALED, "s2"))).length).toBeGreaterThan(0);
    expect(await logsOpenedBy(() => hits(store, { workspace: SEALED, query: "zyxwvut" }))).toEqual(
      [],
    );
    expect(await hits(store, { workspace: SEALED, query: MARKERS[1] as string })).toEqual([
      "s2/u1",
    ]);
    await store.close();
    expect(await sidecarsHoldMarkers()).toEqual([]);
  });

  it("ignores a damaged filter, and one left from a replaced log, and rebuilds it", async () => {
    const store = newStore();
    await fill(store, SEALED);
    expect(await hits(store, { workspace: SEALED, query: "zyxwvut" })).toEqual(["s2/a1"]);
    await store.close();
    // Every bit cleared (the MAC kept): trusted, it would rule every record out.
    const file = sidecar(SEALED, "s2");
    const good = await readFile(file);
    const zeroed = Buffer.from(good);
    zeroed.fill(0, BITS_AT(good), zeroed.length - 32);
    await writeFile(file, zeroed);
    let fresh = newStore();
    expect(await hits(fresh, { workspace: SEALED, query: "zyxwvut" })).toEqual(["s2/a1"]);
    await fresh.close();
    expect(await readFile(file)).toEqual(good);
    // Cut short.
    await writeFile(file, good.subarray(0, good.length - 10));
    fresh = newStore();
    expect(await hits(fresh, { workspace: SEALED, query: "zyxwvut" })).toEqual(["s2/a1"]);
    await fresh.close();
    expect(await readFile(file)).toEqual(good);

    // Out of date: the log replaced by an older copy of it, then appended to by
    // a fresh engine; the filter of the longer log covers seqs that now hold other words.
    const log = path.join(dirs.dataDir, SEALED, "sessions", "s4.jsonl");
    const older = await readFile(log);
    fresh = newStore();
    await (await fresh.open(SEALED, "s4")).append([user("u2", "first version of seq four")]);
    expect(await hits(fresh, { workspace: SEALED, query: "version" })).toEqual(["s4/u2"]);
    await fresh.close();
    const staleFilter = await readFile(sidecar(SEALED, "s4"));
    await writeFile(`${log}.old`, older);
    await rename(`${log}.old`, log);
    fresh = newStore();
    await (await fresh.open(SEALED, "s4")).append([user("u2", "second edition of seq four")]);
    await fresh.close();
    await writeFile(sidecar(SEALED, "s4"), staleFilter);
    fresh = newStore();
    expect(await hits(fresh, { workspace: SEALED, query: "edition" })).toEqual(["s4/u2"]);
    expect(await hits(fresh, { workspace: SEALED, query: "version" })).toEqual([]);
    await fresh.close();
  });

  it("ignores another session's filter moved in place (keyed by session)", async () => {
    const store = newStore();
    await fill(store, SEALED);
    expect(await hits(store, { workspace: SEALED, query: "zyxwvut" })).toEqual(["s2/a1"]);
    await store.close();
    // s4's filter rules "zyxwvut" out; put in s2's place, it would hide s2's hit.
    // Moved as it is (it names s4's log), and with s2's log named in it.
    const own = await readFile(sidecar(SEALED, "s2"));
    await copyFile(sidecar(SEALED, "s4"), sidecar(SEALED, "s2"));
    const first = newStore();
    expect(await hits(first, { workspace: SEALED, query: "zyxwvut" })).toEqual(["s2/a1"]);
    await first.close();
    expect(await readFile(sidecar(SEALED, "s2"))).toEqual(own);
    const moved = await readFile(sidecar(SEALED, "s4"));
    own.copy(moved, 8, 8, 24);
    await writeFile(sidecar(SEALED, "s2"), moved);
    const fresh = newStore();
    expect(await hits(fresh, { workspace: SEALED, query: "zyxwvut" })).toEqual(["s2/a1"]);
    expect(await hits(fresh, { workspace: SEALED, query: "ZYXWVUT" })).toEqual(["s2/a1"]);
    await fresh.close();
    expect(await readFile(sidecar(SEALED, "s2"))).not.toEqual(
      await readFile(sidecar(SEALED, "s4")),
    );
  });
});
