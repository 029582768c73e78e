/**
 * Retention never removes a corrupt session (what it holds is unknown, and
 * fsck / repair may still recover it): a JSONL session file with damage in
 * the middle is listed CORRUPT and stays, while a healthy session as old
 * goes, and it does not count against keep-newest.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Health } from "../../gen/sessiond/v1/session_pb.js";
import { user } from "../../test/support/fixtures.js";
import { JsonlEngine } from "../storage/jsonl/index.js";
import { sessionPath } from "../storage/jsonl/paths.js";
import { expireSessions } from "./retention.js";
import { SessionStore } from "./session-store.js";

const DAY = 86_400_000;
const T0 = Date.parse("2026-06-01T00:00:00.000Z");
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("retention and corrupt sessions (JSONL)", () => {
  it("a corrupt session is kept and not counted; a healthy one as old is removed", async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-retention-"));
    let clock = T0 - 40 * DAY;
    const open = () =>
      new SessionStore(new JsonlEngine({ dataDir: dir as string }), { now: () => new Date(clock) });
    let store = open();
    for (const id of ["bad", "old", "new"]) {
      if (id === "new") clock = T0;
      await store.create({ sessionId: id });
      await (await store.open(undefined, id)).append(user(`${id}-u`));
    }
    await store.close();
    // Damage mid-file: a garbage line followed by a valid record (a copy of the last one).
    const file = sessionPath(dir, "default", "bad", false);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    writeFileSync(file, `${lines.slice(0, -1).join("\n")}\n{"garbage":\n`);
    appendFileSync(file, `${lines.at(-1)}\n`);
    store = open();
    const before = (await store.list({})).sessions.find((s) => s.id === "bad");
    expect(before?.health).toBe(Health.CORRUPT);
    const byAge = await expireSessions(store, "default", { maxAgeMs: 30 * DAY }, { nowMs: T0 });
    expect(byAge.expired.map((e) => e.id)).toEqual(["old"]);
    const byCount = await expireSessions(store, "default", { keepNewest: 1 }, { nowMs: T0 });
    expect(byCount.expired).toEqual([]);
    expect((await store.list({})).sessions.map((s) => s.id).sort()).toEqual(["bad", "new"]);
    await store.close();
  });
});
