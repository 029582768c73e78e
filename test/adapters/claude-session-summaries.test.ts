/**
 * SessiondSessionStore.listSessionSummaries (the SDK's SessionStore, optional
 * method): the summaries equal the SDK's own (its InMemorySessionStore, and
 * foldSessionSummary over the loaded lines), a listing reads pages of
 * ListSessions and no entries, a session written before summaries were kept
 * is folded once, and two writers keep a summary of all their lines.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  foldSessionSummary,
  InMemorySessionStore,
  listSessions,
  type SessionKey,
  type SessionStore,
  type SessionStoreEntry,
} from "@anthropic-ai/claude-agent-sdk";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { EntryKind } from "../../gen/sessiond/v1/session_pb.js";
import { SessiondSessionStore } from "../../src/adapters/claude-agent-sdk/index.js";
import { planLines } from "../../src/adapters/claude-agent-sdk/line-plan.js";
import { tagsOf } from "../../src/adapters/claude-agent-sdk/session-keys.js";
import { RemoteSession } from "../../src/adapters/remote-session.js";
import { createSessiondClient } from "../../src/client/index.js";
import { SessionStore as Store } from "../../src/store/index.js";
import { pgSkip, STORE_ENGINE_FACTORIES } from "../support/store-engines.js";
import type { EngineFixture } from "../support/store-model.js";
import { transcript, uuid } from "./claude-transcript.js";
import { type AdapterServer, serveStore } from "./support.js";

const ENGINES = STORE_ENGINE_FACTORIES.filter((f) => f.name === "jsonl" || f.name === "postgres");
if (pgSkip !== undefined) {
  test.skip(`listSessionSummaries on PostgreSQL SKIPPED: ${pgSkip}`, () => {});
}

const PROJECT = "-work-proj";

/** A user prompt line. */
function prompt(sessionId: string, text: string, parentUuid: string | null = null) {
  return {
    type: "user",
    uuid: uuid(),
    parentUuid,
    sessionId,
    timestamp: new Date().toISOString(),
    cwd: "/work/proj",
    gitBranch: "feature/é",
    message: { role: "user", content: text },
  } as SessionStoreEntry;
}

/** Lines that move every field the SDK's fold keeps: prompts (one long, multi-byte), titles, tag, summary, branch. */
function eventful(sessionId: string): SessionStoreEntry[][] {
  const first = prompt(sessionId, `Ünïcödé prompt ${"ß€".repeat(150)}`);
  return [
    [first, { type: "last-prompt", lastPrompt: "first", sessionId } as SessionStoreEntry],
    [
      prompt(sessionId, "<bash-input>ls -la</bash-input>", first.uuid as string),
      { type: "tag", tag: "wip", sessionId } as SessionStoreEntry,
      { type: "summary", summary: "Listing the files", leafUuid: first.uuid } as SessionStoreEntry,
    ],
    [
      { type: "custom-title", customTitle: "Files «ls»", sessionId } as SessionStoreEntry,
      { type: "last-prompt", lastPrompt: "second", sessionId } as SessionStoreEntry,
      { type: "tag", tag: "", sessionId } as SessionStoreEntry,
    ],
  ];
}

/** Per session id, the summary data, for comparing listings. */
function byId(summaries: Array<{ sessionId: string; data: unknown }>) {
  return Object.fromEntries(summaries.map((s) => [s.sessionId, s.data]));
}

/** A store whose client counts the RPCs it makes, by method name. */
function counted(srv: AdapterServer): { store: SessiondSessionStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const count: Interceptor = (next) => (req) => {
    calls.set(req.method.name, (calls.get(req.method.name) ?? 0) + 1);
    return next(req);
  };
  const client = createSessiondClient({ baseUrl: srv.server.url, interceptors: [count] });
  return { store: new SessiondSessionStore({ client }), calls };
}

