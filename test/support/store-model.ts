/**
 * Test support for the store layer: the engines the store tests run against
 * and a deliberately naive model of a store
 * (entries with parents, a leaf pointer, path and fold written from the
 * spec's words) that the model-based test compares the real store with.
 * Nothing here calls the tree or fold code of src/core: an independent model
 * is the point.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Entry, type Message, Role } from "../../gen/sessiond/v1/entry_pb.js";
import type { SessionState } from "../../gen/sessiond/v1/session_pb.js";
import type { StorageEngine } from "../../src/storage/engine.js";
import { MemoryEngine } from "../../src/storage/memory.js";
import type { Session } from "../../src/store/session.js";
import { assistant, user } from "./fixtures.js";

// ---------------------------------------------------------------------------
// Engines

/** One engine instance under test, on storage of its own. */
export interface EngineFixture {
  readonly engine: StorageEngine;
  /**
   * Closes the current engine and opens a new one on the same storage, as a
   * restarted process would. Undefined when the storage dies with the engine.
   */
  readonly reopen: (() => Promise<StorageEngine>) | undefined;
  /** Closes the engine and removes its storage. */
  dispose(): Promise<void>;
}

export interface EngineFactory {
  readonly name: string;
  /** Whether fixtures of this engine can be reopened on the same storage. */
  readonly reopens: boolean;
  open(): Promise<EngineFixture>;
}

const memoryFactory: EngineFactory = {
  name: "memory",
  reopens: false,
  async open() {
    const engine = new MemoryEngine();
    return { engine, reopen: undefined, dispose: () => engine.close() };
  },
};

type JsonlEngineClass = new (options: { dataDir: string }) => StorageEngine;

/**
 * The JSONL engine on a fresh temp dir, when src/storage/jsonl exists. The
 * specifier is a variable so that this file typechecks before the engine
 * is written. Both paths are relative to this file (test/support/).
 */
