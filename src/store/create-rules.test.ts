import type { JsonObject } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, it } from "vitest";
import { expectRefused } from "../../test/support/refusals.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { type CreateSessionInput, SessionStore } from "./session-store.js";

/**
 * One test per validation rule of CreateSession (SessionStore.create): each
 * refused create gets its code, names the offending id, and stores nothing
 * (no new session, the one holding a wanted id untouched).
 */

const CLOCK = new Date("2026-03-04T05:06:07.000Z");

const IDEM = {
  sessionId: "idem",
  title: "T",
  cwd: "/w",
  metadata: { a: 1, b: ["x"] } as JsonObject,
};
const CHILD = { sessionId: "child", parentSessionId: "parent", agentType: "reviewer" };

describe.each(STORE_ENGINE_FACTORIES)("CreateSession rules on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;

  // parent and parent2 (top level), child (a subagent of parent), idem (with every parameter)
  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { now: () => CLOCK });
    await store.create({ sessionId: "parent" });
    await store.create({ sessionId: "parent2" });
    await store.create(CHILD);
    await store.create(IDEM);
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("CreateSession refuses a session id outside [A-Za-z0-9][A-Za-z0-9_-]{0,127}: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.create({ sessionId: "../x" }),
      "INVALID_ARGUMENT",
      '"../x"',
    );
  });

  it("CreateSession refuses an invalid workspace: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.create({ workspace: "../ws", sessionId: "s1" }),
      "INVALID_ARGUMENT",
      '"../ws"',
    );
  });

  it("CreateSession refuses a parent_session_id outside the session id pattern: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.create({ sessionId: "s1", parentSessionId: "../p" }),
      "INVALID_ARGUMENT",
      "parent_session_id",
      '"../p"',
    );
  });

  it("CreateSession refuses a session that is its own parent: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.create({ sessionId: "parent", parentSessionId: "parent" }),
      "INVALID_ARGUMENT",
      '"parent"',
      "its own parent",
    );
  });

  it("CreateSession refuses a parent session that does not exist: NOT_FOUND, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.create({ sessionId: "s1", parentSessionId: "ghost" }),
      "NOT_FOUND",
      '"ghost"',
    );
  });

  it("CreateSession refuses agent_type without parent_session_id: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.create({ sessionId: "s1", agentType: "reviewer" }),
      "INVALID_ARGUMENT",
      "agent_type",
    );
  });

  it.each<[string, CreateSessionInput]>([
    ["title", { ...IDEM, title: "other" }],
    ["cwd", { ...IDEM, cwd: "/elsewhere" }],
    ["metadata", { ...IDEM, metadata: { a: 2, b: ["x"] } }],
    ["parent session", { ...CHILD, parentSessionId: "parent2" }],
    ["agent type", { ...CHILD, agentType: "planner" }],
  ])(
    "CreateSession refuses an existing id with another %s: ALREADY_EXISTS, nothing stored",
    async (_, input) => {
      await expectRefused(
        fixture,
        () => store.create(input),
        "ALREADY_EXISTS",
        `"${input.sessionId}"`,
        "other parameters",
      );
    },
  );
  it("CreateSession refuses metadata with no JSON form (a NaN): INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => store.create({ sessionId: "s1", metadata: { a: Number.NaN } }),
      "INVALID_ARGUMENT",
      '"s1"',
      "cannot be stored",
    );
  });

  it("CreateSession refuses a SessionInfo over maxEntryBytes: RESOURCE_EXHAUSTED, nothing stored", async () => {
    store = new SessionStore(fixture.engine, { now: () => CLOCK, limits: { maxEntryBytes: 1000 } });
    await expectRefused(
      fixture,
      () => store.create({ sessionId: "s1", title: "x".repeat(1000) }),
      "RESOURCE_EXHAUSTED",
      '"s1"',
      "limit of 1000",
    );
  });
});
