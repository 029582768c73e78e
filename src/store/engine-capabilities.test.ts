import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { expectCode } from "../../test/support/fixtures.js";
import { unavailable } from "../core/errors.js";
import { matchesSessionRef } from "../core/ids.js";
import type {
  AppendResult,
  EntryPage,
  Planner,
  RootPageQuery,
  RootRecord,
  SessionKey,
  SessionRecord,
  StorageEngine,
  StorageListener,
  WorkspacePageQuery,
  WorkspaceRecord,
} from "../storage/engine.js";
import { MemoryEngine } from "../storage/memory.js";
import { SessionStore } from "./session-store.js";

/**
 * How the store uses the OPTIONAL capabilities of a storage engine (see
 * StorageEngine: exists, idsByRef, pageRoots, deleteMany), and how it copes
 * with an engine that fails under it. The engine here is the memory engine
 * behind a wrapper that has exactly the capabilities a test gives it,
 * written plainly from the contract's words, and counts the calls that
 * read a whole workspace.
 */

type Capability = "exists" | "idsByRef" | "pageRoots" | "deleteMany";

class WrappedEngine implements StorageEngine {
  readonly kind = "wrapped";
  /** Calls of the methods that read every id or root of a workspace. */
  listIdsCalls = 0;
  listRootsCalls = 0;
  /** Runs after listRoots has read the roots (a concurrent change). */
  afterListRoots: (() => Promise<void>) | undefined;
  /** Replaces the inner engine's create, delete or deleteMany (a failing disk). */
  failCreate: Error | undefined;
  failDeleteAt: { call: number; error: Error } | undefined;
  failDeleteMany: Error | undefined;
  private deleteCalls = 0;

  get blobs() {
    return this.inner.blobs;
  }

  exists?: (key: SessionKey) => Promise<boolean>;
  idsByRef?: (workspace: string, ref: string, limit: number) => Promise<string[]>;
  pageRoots?: (workspace: string, query: RootPageQuery) => Promise<RootRecord[]>;
  deleteMany?: (workspace: string, sessionIds: readonly string[]) => Promise<string[]>;

