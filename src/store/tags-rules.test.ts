/**
 * Session tags, rule by rule on every engine: set at creation, changed by
 * later SessionInfo entries (folded in seq order, all branches, like the
 * title), kept across a reopen, inherited by a fork along its path, and
 * held to their limits with nothing written when refused.
 */
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { expectCode, user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { SessionStore } from "./session-store.js";

function tagsEntry(id: string, tags: Record<string, string>, parentId?: string) {
  return create(EntrySchema, { id, parentId, kind: { case: "sessionInfo", value: { tags } } });
}

describe.each(STORE_ENGINE_FACTORIES)("session tags ($name)", (factory) => {
  let fixture: EngineFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });
  const open = async () => {
    fixture = await factory.open();
    return new SessionStore(fixture.engine);
  };

  it("set at creation, shown by GetSession and ListSessions", async () => {
    const store = await open();
    const { session } = await store.create({ sessionId: "s1", tags: { user: "ana", repo: "x" } });
    expect(session.tags).toEqual({ user: "ana", repo: "x" });
    expect((await store.get(undefined, "s1")).tags).toEqual({ user: "ana", repo: "x" });
    expect((await store.list()).sessions[0]?.tags).toEqual({ user: "ana", repo: "x" });
    await store.create({ sessionId: "s2" });
    expect((await store.get(undefined, "s2")).tags).toEqual({});
  });

  it("changed by later SessionInfo entries: set, replace, remove, in seq order, any branch", async () => {
    const store = await open();
    await store.create({ sessionId: "s1", tags: { user: "ana", repo: "x" } });
    const s = await store.open(undefined, "s1");
    await s.append([user("u1"), tagsEntry("i1", { repo: "y", ticket: "T-1" })]);
    expect((await store.get(undefined, "s1")).tags).toEqual({
      user: "ana",
      repo: "y",
      ticket: "T-1",
    });
    // A change on another branch counts too (like the title): the log, not the path.
    const root = (await store.get(undefined, "s1")).leafId;
    await s.append([tagsEntry("i2", { user: "" }, "u1")]);
    expect(root).not.toBe("");
    expect((await store.get(undefined, "s1")).tags).toEqual({ repo: "y", ticket: "T-1" });
    if (fixture?.reopen) {
      const again = new SessionStore(await fixture.reopen());
      expect((await again.get(undefined, "s1")).tags).toEqual({ repo: "y", ticket: "T-1" });
    }
  });

  it("a fork takes the source's root tags and the changes on its path only", async () => {
    const store = await open();
    await store.create({ sessionId: "s1", tags: { user: "ana" } });
    const s = await store.open(undefined, "s1");
    await s.append([user("u1"), tagsEntry("i1", { repo: "on-path" })]);
    await s.append([tagsEntry("i2", { side: "off-path" }, "u1")]);
    const fork = await store.fork(undefined, "s1", { entry: "i1", sessionId: "f1" });
    expect(fork.tags).toEqual({ user: "ana", repo: "on-path" });
    expect((await store.get(undefined, "s1")).tags).toEqual({
      user: "ana",
      repo: "on-path",
      side: "off-path",
    });
  });

  it("refuses tags over the limits at creation and on append, writing nothing", async () => {
    const store = await open();
    await expectCode(
      store.create({ sessionId: "bad-session", tags: { "no spaces": "v" } }),
      "INVALID_ARGUMENT",
      'tags: invalid tag key "no spaces"',
    );
    // At creation a tag needs a value (an empty one removes a tag, later).
    await expectCode(
      store.create({ sessionId: "bad-session", tags: { user: "" } }),
      "INVALID_ARGUMENT",
      'tags: tag "user" has an empty value',
    );
    await expectCode(store.get(undefined, "bad-session"), "NOT_FOUND");
    const tags = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, "v"]));
    await store.create({ sessionId: "s1", tags });
    const s = await store.open(undefined, "s1");
    await expectCode(
      s.append([tagsEntry("i1", { a: "1", b: "2", c: "3" })]),
      "INVALID_ARGUMENT",
      'entries[0] (id "i1"): tags: the session would have 33 tags, at most 32',
    );
    // Removing one first makes room: the limit applies to the result, entry by entry.
    await s.append([tagsEntry("i2", { k0: "", a: "1" }), tagsEntry("i3", { b: "2" })]);
    const meta = await store.get(undefined, "s1");
    expect(Object.keys(meta.tags)).toHaveLength(31);
    expect(meta.headSeq).toBe(3n);
    await expectCode(
      s.append([tagsEntry("i4", { k1: "x".repeat(300) })]),
      "INVALID_ARGUMENT",
      'entries[0] (id "i4"): tags: the value of tag "k1" has 300 bytes',
    );
    expect((await store.get(undefined, "s1")).headSeq).toBe(3n);
  });

  it("an identical create with other tags is ALREADY_EXISTS; with the same tags, the session", async () => {
    const store = await open();
    await store.create({ sessionId: "s1", tags: { user: "ana" } });
    const again = await store.create({ sessionId: "s1", tags: { user: "ana" } });
    expect(again.created).toBe(false);
    await expectCode(
      store.create({ sessionId: "s1", tags: { user: "bob" } }),
      "ALREADY_EXISTS",
      "other parameters",
    );
    await expectCode(store.create({ sessionId: "s1" }), "ALREADY_EXISTS", "other parameters");
  });
});
