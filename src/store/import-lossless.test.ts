import { clone } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  expectCode,
  expectSameEntries,
  forkLikeEntries,
  leaf,
  rootEntry,
  ts,
  user,
} from "../../test/support/fixtures.js";
import { storedSessions } from "../../test/support/refusals.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { unavailable } from "../core/errors.js";
import { SessionStore } from "./session-store.js";

/**
 * Import (the ImportSession RPC) stores a log exactly: ids, parents, seqs,
 * timestamps, the root's created_at and forked_from, the leaf; a repeated
 * import of the same log is a no-op, another log under the id is refused.
 */

const CLOCK = new Date("2026-03-04T05:06:07.000Z");

async function readAll(store: SessionStore, sessionId: string): Promise<Entry[]> {
  const key = { workspace: "default", sessionId };
  const out: Entry[] = [];
  for (;;) {
    const page = await store.engine.read(key, out.length, 1000);
    if (page.entries.length === 0) return out;
    out.push(...page.entries);
  }
}

describe.each(STORE_ENGINE_FACTORIES)("lossless Import on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;

  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { now: () => CLOCK });
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("an imported log reads back entry for entry: ids, seqs, timestamps, root, created_at, forked_from", async () => {
    const log = forkLikeEntries("copied");
    const { session, created } = await store.import(undefined, log);
    expect(created).toBe(true);
    expectSameEntries(await readAll(store, "copied"), log);
    expect(session.createdAt).toEqual(ts(1_767_225_600, 100_000_000));
    expect(session.forkedFrom).toMatchObject({ sessionId: "20260101-000000-deadbeef" });
  });

  it("an imported log that ends with a Leaf entry keeps that leaf", async () => {
    const log = [rootEntry("moved"), user("u1", "a", "root-moved"), user("u2", "b", "u1")];
    log.push(leaf("l1", "u1", "u2"));
    log.forEach((e, i) => {
      e.seq = BigInt(i + 1);
      e.timestamp = ts(1_767_225_600 + i);
    });
    const { session } = await store.import(undefined, log);
    expect(session.leafId).toBe("u1");
    expect(Number(session.headSeq)).toBe(4);
  });

  it("importing the same log again returns the stored session with created=false", async () => {
    const log = forkLikeEntries("twice");
    await store.import(undefined, log);
    const again = await store.import(undefined, log);
    expect(again.created).toBe(false);
    expectSameEntries(await readAll(store, "twice"), log);
  });

  it("importing another log under a stored id is ALREADY_EXISTS naming the first difference", async () => {
    const log = forkLikeEntries("clash");
    await store.import(undefined, log);
    const changed = log.map((e) => clone(EntrySchema, e));
    (changed[3] as Entry).timestamp = ts(1);
    await expectCode(
      store.import(undefined, changed),
      "ALREADY_EXISTS",
      '"clash"',
      `entry "${changed[3]?.id}" at seq 4 differs`,
    );
  });

  it("importing a longer log under a stored id is ALREADY_EXISTS: an import never appends", async () => {
    const log = forkLikeEntries("grown");
    await store.import(undefined, log.slice(0, 5));
    await expectCode(store.import(undefined, log), "ALREADY_EXISTS", "5 entries, the import 21");
  });

  it("an imported subagent session gets its depth from the parent, which must exist", async () => {
    await store.import(undefined, [rootEntry("parent")]);
    const child = rootEntry("child", { parentSessionId: "parent", agentType: "explore" });
    const { session } = await store.import(undefined, [child]);
    expect(session.spawnDepth).toBe(1);
    expect(session.parentSessionId).toBe("parent");
  });

  it("an imported subagent session whose parent session does not exist is NOT_FOUND, nothing stored", async () => {
    const before = await storedSessions(fixture.engine);
    const orphan = rootEntry("orphan", { parentSessionId: "nowhere" });
    await expectCode(store.import(undefined, [orphan]), "NOT_FOUND", '"nowhere"');
    expect(await storedSessions(fixture.engine)).toEqual(before);
  });

  it("an imported subagent session whose spawn_depth contradicts its parent is INVALID_ARGUMENT", async () => {
    await store.import(undefined, [rootEntry("parent")]);
    const child = rootEntry("deep", { parentSessionId: "parent", spawnDepth: 3 });
    await expectCode(store.import(undefined, [child]), "INVALID_ARGUMENT", "spawn_depth 3", "1");
  });

  it("an imported subagent session that states its depth rightly is taken", async () => {
    await store.import(undefined, [rootEntry("parent")]);
    const child = rootEntry("stated", { parentSessionId: "parent", spawnDepth: 1 });
    const { session } = await store.import(undefined, [child]);
    expect(session.spawnDepth).toBe(1);
  });

  it("an imported subagent session naming a parent that is no session id is INVALID_ARGUMENT naming the field", async () => {
    const child = rootEntry("bad-parent", { parentSessionId: "../x" });
    await expectCode(store.import(undefined, [child]), "INVALID_ARGUMENT", "parent_session_id");
  });

  it("importing a shorter log under a stored id is ALREADY_EXISTS, not a repeat", async () => {
    const log = forkLikeEntries("longer");
    await store.import(undefined, log);
    await expectCode(
      store.import(undefined, log.slice(0, 5)),
      "ALREADY_EXISTS",
      "21 entries, the import 5",
    );
  });

  it("an engine failure of the create reaches the caller as it was", async () => {
    const failing = Object.assign(Object.create(fixture.engine) as typeof fixture.engine, {
      async create() {
        throw unavailable("disk on fire");
      },
    });
    const broken = new SessionStore(failing, { now: () => CLOCK });
    await expectCode(
      broken.import(undefined, forkLikeEntries("burnt")),
      "UNAVAILABLE",
      "disk on fire",
    );
  });

  it("an imported entry whose seq is not its position is INVALID_ARGUMENT naming it", async () => {
    const log = forkLikeEntries("gappy");
    (log[4] as Entry).seq = 9n;
    await expectCode(
      store.import(undefined, log),
      "INVALID_ARGUMENT",
      `"${log[4]?.id}"`,
      "seq 9 is not its position 5",
    );
  });
});