async function jsonlFactory(): Promise<EngineFactory | undefined> {
  const specifier: string = "../../src/storage/jsonl/index.js";
  if (!existsSync(new URL("../../src/storage/jsonl/index.ts", import.meta.url))) return undefined;
  const { JsonlEngine } = (await import(specifier)) as { JsonlEngine?: JsonlEngineClass };
  if (JsonlEngine === undefined) return undefined;
  return {
    name: "jsonl",
    reopens: true,
    async open() {
      const dataDir = await mkdtemp(join(tmpdir(), "sessiond-store-"));
      let engine: StorageEngine = new JsonlEngine({ dataDir });
      return {
        get engine() {
          return engine;
        },
        reopen: async () => {
          await engine.close();
          engine = new JsonlEngine({ dataDir });
          return engine;
        },
        async dispose() {
          await engine.close();
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
  };
}

/** Every engine the store tests run against. */
export const ENGINE_FACTORIES: readonly EngineFactory[] = [
  memoryFactory,
  ...[await jsonlFactory()].filter((f): f is EngineFactory => f !== undefined),
];

// ---------------------------------------------------------------------------
// The model

export type ModelKind = "info" | "message" | "label" | "compaction" | "leaf";

/** One entry as the model sees it: just enough to recompute paths and folds. */
export interface ModelEntry {
  readonly id: string;
  readonly parentId: string | undefined;
  readonly kind: ModelKind;
  /** Message text, label text or compaction summary. */
  readonly text?: string;
  readonly role?: "user" | "assistant";
  /** Compaction: the ids it replaces. */
  readonly replaces?: readonly string[];
  /** Leaf: the entry it moves the pointer to. */
  readonly target?: string;
}

/** A message of the folded context: which entry it stands for and its text. */
export interface ModelMessage {
  readonly entryId: string;
  readonly text: string;
}

/** One session of the model: its log in seq order and the leaf pointer. */
export class ModelSession {
  readonly entries: ModelEntry[] = [];
  private readonly byId = new Map<string, ModelEntry>();
  leafId = "";

  constructor(readonly id: string) {}

  get rootId(): string {
    return (this.entries[0] as ModelEntry).id;
  }

  get(id: string): ModelEntry | undefined {
    return this.byId.get(id);
  }

  /** Appends an entry; every entry moves the leaf to itself, a Leaf to its target. */
  add(entry: ModelEntry): void {
    this.entries.push(entry);
    this.byId.set(entry.id, entry);
    this.leafId = entry.kind === "leaf" ? (entry.target as string) : entry.id;
  }

  /** Entries that may be parents, rewind targets and fork points (all but Leaf entries). */
  pointable(): ModelEntry[] {
    return this.entries.filter((e) => e.kind !== "leaf");
  }

  /** Distinct label texts in the log. */
  labels(): string[] {
    return [
      ...new Set(this.entries.filter((e) => e.kind === "label").map((e) => e.text as string)),
    ];
  }

  /** The newest Label entry with this text. */
  labelEntry(text: string): string | undefined {
    let found: string | undefined;
    for (const e of this.entries) if (e.kind === "label" && e.text === text) found = e.id;
    return found;
  }

  /** Ids root → `to` (the leaf by default). */
  pathIds(to: string = this.leafId): string[] {
    const ids: string[] = [];
    for (let e = this.byId.get(to); e !== undefined; ) {
      ids.unshift(e.id);
      e = e.parentId === undefined ? undefined : this.byId.get(e.parentId);
    }
    return ids;
  }

  private path(to: string): ModelEntry[] {
    return this.pathIds(to).map((id) => this.byId.get(id) as ModelEntry);
  }

  /**
   * CONTEXT view: messages on the path; a compaction puts one summary message
   * where the first message it replaces was and drops the others it replaces.
   */
  context(to: string = this.leafId): ModelMessage[] {
    let items: ModelMessage[] = [];
    for (const e of this.path(to)) {
      if (e.kind === "message") items.push({ entryId: e.id, text: e.text as string });
      if (e.kind === "compaction") {
        const replaced = new Set(e.replaces);
        const at = items.findIndex((m) => replaced.has(m.entryId));
        const summary = { entryId: e.id, text: `Previous conversation summary:\n${e.text}` };
        items = items.filter((m) => !replaced.has(m.entryId));
        items.splice(at < 0 ? items.length : at, 0, summary);
      }
    }
    return items;
  }

  /** HISTORY view: every message on the path, compactions ignored. */
  history(to: string = this.leafId): ModelMessage[] {
    return this.path(to)
      .filter((e) => e.kind === "message")
      .map((e) => ({ entryId: e.id, text: e.text as string }));
  }

  /** The parent of the newest compaction on the current path. */
  floor(): string | undefined {
    let floor: string | undefined;
    for (const e of this.path(this.leafId)) if (e.kind === "compaction") floor = e.parentId;
    return floor;
  }

  /** Whether a rewind to `target` needs allow_before_compaction. */
  beforeFloor(target: string): boolean {
    const floor = this.floor();
    return floor !== undefined && !this.pathIds(target).includes(floor);
  }
}

/** The whole store as the model sees it: sessions by id and the one being worked on. */
export class StoreModel {
  readonly sessions = new Map<string, ModelSession>();
  private counter = 0;

  constructor(public current: string) {}

  /** A fresh id, unique across the model's sessions. */
  nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter}`;
  }

  get session(): ModelSession {
    return this.sessions.get(this.current) as ModelSession;
  }

  /**
   * Forks the current session at `target` into a new session whose root is
   * `rootId`: copies of the path root → target, the first re-parented onto
   * the new root. The fork becomes current.
   */
  fork(forkId: string, rootId: string, target: string): ModelSession {
    const source = this.session;
    const fork = new ModelSession(forkId);
    fork.add({ id: rootId, parentId: undefined, kind: "info" });
    source
      .pathIds(target)
      .slice(1)
      .forEach((id, i) => {
        const e = source.get(id) as ModelEntry;
        fork.add(i === 0 ? { ...e, parentId: rootId } : e);
      });
    this.sessions.set(forkId, fork);
    this.current = forkId;
    return fork;
  }
}

// ---------------------------------------------------------------------------
// The real store in the model's terms (shared by the model test and the
// reliability battery's T5)

/** Item `n` of a non-empty list, wrapping around. */
export function pick<T>(items: readonly T[], n: number): T {
  return items[n % items.length] as T;
}

/** A message's text parts joined; other parts as <kind>. */
export function textOf(message: Message | undefined): string {
  return (message?.content ?? [])
    .map((p) => (p.part.case === "text" ? p.part.value : `<${p.part.case}>`))
    .join("");
}

/** A message in the model's terms (user() / assistant() of the fixtures). */
export function messageEntry(
  id: string,
  role: "user" | "assistant",
  text: string,
  parentId?: string,
): Entry {
  return role === "user" ? user(id, text, parentId) : assistant(id, text, [], parentId);
}

/** A stored entry in the model's terms. */
export function asModel(e: Entry): ModelEntry {
  const base = { id: e.id, parentId: e.parentId };
  const k = e.kind;
  switch (k.case) {
    case "sessionInfo":
      return { ...base, kind: "info" };
    case "message":
      return {
        ...base,
        kind: "message",
        role: k.value.role === Role.USER ? "user" : "assistant",
        text: textOf(k.value),
      };
    case "label":
      return { ...base, kind: "label", text: k.value.label };
    case "compaction":
      return {
        ...base,
        kind: "compaction",
        text: k.value.summary,
        replaces: k.value.replacesEntryIds,
      };
    case "leaf":
      return { ...base, kind: "leaf", target: k.value.leafId };
    default:
      throw new Error(`unexpected entry kind ${k.case} for ${e.id}`);
  }
}

export function messagesOf(state: SessionState): ModelMessage[] {
  return state.messages.map((m) => ({ entryId: m.entryId, text: textOf(m.message) }));
}

/** Every entry of a session, read page by page. */
export async function allEntries(session: Session): Promise<Entry[]> {
  const all: Entry[] = [];
  for (;;) {
    const page = await session.entries(all.length, 100);
    if (page.entries.length === 0) return all;
    all.push(...page.entries);
  }
}
