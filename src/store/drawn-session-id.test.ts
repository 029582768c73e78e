import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLOCK, rootEntry, ts, user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { SessionStore } from "./session-store.js";

/**
 * A session made without an id gets one the store draws (its second plus 32
 * random bits). When the drawn id is taken, which two sessions made in the
 * same second do once in 2^32 pairs, the store draws again: the session
 * found under it belongs to another caller and is never answered as this
 * call's (created=false would hand one caller another's session). An id
 * the caller gives keeps making a retried create, fork or import
 * idempotent. The generator is the store's `newSessionId` option, made to
 * draw a taken id first.
 */

/** A generator that draws `ids` in turn, and counts its draws. */
function drawing(...ids: string[]): { next: () => string; draws: () => number } {
  let n = 0;
  return {
    next: () => ids[Math.min(n++, ids.length - 1)] as string,
    draws: () => n,
  };
}

/** A log to import whose root records no session id: the store draws one. */
function unnamedLog() {
  const log = [rootEntry("", { id: "r", title: "imported" }), user("u1", "hello", "r")];
  log.forEach((e, i) => {
    e.seq = BigInt(i + 1);
    e.timestamp = ts(1_767_225_600 + i);
  });
  return log;
}

describe.each(STORE_ENGINE_FACTORIES)("drawn session ids on $name", (factory) => {
  let fixture: EngineFixture;

  beforeEach(async () => {
    fixture = await factory.open();
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  /** A store whose drawn ids are `ids`, with "taken" already holding a session made like the next one. */
  async function storeDrawing(...ids: string[]) {
    const gen = drawing(...ids);
    const store = new SessionStore(fixture.engine, { now: () => CLOCK, newSessionId: gen.next });
    await store.create({ sessionId: "taken", title: "first caller's" });
    return { store, gen };
  }

  it("create: a drawn id that is taken is drawn again; the session under it is left alone", async () => {
    const { store, gen } = await storeDrawing("taken", "taken", "fresh");
    const made = await store.create({ title: "first caller's" });
    expect(made.created).toBe(true);
    expect(made.session.id).toBe("fresh");
    expect(gen.draws()).toBe(3);
    const s = await store.open(undefined, "fresh");
    await s.append([user("mine", "only in fresh")]);
    const taken = await store.open(undefined, "taken");
    expect((await taken.state()).messages).toEqual([]);
    expect((await store.list({})).sessions.map((m) => m.id).sort()).toEqual(["fresh", "taken"]);
  });

  it("create with the caller's own id stays idempotent: the same parameters again answer created=false", async () => {
    const { store, gen } = await storeDrawing("unused");
    const again = await store.create({ sessionId: "taken", title: "first caller's" });
    expect(again).toMatchObject({ created: false, session: { id: "taken" } });
    expect(gen.draws()).toBe(0);
  });

  it("fork: a drawn id that is taken, even by the same fork made by another caller, is drawn again", async () => {
    const { store } = await storeDrawing("fork-a", "fork-b");
    const source = await store.open(undefined, "taken");
    await source.append([user("m1", "forked text")]);
    await store.fork(undefined, "taken", { entry: "m1", sessionId: "fork-a" });
    const fork = await store.fork(undefined, "taken", { entry: "m1" });
    expect(fork.id).toBe("fork-b");
    expect(fork.forkedFrom).toMatchObject({ sessionId: "taken", entryId: "m1" });
    expect((await store.list({})).sessions.map((m) => m.id).sort()).toEqual([
      "fork-a",
      "fork-b",
      "taken",
    ]);
  });

  it("import: a log that records no id, drawn again past a session holding the same log", async () => {
    const { store } = await storeDrawing("imp-a", "imp-b");
    await store.import(undefined, unnamedLog(), { sessionId: "imp-a" });
    const { session, created } = await store.import(undefined, unnamedLog());
    expect(created).toBe(true);
    expect(session.id).toBe("imp-b");
    expect(session.title).toBe("imported");
    expect((await store.list({})).sessions.map((m) => m.id).sort()).toEqual([
      "imp-a",
      "imp-b",
      "taken",
    ]);
  });

  it("a refusal other than a taken id is not drawn again: a missing parent is NOT_FOUND after one draw", async () => {
    const { store, gen } = await storeDrawing("unused");
    await expect(store.create({ parentSessionId: "nobody" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect(gen.draws()).toBe(1);
  });

  it("a generator that only draws taken ids gives up after 8 draws: ALREADY_EXISTS naming the id", async () => {
    const { store, gen } = await storeDrawing("taken");
    await expect(store.create({ title: "first caller's" })).rejects.toMatchObject({
      code: "ALREADY_EXISTS",
      message: expect.stringContaining('"taken"'),
    });
    expect(gen.draws()).toBe(8);
  });
});