describe.each(ENGINES)("listSessionSummaries on $name", (factory) => {
  let fixture: EngineFixture;
  let srv: AdapterServer;
  let store: SessiondSessionStore;

  beforeEach(async () => {
    fixture = await factory.open();
    srv = await serveStore(new Store(fixture.engine));
    store = new SessiondSessionStore({ client: srv.client });
  });
  afterEach(async () => {
    await srv.close();
    await fixture.dispose();
  });

  const key = (sessionId: string = crypto.randomUUID()): SessionKey => ({
    projectKey: PROJECT,
    sessionId,
  });

  /** The summary the SDK folds over what `load` returns. */
  const foldOfLoad = async (k: SessionKey) =>
    foldSessionSummary(undefined, k, (await store.load(k)) ?? []).data;

  const summaryOf = async (k: SessionKey, from: SessionStore = store) =>
    byId((await from.listSessionSummaries?.(PROJECT)) ?? [])[k.sessionId];

  test("the summaries are those the SDK's InMemorySessionStore keeps for the same appends", async () => {
    const reference = new InMemorySessionStore();
    const batches = new Map<SessionKey, SessionStoreEntry[][]>();
    const a = key();
    const b = key();
    batches.set(a, eventful(a.sessionId));
    const lines = transcript(b.sessionId);
    batches.set(b, [lines.slice(0, 5), lines.slice(5)]);
    for (const [k, list] of batches) {
      for (const batch of list) {
        await store.append(k, batch);
        await reference.append(k, batch);
      }
    }
    await store.append({ ...a, subpath: "subagents/agent-x" }, [prompt(a.sessionId, "sub")]);
    expect(byId(await store.listSessionSummaries(PROJECT))).toEqual(
      byId(await reference.listSessionSummaries(PROJECT)),
    );
  });

  test("a summary longer than one tag value (256 bytes) reads back whole", async () => {
    const k = key();
    await store.append(k, eventful(k.sessionId).flat());
    const meta = await srv.client.store.getSession({ session: k.sessionId });
    const chunks = Object.keys(meta.session?.tags ?? {}).filter((t) =>
      t.startsWith("claude.summary."),
    );
    expect(chunks.length).toBeGreaterThan(1);
    expect(await summaryOf(k)).toEqual(await foldOfLoad(k));
  });

  test("a replayed line is folded once, as load returns it once", async () => {
    const k = key();
    const onMain = { ...prompt(k.sessionId, "first"), gitBranch: "main" };
    const onFeature = { ...prompt(k.sessionId, "second", onMain.uuid), gitBranch: "feature" };
    await store.append(k, [onMain]);
    await store.append(k, [onFeature]);
    await store.append(k, [onMain]); // the SDK's retry, or an importSessionToStore replay
    expect(await summaryOf(k)).toMatchObject({ gitBranch: "feature" });
    expect(await summaryOf(k)).toEqual(await foldOfLoad(k));
  });

  test("the summary's SessionInfo entries stay on the conversation's path, not on branches of their own", async () => {
    const k = key();
    const lines = transcript(k.sessionId);
    for (let i = 0; i < lines.length; i += 2) await store.append(k, lines.slice(i, i + 2));
    const tree = await srv.client.session.getTree({ session: k.sessionId });
    const infos = tree.nodes.filter((n) => n.kind === EntryKind.SESSION_INFO);
    expect(infos.length).toBeGreaterThan(3);
    expect(infos.filter((n) => !n.onCurrentPath)).toEqual([]);
    expect(await store.load(k)).toEqual(lines);
  });

  test("a listing of the project's sessions costs one ListSessions page and no entry reads, with listSessions' mtimes", async () => {
    const keys = [key(), key(), key()];
    for (const k of keys) await store.append(k, eventful(k.sessionId).flat());
    const { store: listing, calls } = counted(srv);
    const listed = await listing.listSessionSummaries(PROJECT);
    expect(listed.map((s) => s.sessionId).sort()).toEqual(keys.map((k) => k.sessionId).sort());
    expect(Object.fromEntries(calls)).toEqual({ ListSessions: 1 });
    // The mtimes are listSessions' own, so the SDK takes no summary for stale.
    const mtimes = (list: Array<{ sessionId: string; mtime: number }>) =>
      Object.fromEntries(list.map((s) => [s.sessionId, s.mtime]));
    expect(mtimes(listed)).toEqual(mtimes(await store.listSessions(PROJECT)));
  });

  describe("read by the SDK's listSessions", () => {
    let configDir: string;
    let savedConfigDir: string | undefined;
    beforeEach(async () => {
      configDir = await mkdtemp(join(tmpdir(), "claude-config-"));
      savedConfigDir = process.env.CLAUDE_CONFIG_DIR;
      process.env.CLAUDE_CONFIG_DIR = configDir;
    });
    afterEach(async () => {
      if (savedConfigDir === undefined) delete process.env.CLAUDE_CONFIG_DIR;
      else process.env.CLAUDE_CONFIG_DIR = savedConfigDir;
      await rm(configDir, { recursive: true, force: true });
    });

    test("the SDK lists from the summaries without loading a session, as it lists its in-memory store", async () => {
      const reference = new InMemorySessionStore();
      const keys = [key(), key()];
      for (const k of keys) {
        for (const batch of eventful(k.sessionId)) {
          await store.append(k, batch);
          await reference.append(k, batch);
        }
      }
      const { store: listing, calls } = counted(srv);
      const ours = await listSessions({ sessionStore: listing, dir: "/work/proj" });
      const theirs = await listSessions({ sessionStore: reference, dir: "/work/proj" });
      const shown = (list: typeof ours) =>
        list
          .map(({ lastModified: _, ...info }) => info)
          .sort((x, y) => x.sessionId.localeCompare(y.sessionId));
      expect(shown(ours)).toEqual(shown(theirs));
      expect(ours[0]?.customTitle).toBe("Files «ls»");
      expect(calls.get("GetEntries")).toBeUndefined();
    });
  });

  test("a session written before summaries were kept is listed with the summary of its log, read once, its update time kept", async () => {
    const k = key();
    const lines = eventful(k.sessionId).flat();
    // As the store wrote sessions before: the lines, and no summary tags.
    await srv.client.store.createSession({ sessionId: k.sessionId, tags: tagsOf(k) });
    await new RemoteSession(srv.client, { workspace: "default", sessionId: k.sessionId }).append(
      (log) => planLines(log, lines).entries,
    );
    const before = (await srv.client.store.getSession({ session: k.sessionId })).session;
    const { store: listing, calls } = counted(srv);
    expect(await summaryOf(k, listing)).toEqual(foldSessionSummary(undefined, k, lines).data);
    expect(calls.get("GetEntries")).toBeGreaterThan(0);
    calls.clear();
    expect(await summaryOf(k, listing)).toEqual(foldSessionSummary(undefined, k, lines).data);
    expect(Object.fromEntries(calls)).toEqual({ ListSessions: 1 });
    const after = (await srv.client.store.getSession({ session: k.sessionId })).session;
    expect(after?.updatedAt).toEqual(before?.updatedAt);
    expect(await store.load(k)).toEqual(lines);
  });

  test("a summary too large for its tags is not stored, and is folded from the log when listed", async () => {
    const k = key();
    const long = { type: "custom-title", customTitle: "t".repeat(3000), sessionId: k.sessionId };
    await store.append(k, [prompt(k.sessionId, "hi"), long as SessionStoreEntry]);
    const meta = await srv.client.store.getSession({ session: k.sessionId });
    expect(
      Object.keys(meta.session?.tags ?? {}).filter((t) => t.startsWith("claude.summary")),
    ).toEqual([]);
    expect(await summaryOf(k)).toEqual(await foldOfLoad(k));
    const short = { type: "custom-title", customTitle: "short", sessionId: k.sessionId };
    await store.append(k, [short as SessionStoreEntry]);
    const { store: listing, calls } = counted(srv);
    expect(await summaryOf(k, listing)).toEqual(await foldOfLoad(k));
    expect(calls.get("GetEntries")).toBeUndefined();
  });

  test("two processes appending at once keep a summary of every line", async () => {
    const k = key();
    const other = new SessiondSessionStore({
      client: createSessiondClient({ baseUrl: srv.server.url }),
    });
    const titled = (who: string, i: number) => [
      prompt(k.sessionId, `${who} ${i}`),
      {
        type: "last-prompt",
        lastPrompt: `${who} ${i}`,
        sessionId: k.sessionId,
      } as SessionStoreEntry,
      ...(i % 3 === 0
        ? [
            {
              type: "ai-title",
              aiTitle: `${who} title ${i}`,
              sessionId: k.sessionId,
            } as SessionStoreEntry,
          ]
        : []),
    ];
    await Promise.all([
      (async () => {
        for (let i = 0; i < 12; i++) await store.append(k, titled("a", i));
      })(),
      (async () => {
        for (let i = 0; i < 12; i++) await other.append(k, titled("b", i));
      })(),
    ]);
    expect(await summaryOf(k)).toEqual(await foldOfLoad(k));
  });

  test("an append re-planned after another process's append folds that process's lines too", async () => {
    const k = key();
    const other = new SessiondSessionStore({
      client: createSessiondClient({ baseUrl: srv.server.url }),
    });
    await store.append(k, [prompt(k.sessionId, "first")]);
    const theirs = { type: "custom-title", customTitle: "theirs", sessionId: k.sessionId };
    const codes: string[] = [];
    let cutIn = true;
    const race: Interceptor = (next) => async (req) => {
      if (req.method.name === "Append" && cutIn) {
        cutIn = false;
        await other.append(k, [theirs as SessionStoreEntry]);
      }
      try {
        return await next(req);
      } catch (err) {
        codes.push(Code[ConnectError.from(err).code]);
        throw err;
      }
    };
    const raced = new SessiondSessionStore({
      client: createSessiondClient({ baseUrl: srv.server.url, interceptors: [race] }),
    });
    await raced.load(k);
    await raced.append(k, [
      { type: "last-prompt", lastPrompt: "mine", sessionId: k.sessionId } as SessionStoreEntry,
    ]);
    expect(codes).toEqual(["Aborted"]);
    const summary = await summaryOf(k);
    expect(summary).toMatchObject({ customTitle: "theirs", lastPrompt: "mine" });
    expect(summary).toEqual(await foldOfLoad(k));
  });
});
