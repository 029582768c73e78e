import { readdir, readFile, stat, unlink } from "node:fs/promises";
import * as path from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Entry, EntrySchema, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { assistant, toolResult, user } from "../../test/support/fixtures.js";
import { removeDir, tempDir } from "../../test/support/jsonl/fixtures.js";
import { openPostgres, pgSkip } from "../../test/support/store-engines.js";
import { isSessiondError } from "../core/errors.js";
import { textOf } from "../core/message-text.js";
import type { StorageEngine } from "../storage/engine.js";
import { JsonlEngine } from "../storage/jsonl/jsonl-engine.js";
import { keyPath } from "../storage/jsonl/session-keys.js";
import { LocalKeyring } from "../storage/keys/local-keyring.js";
import { MemoryEngine } from "../storage/memory.js";
import { PostgresEngine } from "../storage/postgres/postgres-engine.js";
import { SessionStore } from "./session-store.js";
import type { EntryWatchEvent } from "./watch/watch-entries.js";

/**
 * Erasure (SessionStore.erase, issue 41 part 2) on memory, JSONL in clear
 * and JSONL sealed: the content of the chosen sessions and their subagents
 * is gone from every file of the data dir (sealed: the key destroyed, its
 * file a tombstone; clear: the log rewritten), reads / CONTEXT / search
 * show the erased marker with the tree unchanged, one audit record
 * without content is written, a restart reads the erased state, and
 * erasing again changes nothing. PostgreSQL (in clear) runs the same
 * cases; what is PostgreSQL's own (dead tuples, pg_dump, replicas) is in
 * src/storage/postgres/erase.test.ts.
 */

const CLOCK = new Date("2026-05-06T07:08:09.000Z");
const WS = "acme";
const ERASED = ["ERASEME-PARENT-1a2b", "ERASEME-CHILD-3c4d", "ERASEME-GRANDCHILD-5e6f"];
const KEPT = "KEEPME-OTHER-7a8b";

interface Case {
  readonly name: string;
  readonly files: boolean;
  readonly sealed: boolean;
  /** Whether a second engine on the same storage sees what the first wrote (a restart). */
  readonly reopens: boolean;
  /** A new engine; `fresh`: over emptied storage (the first of a test), else over the same. */
  open(dir: string, keyring: LocalKeyring, fresh: boolean): StorageEngine | Promise<StorageEngine>;
}

/** The file's PostgreSQL database, emptied for each test (audit records too). */
let pgUrl: string | undefined;
async function openPg(fresh: boolean): Promise<StorageEngine> {
  if (!fresh && pgUrl !== undefined) return PostgresEngine.open({ url: pgUrl });
  const { engine, url } = await openPostgres();
  pgUrl = url;
  return engine;
}

const CASES: Case[] = [
  { name: "memory", files: false, sealed: false, reopens: false, open: () => new MemoryEngine() },
  {
    name: "jsonl in clear",
    files: true,
    sealed: false,
    reopens: true,
    open: (dataDir) => new JsonlEngine({ dataDir }),
  },
  {
    name: "jsonl sealed",
    files: true,
    sealed: true,
    reopens: true,
    open: (dataDir, keys) => new JsonlEngine({ dataDir, encryption: { keys, workspaces: [WS] } }),
  },
  ...(pgSkip === undefined
    ? [
        {
          name: "postgres in clear",
          files: false,
          sealed: false,
          reopens: true,
          open: (_dir: string, _keys: LocalKeyring, fresh: boolean) => openPg(fresh),
        },
      ]
    : []),
];

async function allFiles(dir: string): Promise<{ file: string; bytes: Buffer }[]> {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    // Session lock files come and go with leases (a file listed may be gone at its stat).
    if (name.endsWith(".lock")) continue;
    const file = path.join(dir, name);
    if ((await stat(file)).isFile()) out.push({ file, bytes: await readFile(file) });
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : 1));
}

async function markersIn(dir: string, markers: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const { bytes } of await allFiles(dir)) {
    for (const m of markers) if (bytes.includes(m)) found.add(m);
  }
  return [...found].sort();
}

/** id, parent, seq and kind of every entry: the tree erasure keeps. */
function shape(entries: readonly Entry[]): string[] {
  return entries.map((e) => `${e.seq}:${e.id}<${e.parentId ?? ""}:${e.kind.case}`);
}

async function entriesOf(store: SessionStore, id: string): Promise<Entry[]> {
  return (await (await store.open(WS, id)).entries(0, 1000)).entries;
}

