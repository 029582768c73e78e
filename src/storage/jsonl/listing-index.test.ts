import { readdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { create, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { SessionMetaSchema } from "../../../gen/sessiond/v1/session_pb.js";
import { SessionFilterSchema } from "../../../gen/sessiond/v1/store_service_pb.js";
import { removeDir, tempDir, WS } from "../../../test/support/jsonl/fixtures.js";
import { listingFields } from "../../../test/support/jsonl/listing-index-fixtures.js";
import { storeOn } from "../../../test/support/search-fixtures.js";
import type { SessionStore } from "../../store/session-store.js";
import type { SessionRecord } from "../engine.js";
import { nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { decodeIndex } from "./listing-index-codec.js";
import { LISTING_INDEX_NAME } from "./listing-index-file.js";

/**
 * The persisted listing index (listing-index.ts) is a cache the session
 * files overrule: whatever happened to the files while no engine ran —
 * appends, tag changes, deletes, a session created again under the same
 * id, damage — and whatever happened to the index itself, a restarted
 * engine lists exactly what an engine without an index lists (the
 * reference: an injected file system gets no index and no watches).
 */

let dataDir: string;
beforeEach(async () => {
  dataDir = await tempDir("sessiond-listing-index-");
});
afterEach(async () => {
  vi.restoreAllMocks();
  await removeDir(dataDir);
});

const indexFile = () => path.join(dataDir, WS, LISTING_INDEX_NAME);

/** An engine with the index (the real file system). */
const indexed = () => new JsonlEngine({ dataDir });
/** An engine without one: the truth of the files. */
const reference = () => new JsonlEngine({ dataDir, fs: { ...nodeFs } });

const FILTERS: (MessageInitShape<typeof SessionFilterSchema> | undefined)[] = [
  undefined,
  { tags: { user: "u1" } },
  { tags: { team: "t0", user: "u2" } },
  { titleContains: "ALPHA" },
];

/** Every page of every filter, both orders, by creation and update time: the metas as JSON. */
async function listings(store: SessionStore): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const f of FILTERS) {
    for (const sortBy of ["created", "updated"] as const) {
      for (const order of ["newest", "oldest"] as const) {
        let pageToken = "";
        do {
          const page = await store.list({
            workspace: WS,
            pageSize: 7,
            pageToken,
            order,
            sortBy,
            filter: f === undefined ? undefined : create(SessionFilterSchema, f),
          });
          out.push(page.sessions.map((m) => toJson(SessionMetaSchema, m)));
          pageToken = page.nextPageToken;
        } while (pageToken !== "");
      }
    }
  }
  return out;
}

/** The engine's records of the whole workspace, after its roots (as a listing asks), comparable across engines. */
async function records(engine: JsonlEngine): Promise<unknown[]> {
  await engine.listRoots(WS);
  // The fields of a SessionRecord only (a record loaded from the index carries more).
  const plain = (r: SessionRecord) => ({
    workspace: r.workspace,
    sessionId: r.sessionId,
    root: r.root === undefined ? undefined : toJson(EntrySchema, r.root),
    ...listingFields(r),
  });
  return (await engine.list(WS)).map(plain).sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));
}

const say = (text: string) =>
  create(EntrySchema, {
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
const retag = (tags: Record<string, string>, title?: string) =>
  create(EntrySchema, { kind: { case: "sessionInfo", value: { tags, title } } });

/** 24 sessions (3 of them with a subagent), tagged and titled, with a few messages each. */
async function seed(store: SessionStore): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 24; i++) {
    const id = `s${String(i).padStart(2, "0")}`;
    await store.create({
      workspace: WS,
      sessionId: id,
      title: i % 3 === 0 ? `alpha ${i}` : `beta ${i}`,
      tags: { user: `u${i % 4}`, team: `t${i % 3}` },
    });
    const s = await store.open(WS, id);
    for (let m = 0; m < 1 + (i % 3); m++) await s.append(say(`message ${m} of ${id}`));
    if (i % 8 === 1) {
      await store.create({ workspace: WS, sessionId: `${id}-sub`, parentSessionId: id });
    }
    ids.push(id);
  }
  return ids;
}

/** Changes of every kind, made by an engine without the index (another process, say). */
async function changeBehindTheIndex(ids: readonly string[]): Promise<void> {
  const engine = reference();
  const store = storeOn(engine);
  try {
    for (const id of ids.slice(0, 5)) await (await store.open(WS, id)).append(say(`later ${id}`));
    for (const id of ids.slice(5, 9)) {
      await (await store.open(WS, id)).append(retag({ user: "u1", team: "t0" }, `ALPHA ${id}`));
    }
    for (const id of ids.slice(9, 13)) await store.delete(WS, id, { includeSubagents: true });
    // Created again under the same ids: other files, other roots.
    for (const id of ids.slice(9, 11)) {
      await store.create({
        workspace: WS,
        sessionId: id,
        title: "alpha again",
        tags: { user: "u2" },
      });
    }
    for (let i = 0; i < 3; i++) {
      await store.create({ workspace: WS, sessionId: `new${i}`, tags: { user: "u1", team: "t0" } });
    }
  } finally {
    await engine.close();
  }
  // A damaged session: a line that is no record after its last one.
  await writeFile(path.join(dataDir, WS, "sessions", `${ids[13]}.jsonl`), "not a record\n", {
    flag: "a",
  });
}

/** Lists with an indexed engine (learning the index) and closes it (saving the index). */
async function listAndClose(): Promise<unknown[]> {
  const engine = indexed();
  try {
    return await listings(storeOn(engine));
  } finally {
    await engine.close();
  }
}

