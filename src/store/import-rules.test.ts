import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, it } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { assistant, info, kindless, leaf, toolResult, user } from "../../test/support/fixtures.js";
import { expectRefused } from "../../test/support/refusals.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { SessionStore, type StoreOptions } from "./session-store.js";

/**
 * One test per validation rule of Import (src/core/import-plan.ts: one tree
 * with a SessionInfo root, in parent-first order, every other entry passing
 * the Append rules; and SessionStore.import: ids, workspace, limits): each
 * refused import gets its code, names the offending entry or id, and stores
 * nothing (no new session listed).
 */

const CLOCK = new Date("2026-03-04T05:06:07.000Z");

describe.each(STORE_ENGINE_FACTORIES)("Import rules on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;

  function importing(entries: Entry[], sessionId = "imported", workspace?: string) {
    return () => store.import(workspace, entries, { sessionId });
  }

  function useStore(options: StoreOptions = {}): void {
    store = new SessionStore(fixture.engine, { now: () => CLOCK, ...options });
  }

  beforeEach(async () => {
    fixture = await factory.open();
    useStore();
    await store.create({ sessionId: "existing" });
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("Import refuses an empty log: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(fixture, importing([]), "INVALID_ARGUMENT", "at least one entry");
  });

  it("Import refuses an invalid session id: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(fixture, importing([info("r1")], "../x"), "INVALID_ARGUMENT", '"../x"');
  });

  it("Import refuses an invalid workspace: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1")], "imported", "../ws"),
      "INVALID_ARGUMENT",
      '"../ws"',
    );
  });

  it("Import refuses a session id in use: ALREADY_EXISTS, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), user("u1", "q", "r1")], "existing"),
      "ALREADY_EXISTS",
      '"existing"',
    );
  });

  it("Import refuses two entries with one id: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), user("u1", "q", "r1"), user("u1", "q", "r1")]),
      "INVALID_ARGUMENT",
      "duplicate",
      '"u1"',
    );
  });

  it("Import refuses a log with two roots: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), info("r2")]),
      "INVALID_ARGUMENT",
      "exactly one root",
      "found 2",
    );
  });

  it("Import refuses a cycle: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), user("x", "x", "y"), user("y", "y", "x")]),
      "INVALID_ARGUMENT",
      "cycle",
      '"x"',
    );
  });

  it("Import refuses a missing parent: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), user("u1", "q", "ghost")]),
      "INVALID_ARGUMENT",
      '"u1"',
      'missing parent "ghost"',
    );
  });

  it("Import refuses a root that is not a SessionInfo: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([user("u0", "q")]),
      "INVALID_ARGUMENT",
      '"u0"',
      "SessionInfo root",
    );
  });

  it("Import refuses a log whose first entry is not its root: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("s2", "retitled", "r1"), info("r1")]),
      "INVALID_ARGUMENT",
      '"s2"',
      "SessionInfo root",
    );
  });

  it("Import refuses an entry listed before its parent: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), user("b", "b", "a"), user("a", "a", "r1")]),
      "INVALID_ARGUMENT",
      '"b"',
      'before its parent "a"',
    );
  });

  it("Import refuses a root id outside [A-Za-z0-9_-]{1,64}: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("../r"), user("u1", "q", "../r")]),
      "INVALID_ARGUMENT",
      '"../r"',
    );
  });

  it("Import refuses an entry id outside [A-Za-z0-9_-]{1,64}: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), user("../u", "q", "r1")]),
      "INVALID_ARGUMENT",
      '"../u"',
    );
  });

  it("Import refuses an entry that breaks an Append shape rule (no kind): INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), kindless("k1", "r1")]),
      "INVALID_ARGUMENT",
      '"k1"',
      "kind is not set",
    );
  });

  it("Import refuses a tool result with no call on its path: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), assistant("a1", "a", [], "r1"), toolResult("t1", "call-9", "a1")]),
      "INVALID_ARGUMENT",
      '"t1"',
      '"call-9"',
    );
  });

  it("Import refuses a Leaf entry that points at no entry: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), user("u1", "q", "r1"), leaf("l1", "ghost", "u1")]),
      "INVALID_ARGUMENT",
      '"l1"',
      '"ghost"',
    );
  });

  it("Import refuses a Leaf entry that points at a Leaf entry: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([
        info("r1"),
        user("u1", "q", "r1"),
        leaf("l1", "r1", "u1"),
        leaf("l2", "l1", "u1"),
      ]),
      "INVALID_ARGUMENT",
      '"l2"',
      '"l1"',
    );
  });

  it("Import refuses a Leaf entry as parent: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      importing([info("r1"), user("u1", "q", "r1"), leaf("l1", "r1", "u1"), user("u2", "q", "l1")]),
      "INVALID_ARGUMENT",
      '"u2"',
      '"l1"',
    );
  });

  it("Import refuses an entry over maxEntryBytes: RESOURCE_EXHAUSTED, nothing stored", async () => {
    useStore({ limits: { maxEntryBytes: 1000 } });
    await expectRefused(
      fixture,
      importing([info("r1"), user("big", "x".repeat(1000), "r1")]),
      "RESOURCE_EXHAUSTED",
      '"big"',
      "limit of 1000",
    );
  });

  it("Import refuses a root over maxEntryBytes: RESOURCE_EXHAUSTED, nothing stored", async () => {
    useStore({ limits: { maxEntryBytes: 1000 } });
    await expectRefused(
      fixture,
      importing([info("r1", "x".repeat(1000))]),
      "RESOURCE_EXHAUSTED",
      '"r1"',
      "limit of 1000",
    );
  });

  it("Import refuses a root with no JSON form (a NaN in its metadata): INVALID_ARGUMENT, nothing stored", async () => {
    const root = create(EntrySchema, {
      id: "r1",
      kind: { case: "sessionInfo", value: { metadata: { a: Number.NaN } } },
    });
    await expectRefused(fixture, importing([root]), "INVALID_ARGUMENT", '"r1"', "cannot be stored");
  });
});
