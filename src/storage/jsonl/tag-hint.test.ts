import { appendFile } from "node:fs/promises";
import * as path from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { SessionFilterSchema } from "../../../gen/sessiond/v1/store_service_pb.js";
import { freezeChangeReports } from "../../../test/support/jsonl/change-reports.js";
import { removeDir, tempDir, WS } from "../../../test/support/jsonl/fixtures.js";
import { storeOn } from "../../../test/support/search-fixtures.js";
import { JsonlEngine } from "./jsonl-engine.js";

/**
 * The JSONL engine's use of a listing's tag hint (StorageEngine.listRoots):
 * it leaves out only sessions whose record it would hand out now and whose
 * tags do not hold the hint's; every session it cannot vouch for stays, for
 * the store's filter to decide on the record `list` then gives.
 */

let dataDir: string;
let engine: JsonlEngine;
beforeEach(async () => {
  dataDir = await tempDir("sessiond-tag-hint-");
  engine = new JsonlEngine({ dataDir });
});
afterEach(async () => {
  await engine.close();
  await removeDir(dataDir);
});

const retag = (tags: Record<string, string>) =>
  create(EntrySchema, { kind: { case: "sessionInfo", value: { tags } } });
const byTags = (tags: Record<string, string>) => create(SessionFilterSchema, { tags });
const hinted = async (tags: Record<string, string>) =>
  (await engine.listRoots(WS, { tags })).map((r) => r.sessionId).sort();

it("leaves out the sessions whose vouched records do not hold the tags, and only those", async () => {
  const store = storeOn(engine);
  for (let i = 0; i < 6; i++) {
    await store.create({ workspace: WS, sessionId: `s${i}`, tags: { user: `u${i % 3}` } });
  }
  // Nothing remembered yet (no listing read a record): every session is kept.
  await store.close();
  engine = new JsonlEngine({ dataDir });
  expect(await hinted({ user: "u1" })).toEqual(["s0", "s1", "s2", "s3", "s4", "s5"]);
  // A filtered listing remembers every record: now the others are left out.
  const again = storeOn(engine);
  const page = await again.list({ workspace: WS, filter: byTags({ user: "u1" }) });
  expect(page.sessions.map((m) => m.id).sort()).toEqual(["s1", "s4"]);
  expect(await hinted({ user: "u1" })).toEqual(["s1", "s4"]);
  expect(await hinted({ user: "u1", team: "x" })).toEqual([]);
  // No hint, or an empty one: every root.
  expect((await engine.listRoots(WS)).length).toBe(6);
  expect((await engine.listRoots(WS, { tags: {} })).length).toBe(6);
  // A session this engine holds open (it just appended a tag change): kept, its record is read.
  await (await again.open(WS, "s0")).append(retag({ user: "u1" }));
  expect(await hinted({ user: "u1" })).toEqual(["s0", "s1", "s4"]);
  const after = await again.list({ workspace: WS, filter: byTags({ user: "u1" }) });
  expect(after.sessions.map((m) => m.id).sort()).toEqual(["s0", "s1", "s4"]);
});

it("keeps a session whose file changed since its record was read", async () => {
  const store = storeOn(engine);
  for (let i = 0; i < 3; i++) {
    await store.create({ workspace: WS, sessionId: `c${i}`, tags: { user: "u0" } });
  }
  await store.close();
  engine = new JsonlEngine({ dataDir });
  const again = storeOn(engine);
  await again.list({ workspace: WS, filter: byTags({ user: "u0" }) });
  expect(await hinted({ user: "u9" })).toEqual([]);
  // Damage written behind the engine's back: the change report (or the next stat) unvouches it.
  await appendFile(path.join(dataDir, WS, "sessions", "c1.jsonl"), "not a record\n");
  await expect.poll(() => hinted({ user: "u9" }), { timeout: 15_000 }).toEqual(["c1"]);
});

/**
 * Sessions o0..o2 tagged user=u0, then a fresh engine (`cacheSessions`,
 * write leases given back when idle) whose listing remembered every record.
 */
async function remembered(cacheSessions: number) {
  const store = storeOn(engine);
  for (let i = 0; i < 3; i++) {
    await store.create({ workspace: WS, sessionId: `o${i}`, tags: { user: "u0" } });
  }
  await store.close();
  freezeChangeReports();
  engine = new JsonlEngine({ dataDir, cacheSessions, leaseIdleMs: 1 });
  const again = storeOn(engine);
  const before = await again.list({ workspace: WS, filter: byTags({ user: "u0" }) });
  expect(before.sessions.map((m) => m.id).sort()).toEqual(["o0", "o1", "o2"]);
  return again;
}

/** What every listing path says of o1 after its retag to user=u1. */
async function expectRetagged(again: ReturnType<typeof storeOn>): Promise<void> {
  // (A hint may keep more: a session open in the cache is never left out.)
  expect(await hinted({ user: "u1" })).toContain("o1");
  const [record] = await engine.list(WS, ["o1"]);
  expect(record?.headSeq).toBe(2);
  expect(record?.tags).toEqual({ user: "u1" });
  const page = await again.list({ workspace: WS, filter: byTags({ user: "u1" }) });
  expect(page.sessions.map((m) => m.id)).toEqual(["o1"]);
  const rest = await again.list({ workspace: WS, filter: byTags({ user: "u0" }) });
  expect(rest.sessions.map((m) => m.id).sort()).toEqual(["o0", "o2"]);
}

it("lists a session it appended to as appended before the change report comes in", async () => {
  try {
    const again = await remembered(256);
    await (await again.open(WS, "o1")).append(retag({ user: "u1" }));
    // o1's record is still stamped as current: its own append made it old.
    await expectRetagged(again);
  } finally {
    vi.restoreAllMocks();
  }
});

it("forgets the record of a session it appended to, also once the session leaves its cache", async () => {
  try {
    const again = await remembered(1);
    await (await again.open(WS, "o1")).append(retag({ user: "u1" }));
    // Others take the cache's only place (once o1's write lease is given back:
    // a session holding it stays): o1 is not open any more, and its old record must be gone.
    const cache = (engine as unknown as { cache: { idsIn(w: string): Set<string> } }).cache;
    let other = 0;
    await expect
      .poll(async () => {
        other = 2 - other; // o0, o2, o0, ...: each load puts a session the cache did not hold.
        await engine.load({ workspace: WS, sessionId: `o${other}` });
        return cache.idsIn(WS).has("o1");
      })
      .toBe(false);
    await expectRetagged(again);
  } finally {
    vi.restoreAllMocks();
  }
});