async function expectSameAsFiles(): Promise<void> {
  const ref = reference();
  const engine = indexed();
  try {
    expect(await listings(storeOn(engine))).toEqual(await listings(storeOn(ref)));
    expect(await records(engine)).toEqual(await records(ref));
  } finally {
    await engine.close();
    await ref.close();
  }
}

async function savedRecords(): Promise<number> {
  const files = decodeIndex(await readFile(indexFile()), WS) ?? [];
  return files.filter((f) => f.record !== undefined).length;
}

async function savedFiles(): Promise<number> {
  return decodeIndex(await readFile(indexFile()), WS)?.length ?? -1;
}

describe("persisted listing index", () => {
  it("a restarted engine lists what the files say after changes made while it was down", async () => {
    const engine = indexed();
    const ids = await seed(storeOn(engine));
    await listings(storeOn(engine));
    await engine.close();
    // Every session, top-level and subagent, is in the saved index, with its record (the
    // creating engine had them open, and saves their records as the files stand at close).
    expect(await savedFiles()).toBe(27);
    expect(await savedRecords()).toBe(27);
    await listAndClose();
    expect(await savedRecords()).toBe(27);
    await changeBehindTheIndex(ids);
    await expectSameAsFiles();
  });

  it("without its checks (the negative control) the same changes leave the listing stale", async () => {
    const engine = indexed();
    const ids = await seed(storeOn(engine));
    await engine.close();
    await listAndClose();
    await changeBehindTheIndex(ids);
    const ref = reference();
    const blind = new JsonlEngine({ dataDir, debug: { noListingIndexCheck: true } });
    try {
      expect(await records(blind)).not.toEqual(await records(ref));
    } finally {
      await blind.close();
      await ref.close();
    }
  });

  it("the saved index spares the first listing after a restart every read of a session file", async () => {
    const engine = indexed();
    await seed(storeOn(engine));
    await engine.close();
    const before = await listAndClose();
    const open = vi.spyOn(nodeFs, "open");
    const sessionReads = () => open.mock.calls.filter(([p]) => p.endsWith(".jsonl")).length;
    const again = indexed();
    try {
      expect(await listings(storeOn(again))).toEqual(before);
      expect(sessionReads()).toBe(0);
    } finally {
      await again.close();
    }
    // Without the index the same listing reads every file whole (so the count above can fail).
    await removeDir(indexFile());
    const cold = indexed();
    try {
      expect(await listings(storeOn(cold))).toEqual(before);
      // (the 24 top-level sessions: these listings show no subagents).
      expect(sessionReads()).toBe(24);
    } finally {
      await cold.close();
    }
  });

  it("sessions written after the last listing are saved with their records at close", async () => {
    const engine = indexed();
    const store = storeOn(engine);
    const ids = await seed(store);
    await listings(store);
    // Written after the listing: the records the listing remembered are of older states.
    for (const id of ids.slice(0, 5)) await (await store.open(WS, id)).append(say(`later ${id}`));
    for (const id of ids.slice(5, 8)) {
      await (await store.open(WS, id)).append(retag({ user: "u1" }, `ALPHA ${id}`));
    }
    await store.create({ workspace: WS, sessionId: "late", tags: { user: "u1" } });
    await engine.close();
    const open = vi.spyOn(nodeFs, "open");
    const sessionReads = () => open.mock.calls.filter(([p]) => p.endsWith(".jsonl")).length;
    const again = indexed();
    const ref = reference();
    try {
      const seen = await listings(storeOn(again));
      // The index holds every record as the files stand: nothing is read whole...
      expect(sessionReads()).toBe(0);
      // ...and the listings are those of the files.
      expect(seen).toEqual(await listings(storeOn(ref)));
      expect(await records(again)).toEqual(await records(ref));
    } finally {
      await again.close();
      await ref.close();
    }
  });

  const damages: [string, (bytes: Buffer) => Buffer | undefined][] = [
    ["deleted", () => undefined],
    ["cut in half", (b) => b.subarray(0, b.length >> 1)],
    ["with a flipped byte", (b) => Buffer.from(b.map((x, i) => (i === b.length - 9 ? x ^ 1 : x)))],
    ["of another version", (b) => Buffer.from(b.toString().replace('"version":1', '"version":2'))],
    ["empty", () => Buffer.alloc(0)],
  ];
  for (const [what, damage] of damages) {
    it(`an index ${what} is ignored, and written again from the files`, async () => {
      const engine = indexed();
      const ids = await seed(storeOn(engine));
      await listings(storeOn(engine));
      await engine.close();
      await changeBehindTheIndex(ids);
      const damaged = damage(await readFile(indexFile()));
      if (damaged === undefined) await removeDir(indexFile());
      else await writeFile(indexFile(), damaged);
      await expectSameAsFiles();
      // The engine above listed and closed: the index is whole again (sessions as now: 24 - 4 + 2 + 3, 2 subagents).
      expect(await savedFiles()).toBe(25 + 2);
    });
  }

  it("two engines saving the index of one workspace at once leave a whole one", async () => {
    const engine = indexed();
    const ids = await seed(storeOn(engine));
    await engine.close();
    await Promise.all([listAndClose(), listAndClose(), listAndClose()]);
    expect(await savedFiles()).toBe(27);
    // No temp file of the three saves is left behind.
    expect((await readdir(path.join(dataDir, WS))).sort()).toEqual([
      LISTING_INDEX_NAME,
      "sessions",
    ]);
    await changeBehindTheIndex(ids);
    await expectSameAsFiles();
  });

  it("an engine that only reads the data dir writes no index", async () => {
    const engine = indexed();
    await seed(storeOn(engine));
    await engine.close();
    const reader = new JsonlEngine({ dataDir, need: "readable" });
    await listings(storeOn(reader));
    await reader.close();
    await expect(readFile(indexFile())).rejects.toThrow(/ENOENT/);
  });
});
