import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { user } from "../../test/support/fixtures.js";
import { JsonlEngine } from "../storage/jsonl/index.js";
import { MemoryEngine } from "../storage/memory.js";
import { SessionStore } from "./session-store.js";

/**
 * SessionStore.openNow, the append's hot path: the facade of a session
 * the engine holds open, at once; undefined when it must be resolved
 * (`open`). And listWorkspaces through the store.
 */
describe("SessionStore.openNow", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "sessiond-open-now-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("gives a session the JSONL engine holds open, for its workspace and id only; undefined before it is opened", async () => {
    const store = new SessionStore(new JsonlEngine({ dataDir: dir }));
    const { session } = await store.create({ workspace: "w", sessionId: "s1" });
    await store.create({ workspace: "w", sessionId: "s2" });
    const fresh = new SessionStore(new JsonlEngine({ dataDir: dir }));
    expect(fresh.openNow("w", "s1")).toBeUndefined();
    await (await fresh.open("w", "s1")).append([user("u1")]);
    const now = fresh.openNow("w", "s1");
    expect([now?.workspace, now?.id]).toEqual(["w", session.id]);
    expect((await now?.entries(0, 10))?.entries.map((e) => e.id)).toContain("u1");
    expect(fresh.openNow("w", "s2")).toBeUndefined();
    expect(fresh.openNow("other", "s1")).toBeUndefined();
    expect(() => fresh.openNow("../x", "s1")).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
    await store.close();
    await fresh.close();
  });

  it("is undefined on an engine that does not say which sessions it holds open (memory)", async () => {
    const store = new SessionStore(new MemoryEngine());
    await store.create({ workspace: "w", sessionId: "s1" });
    await store.open("w", "s1");
    expect(store.openNow("w", "s1")).toBeUndefined();
  });
});

describe("SessionStore.listWorkspaces", () => {
  it("lists the workspaces that hold sessions, by name, with their counts", async () => {
    const store = new SessionStore(new MemoryEngine());
    await store.create({ workspace: "b", sessionId: "s1" });
    await store.create({ workspace: "a", sessionId: "s1" });
    await store.create({ workspace: "a", sessionId: "s2" });
    const page = await store.listWorkspaces();
    expect(page.workspaces.map((w) => [w.name, w.sessionCount])).toEqual([
      ["a", 2],
      ["b", 1],
    ]);
    expect(page.nextPageToken).toBe("");
  });
});