describe.each(CASES)("erasure on $name", (c) => {
  let dataDir: string;
  let keyDir: string;
  let keyring: LocalKeyring;
  let engine: StorageEngine;
  let store: SessionStore;

  beforeEach(async () => {
    dataDir = await tempDir();
    keyDir = await tempDir("sessiond-keys-");
    keyring = await LocalKeyring.open(path.join(keyDir, "keyring.json"), { create: true });
    engine = await c.open(dataDir, keyring, true);
    store = new SessionStore(engine, { now: () => CLOCK });
    // p (user=42) ─ subagent c ─ subagent g; q (user=42, team=x); o (user=7)
    await store.create({ workspace: WS, sessionId: "p", title: "parent", tags: { user: "42" } });
    await (await store.open(WS, "p")).append([
      user("u1", `my card is ${ERASED[0]}`),
      assistant("a1", `calling a tool about ${ERASED[0]}`, ["call1"]),
      toolResult("t1", "call1"),
    ]);
    await store.create({ workspace: WS, sessionId: "c", parentSessionId: "p", agentType: "x" });
    await (await store.open(WS, "c")).append([user("cu1", `child saw ${ERASED[1]}`)]);
    await store.create({ workspace: WS, sessionId: "g", parentSessionId: "c", agentType: "x" });
    await (await store.open(WS, "g")).append([user("gu1", `grandchild saw ${ERASED[2]}`)]);
    await store.create({ workspace: WS, sessionId: "o", tags: { user: "7" } });
    await (await store.open(WS, "o")).append([user("ou1", `other user ${KEPT}`)]);
  });

  afterEach(async () => {
    await engine.close();
    await removeDir(dataDir);
    await removeDir(keyDir);
  });

  it("erasing a session by id erases it and its subagents, and their content leaves every file", async () => {
    const before = new Map<string, string[]>();
    for (const id of ["p", "c", "g"]) before.set(id, shape(await entriesOf(store, id)));
    if (c.files)
      expect(await markersIn(dataDir, [...ERASED, KEPT])).toEqual(
        c.sealed ? [] : [...ERASED, KEPT].sort(),
      );

    const rec = await store.erase({
      workspace: WS,
      sessionIds: ["p"],
      by: "dpo@acme",
      why: "GDPR #12",
    });

    expect(rec.sessionIds).toEqual(["p", "c", "g"]);
    expect(rec.sessions).toBe(3);
    expect(rec.entries).toBe(5);
    expect(rec.newlyErased).toBe(5);
    for (const id of ["p", "c", "g"]) {
      const entries = await entriesOf(store, id);
      expect(shape(entries)).toEqual(before.get(id));
      for (const e of entries.slice(1)) {
        expect(e.withheld?.reason).toBe(WithheldReason.ERASED);
        expect(e.withheld?.by).toBe("dpo@acme");
      }
      expect(entries.map((e) => toJsonString(EntrySchema, e)).join()).not.toMatch(/ERASEME/);
    }
    // The other session is untouched.
    expect(
      JSON.stringify((await entriesOf(store, "o")).map((e) => toJsonString(EntrySchema, e))),
    ).toContain(KEPT);
    if (c.files) {
      expect(await markersIn(dataDir, ERASED)).toEqual([]);
      if (!c.sealed) expect(await markersIn(dataDir, [KEPT])).toEqual([KEPT]);
    }
    if (c.sealed) {
      for (const rel of [
        "sessions/p.key",
        "sessions/subagents/c.key",
        "sessions/subagents/g.key",
      ]) {
        const k = JSON.parse(await readFile(path.join(dataDir, WS, rel), "utf8"));
        expect(k.erased.by).toBe("dpo@acme");
        expect(k.wrapped).toBeUndefined();
        expect(k.keyId).toBeUndefined();
      }
    }
  });

  it("after erasure CONTEXT shows the erased marker and search finds nothing in it", async () => {
    const hits = async (q: string, parent?: string) =>
      (await store.search({ workspace: WS, query: q, parentSessionId: parent })).hits.map(
        (h) => h.entryId,
      );
    expect(await hits("ERASEME-PARENT-1a2b")).toEqual(["u1", "a1"]);
    await store.erase({ workspace: WS, sessionIds: ["p"], by: "dpo", why: "" });
    expect(await hits("ERASEME-PARENT-1a2b")).toEqual([]);
    expect(await hits("ERASEME-CHILD-3c4d", "p")).toEqual([]);
    expect(await hits("KEEPME-OTHER-7a8b")).toEqual(["ou1"]);
    const state = await (await store.open(WS, "p")).state({ view: View.HISTORY });
    expect(state.messages.map((m) => [m.entryId, textOf(m)])).toEqual([
      ["u1", "[erased]"],
      ["a1", "[erased]"],
      ["t1", "[erased]"],
    ]);
  });

  it("a tag filter erases exactly the sessions whose tags match, with their subagents", async () => {
    await store.create({ workspace: WS, sessionId: "q", tags: { user: "42", team: "x" } });
    await (await store.open(WS, "q")).append([user("qu1", `q said ${ERASED[0]}`)]);
    const rec = await store.erase({
      workspace: WS,
      tags: { user: "42" },
      by: "dpo",
      why: "user 42",
    });
    expect(rec.sessionIds).toEqual(["p", "c", "g", "q"]);
    expect(rec.request).toEqual({ tags: { user: "42" } });
    expect((await entriesOf(store, "q"))[1]?.withheld?.reason).toBe(WithheldReason.ERASED);
    expect((await entriesOf(store, "o"))[1]?.withheld).toBeUndefined();
    if (c.files) {
      expect(await markersIn(dataDir, ERASED)).toEqual([]);
      if (!c.sealed) expect(await markersIn(dataDir, [KEPT])).toEqual([KEPT]);
    }
  });

  it("the audit record holds who, when, what and how many, and no content; it reads back after a restart", async () => {
    await store.erase({ workspace: WS, sessionIds: ["p"], by: "dpo@acme", why: "GDPR #12" });
    await store.erase({ workspace: WS, all: true, by: "ops", why: "closing the account" });
    const records = await store.erasures(WS);
    expect(records.map((r) => [r.by, r.request, r.sessions, r.at])).toEqual([
      ["dpo@acme", { sessionIds: ["p"] }, 3, CLOCK.toISOString()],
      ["ops", { all: true }, 4, CLOCK.toISOString()],
    ]);
    expect(records[1]?.newlyErased).toBe(1);
    expect(JSON.stringify(records)).not.toMatch(/ERASEME|KEEPME/);
    if (c.files) {
      const audit = await readFile(path.join(dataDir, WS, "erasures.jsonl"), "utf8");
      expect(audit.trim().split("\n")).toHaveLength(2);
      expect(audit).not.toMatch(/ERASEME|KEEPME/);
    }
    if (c.reopens) {
      // A restart reads the erased state and the audit.
      await engine.close();
      engine = await c.open(dataDir, keyring, false);
      store = new SessionStore(engine, { now: () => CLOCK });
      expect(await store.erasures(WS)).toEqual(records);
      const entries = await entriesOf(store, "c");
      expect(entries[1]?.withheld?.reason).toBe(WithheldReason.ERASED);
      expect(entries.map((e) => toJsonString(EntrySchema, e)).join()).not.toMatch(/ERASEME/);
    }
  });

  it("erasing twice changes nothing and answers the same counts", async () => {
    const first = await store.erase({ workspace: WS, sessionIds: ["p"], by: "dpo", why: "x" });
    const bytes = c.files ? await allFiles(dataDir) : [];
    const entries = await entriesOf(store, "p");
    const later = new SessionStore(engine, { now: () => new Date(CLOCK.getTime() + 60_000) });
    const again = await later.erase({ workspace: WS, sessionIds: ["p"], by: "bob", why: "y" });
    expect([again.sessions, again.entries, again.newlyErased]).toEqual([
      first.sessions,
      first.entries,
      0,
    ]);
    expect((await entriesOf(store, "p")).map((e) => toJsonString(EntrySchema, e))).toEqual(
      entries.map((e) => toJsonString(EntrySchema, e)),
    );
    if (c.files) {
      const now = (await allFiles(dataDir)).filter((f) => !f.file.endsWith("erasures.jsonl"));
      expect(now).toEqual(bytes.filter((f) => !f.file.endsWith("erasures.jsonl")));
    }
  });

  it("a watcher of the session gets its entries as they now read", async () => {
    const s = await store.open(WS, "c");
    const watch = s.watch();
    const seen: string[] = [];
    for (;;) {
      const ev = (await watch.next()).value;
      if (ev?.type === "entry") seen.push(ev.entry.id);
      if (seen.length === 2) break;
    }
    await store.erase({ workspace: WS, sessionIds: ["c"], by: "dpo", why: "" });
    let ev: EntryWatchEvent | undefined = (await watch.next()).value;
    while (ev?.type === "heartbeat") ev = (await watch.next()).value;
    expect(ev?.type).toBe("withheld");
    if (ev?.type === "withheld") {
      expect(ev.entries.map((e) => [e.id, e.withheld?.reason])).toEqual([
        ["cu1", WithheldReason.ERASED],
      ]);
    }
    await watch.return(undefined);
  });

  it("bad requests are refused before anything is erased", async () => {
    const refused = async (
      input: Parameters<SessionStore["erase"]>[0],
      code: string,
      text: string,
    ) => {
      const err = await store.erase(input).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isSessiondError(err, code as "NOT_FOUND")).toBe(true);
      expect((err as Error).message).toContain(text);
    };
    await refused({ workspace: WS, sessionIds: ["p", "ghost"], by: "dpo" }, "NOT_FOUND", '"ghost"');
    await refused({ workspace: WS, sessionIds: ["p"], by: "" }, "INVALID_ARGUMENT", "by");
    await refused({ workspace: WS, by: "dpo" }, "INVALID_ARGUMENT", "exactly one");
    await refused(
      { workspace: WS, all: true, tags: { a: "b" }, by: "dpo" },
      "INVALID_ARGUMENT",
      "exactly one",
    );
    expect((await entriesOf(store, "p"))[1]?.withheld).toBeUndefined();
    expect(await store.erasures(WS)).toEqual([]);
  });

  if (c.sealed) {
    it("an erased sealed session takes no more entries, and a missing key file is still FAILED_PRECONDITION (lost is not erased)", async () => {
      await store.erase({ workspace: WS, sessionIds: ["g"], by: "dpo", why: "" });
      const err = await (await store.open(WS, "g"))
        .append([user("gu2", "more")])
        .catch((e: unknown) => e);
      expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
      expect((err as Error).message).toContain("erased");
      await unlink(keyPath(path.join(dataDir, WS, "sessions", "o.jsonl")));
      await engine.close();
      engine = await c.open(dataDir, keyring, false);
      store = new SessionStore(engine, { now: () => CLOCK });
      const lost = await entriesOf(store, "o").catch((e: unknown) => e);
      expect(isSessiondError(lost, "FAILED_PRECONDITION")).toBe(true);
      expect((await entriesOf(store, "g"))[1]?.withheld?.reason).toBe(WithheldReason.ERASED);
    });
  }
});

