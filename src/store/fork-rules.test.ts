import { afterEach, beforeEach, describe, it } from "vitest";
import { assistant, label, user } from "../../test/support/fixtures.js";
import { expectRefused } from "../../test/support/refusals.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { SessionStore } from "./session-store.js";

/**
 * One test per validation rule of Fork (SessionStore.fork and the target
 * rules of src/core/move-plan.ts it shares with Rewind): each refused fork
 * gets its code, names the offending id, and stores nothing (no new
 * session, the source and any session holding the wanted id untouched).
 */

const CLOCK = new Date("2026-03-04T05:06:07.000Z");

describe.each(STORE_ENGINE_FACTORIES)("Fork rules on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;

  //   src:  root ─ u1 ─ a1 ─ mark("checkpoint") ─ u2, then a Leaf entry "move-1" back to a1
  //   src2: root ─ u2
  //   fork-1: a fork of src at u2 titled "T";  taken: a session that is no fork
  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { now: () => CLOCK });
    await store.create({ sessionId: "src", title: "Source" });
    const src = await store.open(undefined, "src");
    await src.append([
      user("u1", "q1"),
      assistant("a1", "a1"),
      label("mark", "checkpoint"),
      user("u2", "q2"),
    ]);
    await src.rewind("a1", { entryId: "move-1" });
    await store.create({ sessionId: "src2" });
    await (await store.open(undefined, "src2")).append(user("u2", "q2"));
    await store.fork(undefined, "src", { entry: "u2", sessionId: "fork-1", title: "T" });
    await store.create({ sessionId: "taken" });
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("Fork refuses an invalid workspace: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.fork("../ws", "src", { entry: "u2" }),
      "INVALID_ARGUMENT",
      '"../ws"',
    );
  });

  it("Fork refuses an unknown source session: NOT_FOUND, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.fork(undefined, "ghost", { entry: "u2" }),
      "NOT_FOUND",
      '"ghost"',
    );
  });

  it("Fork refuses a fork point that is neither an entry id nor a label: NOT_FOUND, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.fork(undefined, "src", { entry: "nope" }),
      "NOT_FOUND",
      '"nope"',
      '"src"',
    );
  });

  it("Fork refuses a Leaf entry as fork point: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.fork(undefined, "src", { entry: "move-1" }),
      "INVALID_ARGUMENT",
      '"move-1"',
      "Leaf entry",
    );
  });

  it("Fork refuses a new session id outside [A-Za-z0-9][A-Za-z0-9_-]{0,127}: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.fork(undefined, "src", { entry: "u2", sessionId: "../evil" }),
      "INVALID_ARGUMENT",
      '"../evil"',
    );
  });

  it("Fork refuses a new session id held by a session that is no fork: ALREADY_EXISTS, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.fork(undefined, "src", { entry: "u2", sessionId: "taken" }),
      "ALREADY_EXISTS",
      '"taken"',
    );
  });

  it("Fork refuses a new session id held by a fork of another source: ALREADY_EXISTS, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.fork(undefined, "src2", { entry: "u2", sessionId: "fork-1", title: "T" }),
      "ALREADY_EXISTS",
      '"fork-1"',
    );
  });

  it("Fork refuses a new session id held by a fork at another entry: ALREADY_EXISTS, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.fork(undefined, "src", { entry: "a1", sessionId: "fork-1", title: "T" }),
      "ALREADY_EXISTS",
      '"fork-1"',
    );
  });

  it("Fork refuses a new session id held by a fork with another title: ALREADY_EXISTS, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.fork(undefined, "src", { entry: "u2", sessionId: "fork-1", title: "Other" }),
      "ALREADY_EXISTS",
      '"fork-1"',
    );
  });
  it("Fork refuses a title that puts its SessionInfo over maxEntryBytes: RESOURCE_EXHAUSTED, nothing stored", async () => {
    store = new SessionStore(fixture.engine, { now: () => CLOCK, limits: { maxEntryBytes: 1000 } });
    await expectRefused(
      fixture,
      () => store.fork(undefined, "src", { entry: "u2", sessionId: "f2", title: "x".repeat(1000) }),
      "RESOURCE_EXHAUSTED",
      '"f2"',
      "limit of 1000",
    );
  });
});
