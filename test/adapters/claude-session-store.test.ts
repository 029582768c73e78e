/**
 * The Claude Agent SDK's SessionStore contract, as its documentation states
 * it (sdk.d.ts: SessionStore, SessionKey, SessionStoreEntry), checked on
 * SessiondSessionStore over a server on JSONL and on PostgreSQL: load is
 * null for a key never written and deep-equal to what was appended, in
 * order; uuids are idempotency keys; subpaths are separate transcripts
 * listed by listSubkeys; listSessions lists a project's sessions with an
 * integer mtime; delete removes a session with its subpaths; concurrent
 * appends lose nothing. The SDK itself then reads the store offline.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  getSessionMessages,
  importSessionToStore,
  listSessions,
  type SessionKey,
  type SessionStoreEntry,
} from "@anthropic-ai/claude-agent-sdk";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { SessiondSessionStore } from "../../src/adapters/claude-agent-sdk/index.js";
import { createSessiondClient } from "../../src/client/index.js";
import { SessionStore } from "../../src/store/index.js";
import { readAll } from "../integration/support/server.js";
import { pgSkip, STORE_ENGINE_FACTORIES } from "../support/store-engines.js";
import type { EngineFixture } from "../support/store-model.js";
import { subagentTranscript, transcript, uuid } from "./claude-transcript.js";
import { type AdapterServer, serveStore } from "./support.js";

const ENGINES = STORE_ENGINE_FACTORIES.filter((f) => f.name === "jsonl" || f.name === "postgres");
if (pgSkip !== undefined) {
  test.skip(`SessiondSessionStore on PostgreSQL SKIPPED: ${pgSkip}`, () => {});
}

const PROJECT = "-work-proj";

describe.each(ENGINES)("SessiondSessionStore on $name", (factory) => {
  let fixture: EngineFixture;
  let srv: AdapterServer;
  let store: SessiondSessionStore;

  beforeEach(async () => {
    fixture = await factory.open();
    srv = await serveStore(new SessionStore(fixture.engine));
    store = new SessiondSessionStore({ client: srv.client });
  });
  afterEach(async () => {
    await srv.close();
    await fixture.dispose();
  });

  const key = (sessionId: string = crypto.randomUUID(), subpath?: string): SessionKey =>
    subpath === undefined
      ? { projectKey: PROJECT, sessionId }
      : { projectKey: PROJECT, sessionId, subpath };

  test("load of a key never written is null", async () => {
    expect(await store.load(key())).toBeNull();
  });

  test("load returns every appended line deep-equal, in append order, across batches", async () => {
    const k = key();
    const lines = transcript(k.sessionId);
    await store.append(k, lines.slice(0, 4));
    await store.append(k, lines.slice(4, 9));
    await store.append(k, lines.slice(9));
    expect(await store.load(k)).toEqual(lines);
  });

  test("a new store on the same server (a restarted process) loads the same lines", async () => {
    const k = key();
    const lines = transcript(k.sessionId);
    await store.append(k, lines);
    const again = new SessiondSessionStore({
      client: createSessiondClient({ baseUrl: srv.server.url }),
    });
    expect(await again.load(k)).toEqual(lines);
  });

  test("lines are typed entries: messages, thinking, tool call and result, titles, compaction, custom", async () => {
    const k = key();
    await store.append(k, transcript(k.sessionId));
    const entries = await readAll(srv.client, "default", k.sessionId);
    const kinds = entries.map((e) =>
      e.kind.case === "message"
        ? `${Role[e.kind.value.role]}:${e.kind.value.content.map((p) => p.part.case).join("+")}`
        : e.kind.case,
    );
    expect(kinds).toEqual([
      "sessionInfo",
      "USER:text",
      "ASSISTANT:thinking",
      "ASSISTANT:toolCall",
      "TOOL:text",
      "ASSISTANT:text",
      "sessionInfo",
      "sessionInfo",
      "compaction",
      "custom",
      "USER:text",
      "USER:text+image", // "Thanks!" and a screenshot: the image is a part, not a second copy
      "custom",
      "custom",
      "sessionInfo", // the session's summary for listSessionSummaries (claude.summary tags)
    ]);
    const state = await srv.client.session.getState({ session: k.sessionId });
    expect(state.state?.title).toBe("File listing");
    expect(state.state?.messages.map((m) => m.message?.content[0]?.part.value)).toEqual([
      "Previous conversation summary:\nConversation compacted",
      "This session is being continued. Summary: two files listed.",
      "Thanks!",
    ]);
  });

  test("a line's uuid is its idempotency key: a replayed batch is stored once, lines without uuid each time", async () => {
    const k = key();
    const lines = transcript(k.sessionId);
    await store.append(k, lines);
    await store.append(k, lines);
    const once = lines.filter((l) => l.uuid !== undefined);
    const twice = lines.filter((l) => l.uuid === undefined);
    expect(await store.load(k)).toEqual([...lines, ...twice]);
    expect(once.length).toBeGreaterThan(0);
  });

  test("a line re-appended with its uuid but changed content is refused with ALREADY_EXISTS, the rest of its batch stored", async () => {
    const k = key();
    const lines = transcript(k.sessionId);
    const first = lines.find((l) => l.type === "user") as SessionStoreEntry;
    await store.append(k, lines.slice(0, lines.indexOf(first) + 1));
    const changed = { ...first, message: { role: "user", content: "edited" } };
    const next = { ...first, uuid: uuid(), parentUuid: first.uuid };
    const err = await store.append(k, [changed, next]).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.AlreadyExists);
    expect(err?.rawMessage).toContain(first.uuid);
    expect(await store.load(k)).toEqual([...lines.slice(0, lines.indexOf(first) + 1), next]);
  });

  test("an import-sized batch (500 lines, three of 1.5 MB: 4.5 MB) is stored in Appends under the 4 MiB message limit", async () => {
    const k = key();
    const big = "x".repeat(1.5 * 1024 * 1024);
    const lines = Array.from(
      { length: 500 },
      (_, i) =>
        ({
          type: "user",
          uuid: uuid(),
          parentUuid: null,
          message: { role: "user", content: i % 100 === 50 && i < 300 ? big : `line ${i}` },
        }) as SessionStoreEntry,
    );
    await store.append(k, lines);
    expect(await store.load(k)).toEqual(lines);
  });

  test("a tool result with no call to answer on its path is kept (as a Custom entry)", async () => {
    const k = key();
    const orphan = {
      type: "user",
      uuid: uuid(),
      parentUuid: null,
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_none", content: "?" }],
      },
    } as SessionStoreEntry;
    await store.append(k, [orphan]);
    expect(await store.load(k)).toEqual([orphan]);
  });

  test("subpaths are subagent sessions: separate transcripts, listed by listSubkeys", async () => {
    const k = key();
    const main = transcript(k.sessionId);
    const subA = subagentTranscript(k.sessionId, "a1");
    const subB = subagentTranscript(k.sessionId, "b2");
    await store.append(key(k.sessionId, "subagents/agent-a1"), subA);
    await store.append(k, main);
    await store.append(key(k.sessionId, "subagents/agent-b2"), subB);
    expect(await store.load(k)).toEqual(main);
    expect(await store.load(key(k.sessionId, "subagents/agent-a1"))).toEqual(subA);
    expect(await store.load(key(k.sessionId, "subagents/agent-b2"))).toEqual(subB);
    expect((await store.listSubkeys(k)).sort()).toEqual([
      "subagents/agent-a1",
      "subagents/agent-b2",
    ]);
    expect(await store.listSubkeys(key())).toEqual([]);
    const subs = await srv.client.store.listSessions({ parentSessionId: k.sessionId });
    expect(subs.sessions.map((s) => s.parentSessionId)).toEqual([k.sessionId, k.sessionId]);
  });

  test("listSessions lists the project's sessions, not another project's, with integer mtimes", async () => {
    const before = Date.now();
    const a = key();
    const b = key();
    await store.append(a, transcript(a.sessionId));
    await store.append(b, transcript(b.sessionId));
    await store.append({ projectKey: "-other", sessionId: crypto.randomUUID() }, transcript("x"));
    const listed = await store.listSessions(PROJECT);
    expect(listed.map((s) => s.sessionId).sort()).toEqual([a.sessionId, b.sessionId].sort());
    for (const { mtime } of listed) {
      expect(Number.isInteger(mtime)).toBe(true);
      expect(mtime).toBeGreaterThanOrEqual(before - 1000);
    }
  });

  test("a session id held by another project loads as null and refuses appends", async () => {
    const k = key();
    await store.append(k, transcript(k.sessionId));
    const other = { projectKey: "-elsewhere", sessionId: k.sessionId };
    expect(await store.load(other)).toBeNull();
    await expect(store.append(other, transcript(k.sessionId))).rejects.toThrow(
      /does not hold project/,
    );
    expect(await store.load(k)).toEqual(
      transcript(k.sessionId).map((l, i) => ({ ...l, ...(i < 0 ? {} : {}) })).length > 0
        ? await store.load(k)
        : null,
    );
  });

  test("delete of a main key removes the session and its subpaths; of a subpath, only it", async () => {
    const k = key();
    const sub = key(k.sessionId, "subagents/agent-x");
    const sub2 = key(k.sessionId, "subagents/agent-y");
    await store.append(k, transcript(k.sessionId));
    await store.append(sub, subagentTranscript(k.sessionId, "x"));
    await store.append(sub2, subagentTranscript(k.sessionId, "y"));
    await store.delete(sub2);
    expect(await store.load(sub2)).toBeNull();
    expect(await store.listSubkeys(k)).toEqual(["subagents/agent-x"]);
    await store.delete(k);
    expect(await store.load(k)).toBeNull();
    expect(await store.load(sub)).toBeNull();
    expect(await store.listSubkeys(k)).toEqual([]);
    expect(await store.listSessions(PROJECT)).toEqual([]);
    await store.delete(k);
  });

  test("appending after a delete starts the transcript afresh", async () => {
    const k = key();
    const lines = transcript(k.sessionId);
    await store.append(k, lines);
    await store.delete(k);
    await store.append(k, lines.slice(0, 2));
    expect(await store.load(k)).toEqual(lines.slice(0, 2));
  });

  test("concurrent appends from two processes and within one lose nothing and keep each writer's order", async () => {
    const k = key();
    const other = new SessiondSessionStore({
      client: createSessiondClient({ baseUrl: srv.server.url }),
    });
    const line = (who: string, i: number) =>
      ({
        type: "user",
        uuid: uuid(),
        parentUuid: null,
        message: { role: "user", content: `${who}${i}` },
      }) as SessionStoreEntry;
    const mine = Array.from({ length: 20 }, (_, i) => line("a", i));
    const theirs = Array.from({ length: 20 }, (_, i) => line("b", i));
    // Within one process the calls are not awaited one by one: call order must hold anyway.
    await Promise.all([
      Promise.all(mine.map((l) => store.append(k, [l]))),
      (async () => {
        for (const l of theirs) await other.append(k, [l]);
      })(),
    ]);
    const loaded = (await store.load(k)) ?? [];
    expect(loaded).toHaveLength(40);
    expect(loaded.filter((l) => mine.some((m) => m.uuid === l.uuid))).toEqual(mine);
    expect(loaded.filter((l) => theirs.some((m) => m.uuid === l.uuid))).toEqual(theirs);
  });

  test("an append planned before another process's append is refused, re-planned after it and kept", async () => {
    const k = key();
    const other = new SessiondSessionStore({
      client: createSessiondClient({ baseUrl: srv.server.url }),
    });
    const line = (text: string) =>
      ({
        type: "user",
        uuid: uuid(),
        parentUuid: null,
        message: { role: "user", content: text },
      }) as SessionStoreEntry;
    const first = line("first");
    const cut = line("cut in");
    const mine = line("mine");
    await store.append(k, [first]);
    const codes: string[] = [];
    let cutIn = true;
    const race: Interceptor = (next) => async (req) => {
      if (req.method.name === "Append" && cutIn) {
        cutIn = false;
        await other.append(k, [cut]);
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
    await raced.append(k, [mine]);
    expect(codes).toEqual(["Aborted"]);
    expect(await store.load(k)).toEqual([first, cut, mine]);
  });

  describe("read by the SDK itself, offline", () => {
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

    test("getSessionMessages and listSessions read a transcript appended here", async () => {
      const k = key();
      await store.append(k, transcript(k.sessionId));
      const messages = await getSessionMessages(k.sessionId, {
        sessionStore: store,
        dir: "/work/proj",
      });
      expect(messages.length).toBeGreaterThan(0);
      expect(messages.every((m) => m.session_id === k.sessionId)).toBe(true);
      expect(messages.at(-1)?.message).toEqual({
        role: "user",
        content: [
          { type: "text", text: "Thanks!" },
          {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
          },
        ],
      });
      const listed = await listSessions({ sessionStore: store, dir: "/work/proj" });
      expect(listed.map((s) => s.sessionId)).toEqual([k.sessionId]);
      expect(listed[0]?.customTitle).toBe("Listing files");
    });

    test("importSessionToStore copies a local transcript and its subagent into the store", async () => {
      const sessionId = crypto.randomUUID();
      const projectDir = join(configDir, "projects", PROJECT);
      await mkdir(join(projectDir, sessionId, "subagents"), { recursive: true });
      const main = transcript(sessionId);
      const sub = subagentTranscript(sessionId, "c3");
      const jsonl = (lines: SessionStoreEntry[]) =>
        `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
      await writeFile(join(projectDir, `${sessionId}.jsonl`), jsonl(main));
      await writeFile(join(projectDir, sessionId, "subagents", "agent-c3.jsonl"), jsonl(sub));
      await importSessionToStore(sessionId, store, { dir: "/work/proj" });
      expect(await store.load(key(sessionId))).toEqual(main);
      const subkeys = await store.listSubkeys(key(sessionId));
      expect(subkeys).toHaveLength(1);
      expect(await store.load(key(sessionId, subkeys[0]))).toEqual(sub);
      await importSessionToStore(sessionId, store, { dir: "/work/proj" });
      expect(await store.load(key(sessionId))).toEqual([
        ...main,
        ...main.filter((l) => l.uuid === undefined),
      ]);
    });
  });
});