describe("erasure events in pages", () => {
  it("a large session's erasure reaches watchers in withheld events of at most 1000 entries", async () => {
    const engine = new MemoryEngine();
    const store = new SessionStore(engine, { now: () => CLOCK });
    await store.create({ workspace: WS, sessionId: "big" });
    const s = await store.open(WS, "big");
    let parent: string | undefined;
    for (let b = 0; b < 11; b++) {
      const batch = [];
      for (let i = 0; i < 100; i++) {
        const id = `m${b * 100 + i}`;
        batch.push(user(id, `text ${id}`, parent === undefined ? {} : { parentId: parent }));
        parent = id;
      }
      await s.append(batch);
    }
    const sizes: number[] = [];
    const unsubscribe = engine.subscribe((e) => {
      if (e.type === "withheld") sizes.push(e.seqs?.length ?? 0);
    });
    await store.erase({ workspace: WS, sessionIds: ["big"], by: "dpo" });
    unsubscribe();
    expect(sizes).toEqual([1000, 100]);
    await engine.close();
  });
});

describe("erasure on an engine without it", () => {
  it("is UNIMPLEMENTED with a message naming the engine, and nothing is erased", async () => {
    const memory = new MemoryEngine();
    // An engine of that shape (a third-party engine, or one from before erasure).
    const engine = Object.assign(Object.create(memory) as MemoryEngine, {
      kind: "postgres",
      erase: undefined,
      recordErasure: undefined,
      erasures: undefined,
    });
    const store = new SessionStore(engine, { now: () => CLOCK });
    await store.create({ workspace: WS, sessionId: "p" });
    await (await store.open(WS, "p")).append([user("u1", ERASED[0] as string)]);
    const err = await store
      .erase({ workspace: WS, sessionIds: ["p"], by: "dpo" })
      .catch((e: unknown) => e);
    expect(isSessiondError(err, "UNIMPLEMENTED")).toBe(true);
    expect((err as Error).message).toContain("postgres");
    const back = await store.erasures(WS).catch((e: unknown) => e);
    expect(isSessiondError(back, "UNIMPLEMENTED")).toBe(true);
    expect((await entriesOf(store, "p"))[1]?.withheld).toBeUndefined();
  });
});