  constructor(
    readonly inner: MemoryEngine,
    capabilities: readonly Capability[],
  ) {
    if (capabilities.includes("exists")) {
      this.exists = async (key) => (await inner.listIds(key.workspace)).includes(key.sessionId);
    }
    if (capabilities.includes("idsByRef")) {
      this.idsByRef = async (workspace, ref, limit) =>
        (await inner.listIds(workspace))
          .filter((id) => matchesSessionRef(id, ref))
          .sort()
          .slice(0, limit);
    }
    if (capabilities.includes("pageRoots")) {
      this.pageRoots = async (workspace, q) => {
        const sign = q.order === "asc" ? 1 : -1;
        const cmp = (a: { createdMs: number; id: string }, b: { createdMs: number; id: string }) =>
          sign * (a.createdMs - b.createdMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const keyOf = (r: RootRecord) => ({ createdMs: r.createdAtMs, id: r.sessionId });
        const after = q.after;
        return (await inner.listRoots(workspace))
          .filter((r) => r.parentSessionId === q.parentSessionId)
          .filter((r) => after === undefined || cmp(keyOf(r), after) > 0)
          .sort((a, b) => cmp(keyOf(a), keyOf(b)))
          .slice(0, q.limit);
      };
    }
    if (capabilities.includes("deleteMany")) {
      this.deleteMany = async (workspace, ids) => {
        if (this.failDeleteMany !== undefined) throw this.failDeleteMany;
        return inner.deleteMany(workspace, ids);
      };
    }
  }

  async create(key: SessionKey, entries: readonly Entry[]): Promise<void> {
    if (this.failCreate !== undefined) throw this.failCreate;
    return this.inner.create(key, entries);
  }
  append(key: SessionKey, plan: Planner): Promise<AppendResult> {
    return this.inner.append(key, plan);
  }
  withhold(key: SessionKey, plan: Parameters<StorageEngine["withhold"]>[1]) {
    return this.inner.withhold(key, plan);
  }
  load(key: SessionKey) {
    return this.inner.load(key);
  }
  read(key: SessionKey, afterSeq: number, limit: number): Promise<EntryPage> {
    return this.inner.read(key, afterSeq, limit);
  }
  listIds(workspace: string): Promise<string[]> {
    this.listIdsCalls++;
    return this.inner.listIds(workspace);
  }
  async listRoots(workspace: string): Promise<RootRecord[]> {
    this.listRootsCalls++;
    const roots = await this.inner.listRoots(workspace);
    await this.afterListRoots?.();
    return roots;
  }
  list(workspace: string, sessionIds?: readonly string[]): Promise<SessionRecord[]> {
    return this.inner.list(workspace, sessionIds);
  }
  workspaces(): Promise<string[]> {
    return this.inner.workspaces();
  }
  workspacePage(query: WorkspacePageQuery): Promise<WorkspaceRecord[]> {
    return this.inner.workspacePage(query);
  }
  async delete(key: SessionKey): Promise<boolean> {
    this.deleteCalls++;
    if (this.failDeleteAt?.call === this.deleteCalls) throw this.failDeleteAt.error;
    return this.inner.delete(key);
  }
  subscribe(listener: StorageListener): () => void {
    return this.inner.subscribe(listener);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const T0 = Date.UTC(2026, 2, 4, 5, 6, 7);

let engine: WrappedEngine;
let store: SessionStore;
let clockMs: number;

function useEngine(...capabilities: Capability[]): void {
  engine = new WrappedEngine(new MemoryEngine(), capabilities);
  clockMs = T0;
  store = new SessionStore(engine, { now: () => new Date(clockMs) });
}

async function ids(workspace = "default"): Promise<string[]> {
  return (await engine.inner.listIds(workspace)).sort();
}

afterEach(async () => {
  await engine.close();
});

describe("resolving a session on an engine with only one of exists and idsByRef", () => {
  it("finds a unique prefix by listing the workspace: idsByRef is used only with exists", async () => {
    for (const only of ["exists", "idsByRef"] as const) {
      useEngine(only);
      await store.create({ sessionId: "unique-one" });
      await store.create({ sessionId: "other" });
      expect((await store.get(undefined, "uniq")).id).toBe("unique-one");
      expect(engine.listIdsCalls).toBeGreaterThan(0);
      await engine.close();
    }
  });
});

describe("resolving a session on an engine with exists and idsByRef", () => {
  beforeEach(async () => {
    useEngine("exists", "idsByRef");
    for (const sessionId of ["abcd", "abcd-long", "unique-one", "abc"]) {
      await store.create({ sessionId });
    }
  });

  it("finds a full id with exists, without listing the workspace, though it prefixes another id", async () => {
    expect((await store.get(undefined, "abcd")).id).toBe("abcd");
    expect((await store.get(undefined, "abc")).id).toBe("abc");
    expect(engine.listIdsCalls).toBe(0);
  });

  it("finds a unique prefix through idsByRef, without listing the workspace", async () => {
    expect((await store.get(undefined, "uniq")).id).toBe("unique-one");
    expect(engine.listIdsCalls).toBe(0);
  });

  it("names the first 5 candidates in id order and marks that there are more", async () => {
    const many = ["a", "b", "c", "d", "e", "f", "g"].map((c) => `many-${c}`);
    for (const sessionId of [...many].reverse()) await store.create({ sessionId });
    const err = await expectCode(() => store.get(undefined, "many"), "FAILED_PRECONDITION");
    expect(err.message).toContain(`it matches ${many.slice(0, 5).join(", ")}, … (give more`);
  });

  it("answers NOT_FOUND for a prefix nothing matches", async () => {
    await expectCode(() => store.get(undefined, "nothing"), "NOT_FOUND", '"nothing"');
  });
});

describe("resolving a session on an engine with exists but no idsByRef", () => {
  it("matches a prefix over listIds", async () => {
    useEngine("exists");
    await store.create({ sessionId: "unique-one" });
    expect((await store.get(undefined, "uniq")).id).toBe("unique-one");
    expect(engine.listIdsCalls).toBe(1);
  });
});

describe("listing on an engine with pageRoots", () => {
  beforeEach(() => {
    useEngine("pageRoots");
  });

  it("pages through pageRoots without reading every root: each session once, in order, subagents apart", async () => {
    // Two sessions per second, ties broken by id.
    for (let i = 0; i < 7; i++) {
      const sessionId = `s-${(i * 3) % 7}`;
      await store.create({ sessionId });
      if (i % 2 === 1) clockMs += 1000;
      if (i === 2) await store.create({ sessionId: "sub", parentSessionId: sessionId });
    }
    const byTime = await store.list({ order: "oldest", pageSize: 100 });
    expect(byTime.sessions.map((s) => s.id)).toEqual([
      "s-0",
      "s-3",
      "s-2",
      "s-6",
      "s-1",
      "s-5",
      "s-4",
    ]);
    for (const order of ["oldest", "newest"] as const) {
      const seen: string[] = [];
      const sizes: number[] = [];
      let pageToken = "";
      do {
        const page = await store.list({ order, pageSize: 3, pageToken });
        sizes.push(page.sessions.length);
        seen.push(...page.sessions.map((s) => s.id));
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      const expected = byTime.sessions.map((s) => s.id);
      expect(seen).toEqual(order === "oldest" ? expected : [...expected].reverse());
      expect(sizes).toEqual([3, 3, 1]);
    }
    expect((await store.list({ parentSessionId: "s-6" })).sessions.map((s) => s.id)).toEqual([
      "sub",
    ]);
    expect(engine.listRootsCalls).toBe(0);
  });
});

describe("listing on an engine without pageRoots", () => {
  it("leaves out a session deleted between reading the roots and the records", async () => {
    useEngine();
    for (const sessionId of ["a-1", "a-2", "a-3"]) await store.create({ sessionId });
    engine.afterListRoots = async () => {
      await engine.inner.delete({ workspace: "default", sessionId: "a-2" });
    };
    const page = await store.list({ order: "oldest" });
    expect(page.sessions.map((s) => s.id)).toEqual(["a-1", "a-3"]);
    expect(page.nextPageToken).toBe("");
  });
});

describe("deleting a session with its subagents", () => {
  /** parent ─ child-1 ─ grandchild, parent ─ child-2; and a bystander. */
  async function family(): Promise<void> {
    await store.create({ sessionId: "parent" });
    await store.create({ sessionId: "child-1", parentSessionId: "parent" });
    await store.create({ sessionId: "child-2", parentSessionId: "parent" });
    await store.create({ sessionId: "grandchild", parentSessionId: "child-1" });
    await store.create({ sessionId: "bystander" });
  }

  for (const capabilities of [["deleteMany"], []] as Capability[][]) {
    const name = capabilities.length > 0 ? "with deleteMany" : "one by one";
    it(`${name}: returns the session first, then its subagents generation by generation`, async () => {
      useEngine(...capabilities);
      await family();
      expect(await store.delete(undefined, "parent", { includeSubagents: true })).toEqual([
        "parent",
        "child-1",
        "child-2",
        "grandchild",
      ]);
      expect(await ids()).toEqual(["bystander"]);
    });

    it(`${name}: deletes a session re-created as the subagent of its own subagent, each once`, async () => {
      useEngine(...capabilities);
      await store.create({ sessionId: "a-session" });
      await store.create({ sessionId: "b-session", parentSessionId: "a-session" });
      await store.delete(undefined, "a-session");
      await store.create({ sessionId: "a-session", parentSessionId: "b-session" });
      expect(await store.delete(undefined, "a-session", { includeSubagents: true })).toEqual([
        "a-session",
        "b-session",
      ]);
      expect(await ids()).toEqual([]);
    });
  }

  it("with deleteMany: is all or nothing, a failing deleteMany deletes none of the family", async () => {
    useEngine("deleteMany");
    await family();
    engine.failDeleteMany = unavailable("disk gone");
    await expectCode(
      () => store.delete(undefined, "parent", { includeSubagents: true }),
      "UNAVAILABLE",
      "disk gone",
    );
    expect(await ids()).toEqual(["bystander", "child-1", "child-2", "grandchild", "parent"]);
  });

  it("one by one: goes children first, so a failure midway leaves no subagent without its parent", async () => {
    useEngine();
    await family();
    engine.failDeleteAt = { call: 3, error: unavailable("disk gone") };
    await expectCode(
      () => store.delete(undefined, "parent", { includeSubagents: true }),
      "UNAVAILABLE",
      "disk gone",
    );
    expect(await ids()).toEqual(["bystander", "child-1", "parent"]);
  });
});

describe("an engine failure other than ALREADY_EXISTS", () => {
  beforeEach(async () => {
    useEngine();
    await store.create({ sessionId: "source" });
    engine.failCreate = unavailable("disk full");
  });

  it("fails a create with the engine's error", async () => {
    await expectCode(() => store.create({ sessionId: "new-one" }), "UNAVAILABLE", "disk full");
  });

  it("fails a fork with the engine's error", async () => {
    await expectCode(
      () => store.fork(undefined, "source", { sessionId: "fork-1" }),
      "UNAVAILABLE",
      "disk full",
    );
  });
});
