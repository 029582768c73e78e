import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistant, expectCode, user } from "../../test/support/fixtures.js";
import { ENGINE_FACTORIES, type EngineFixture } from "../../test/support/store-model.js";
import { DEFAULT_LIMITS } from "./limits.js";
import type { Session } from "./session.js";
import { SessionStore } from "./session-store.js";

/**
 * GetEntries by entry_ids: a link to an entry names its id, not its seq,
 * so a reader (the viewer's deep link) reads it without the tree first.
 */
describe.each(ENGINE_FACTORIES)("entries by id on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let session: Session;

  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine);
    await store.create({ sessionId: "sess" });
    session = await store.open(undefined, "sess");
    await session.append([user("u1", "one"), assistant("a1", "two"), user("u2", "three")]);
    await session.rewind("a1", { entryId: "back" });
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("reads the entries of the ids, in seq order, each once, with the head seq", async () => {
    const page = await session.entriesById(["u2", "u1", "back", "u2"]);
    expect(page.entries.map((e) => [e.id, Number(e.seq)])).toEqual([
      ["u1", 2],
      ["u2", 4],
      ["back", 5],
    ]);
    expect(page.headSeq).toBe(5);
    expect(page.entries[0]).toEqual((await session.entries(1, 1)).entries[0]);
  });

  it("answers an id that is not in the session with NOT_FOUND naming it", async () => {
    await expectCode(() => session.entriesById(["u1", "nope"]), "NOT_FOUND", '"nope"', '"sess"');
  });

  it("refuses an empty id and more ids than the max page size", async () => {
    await expectCode(() => session.entriesById([""]), "INVALID_ARGUMENT", "empty");
    const many = Array.from({ length: DEFAULT_LIMITS.maxPageSize + 1 }, () => "u1");
    await expectCode(() => session.entriesById(many), "INVALID_ARGUMENT", "max page size");
    // As many as the max page size are taken (the same id, answered once).
    const most = Array.from({ length: DEFAULT_LIMITS.maxPageSize }, () => "u1");
    expect((await session.entriesById(most)).entries.map((e) => e.id)).toEqual(["u1"]);
  });
});
