import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { freezeChangeReports } from "../../../test/support/jsonl/change-reports.js";
import { removeDir, tempDir, WS } from "../../../test/support/jsonl/fixtures.js";
import { storeOn } from "../../../test/support/search-fixtures.js";
import { JsonlEngine } from "./jsonl-engine.js";

/**
 * The JSONL engine's `list` reads an OPEN session (one in its cache) from
 * the session itself, never from the record its memo remembers: another
 * process may have appended to the file, and the kernel's report of that
 * change comes through the event loop, later. Each listing path has the
 * rule: one id (a GetSession), a few ids (asked of the cache one by one),
 * and many (the set of the cache's open ids). The change reports are
 * frozen here, so only the rule keeps the listing current.
 */

let dataDir: string;
let engine: JsonlEngine;
let other: JsonlEngine | undefined;
beforeEach(async () => {
  dataDir = await tempDir("sessiond-open-listing-");
  engine = new JsonlEngine({ dataDir });
});
afterEach(async () => {
  vi.restoreAllMocks();
  await other?.close();
  other = undefined;
  await engine.close();
  await removeDir(dataDir);
});

const SESSIONS = 20; // more than the engine's threshold for taking the set of open ids

/**
 * Sessions s00..s19; then this engine, fresh, lists them all (its memo
 * remembers every record), opens s07, and a second engine on the same data
 * dir (another process, as far as files go) appends one entry to s07.
 */
async function appendedByAnother(): Promise<void> {
  const store = storeOn(engine);
  for (let i = 0; i < SESSIONS; i++) {
    await store.create({ workspace: WS, sessionId: `s${String(i).padStart(2, "0")}` });
  }
  await store.close();
  freezeChangeReports();
  engine = new JsonlEngine({ dataDir, leaseIdleMs: 1 });
  const listed = await engine.list(WS);
  expect(listed).toHaveLength(SESSIONS);
  expect(listed.every((r) => r.headSeq === 1)).toBe(true);
  expect((await engine.load({ workspace: WS, sessionId: "s07" })).headSeq).toBe(1);
  other = new JsonlEngine({ dataDir, leaseIdleMs: 1 });
  const note = create(EntrySchema, { kind: { case: "label", value: { label: "x" } } });
  await (await storeOn(other).open(WS, "s07")).append(note);
}

const headOf = (records: { sessionId: string; headSeq: number }[], id: string) =>
  records.find((r) => r.sessionId === id)?.headSeq;

it("one open session: listed from the session, with the other process's append", async () => {
  await appendedByAnother();
  expect(headOf(await engine.list(WS, ["s07"]), "s07")).toBe(2);
});

it("a few ids, one of them open: that one is listed from the session", async () => {
  await appendedByAnother();
  const records = await engine.list(WS, ["s03", "s07", "s11"]);
  expect(headOf(records, "s07")).toBe(2);
  expect(headOf(records, "s03")).toBe(1);
});

it("a whole workspace (the set of open ids): the open one is listed from the session", async () => {
  await appendedByAnother();
  const records = await engine.list(WS);
  expect(records).toHaveLength(SESSIONS);
  expect(headOf(records, "s07")).toBe(2);
  expect(records.filter((r) => r.headSeq !== 1).map((r) => r.sessionId)).toEqual(["s07"]);
});

it("a session not open keeps the remembered record until its change is reported (the frozen reports work)", async () => {
  await appendedByAnother();
  // s07 leaves nothing open here but itself; s12, appended to by the other
  // engine too, is not open here: its remembered record is what a listing
  // hands out while no change is reported (the premise of the tests above).
  const note = create(EntrySchema, { kind: { case: "label", value: { label: "y" } } });
  await (await storeOn(other as JsonlEngine).open(WS, "s12")).append(note);
  expect(headOf(await engine.list(WS, ["s03", "s12"]), "s12")).toBe(1);
});
