/**
 * The sessiond ids of SessiondSessionStore's subpath (subagent) sessions:
 * they do not start with the main session's id, so a prefix of the main id
 * (what `sessiond show 5a1c9e3e` resolves) names the main session only; and
 * a subpath session a store wrote under the old id (`<main>-<16 hex of
 * sha256(subpath)>`) is still loaded, appended to, listed and deleted where
 * it is.
 */
import { createHash } from "node:crypto";
import type { SessionKey } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { SessiondSessionStore } from "../../src/adapters/claude-agent-sdk/index.js";
import { planLines } from "../../src/adapters/claude-agent-sdk/line-plan.js";
import { RemoteSession } from "../../src/adapters/remote-session.js";
import { createSessiondClient } from "../../src/client/index.js";
import { SessionStore } from "../../src/store/index.js";
import { pgSkip, STORE_ENGINE_FACTORIES } from "../support/store-engines.js";
import type { EngineFixture } from "../support/store-model.js";
import { subagentTranscript, transcript } from "./claude-transcript.js";
import { type AdapterServer, serveStore } from "./support.js";

const ENGINES = STORE_ENGINE_FACTORIES.filter((f) => f.name === "jsonl" || f.name === "postgres");
if (pgSkip !== undefined) {
  test.skip(`Claude subpath session ids on PostgreSQL SKIPPED: ${pgSkip}`, () => {});
}

const PROJECT = "-work-proj";
const SUBPATH = "subagents/agent-a1";

describe.each(ENGINES)("Claude subpath session ids on $name", (factory) => {
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

  const main = (): SessionKey => ({ projectKey: PROJECT, sessionId: crypto.randomUUID() });
  const sub = (k: SessionKey): SessionKey => ({ ...k, subpath: SUBPATH });
  const children = async (k: SessionKey) =>
    (await srv.client.store.listSessions({ parentSessionId: k.sessionId })).sessions.map(
      (s) => s.id,
    );

  test("a prefix of the main session's id resolves to the main session, not to its subagent sessions", async () => {
    const k = main();
    await store.append(k, transcript(k.sessionId));
    await store.append(sub(k), subagentTranscript(k.sessionId, "a1"));
    await store.append(
      { ...k, subpath: "subagents/agent-b2" },
      subagentTranscript(k.sessionId, "b2"),
    );
    expect(await children(k)).toHaveLength(2);
    for (const prefix of [k.sessionId.slice(0, 8), k.sessionId]) {
      const found = await srv.client.store.getSession({ session: prefix });
      expect(found.session?.id).toBe(k.sessionId);
    }
  });

  /** A subpath session as stores wrote them before: id `<main>-<hash>`, the lines as the store plans them. */
  async function writeOldSubpath(k: SessionKey) {
    const oldId = `${k.sessionId}-${createHash("sha256").update(SUBPATH).digest("hex").slice(0, 16)}`;
    const mainLines = transcript(k.sessionId);
    await store.append(k, mainLines);
    await srv.client.store.createSession({
      sessionId: oldId,
      parentSessionId: k.sessionId,
      agentType: "claude-subagent",
      tags: { "claude.project": PROJECT, "claude.session": k.sessionId, "claude.subpath": SUBPATH },
    });
    const lines = subagentTranscript(k.sessionId, "a1");
    await new RemoteSession(srv.client, { workspace: "default", sessionId: oldId }).append(
      (log) => planLines(log, lines).entries,
    );
    return { oldId, lines, mainLines };
  }

  test("a subpath session stored under its old id loads and is listed by listSubkeys", async () => {
    const k = main();
    const { lines } = await writeOldSubpath(k);
    expect(await store.load(sub(k))).toEqual(lines);
    expect(await store.listSubkeys(k)).toEqual([SUBPATH]);
  });

  test("a subpath session stored under its old id is appended to where it is, by a store that has not read it", async () => {
    const k = main();
    const { oldId, lines } = await writeOldSubpath(k);
    const more = subagentTranscript(k.sessionId, "a1");
    const fresh = new SessiondSessionStore({
      client: createSessiondClient({ baseUrl: srv.server.url }),
    });
    await fresh.append(sub(k), more);
    expect(await children(k)).toEqual([oldId]);
    expect(await store.load(sub(k))).toEqual([...lines, ...more]);
  });

  test("a subpath session stored under its old id is appended to where it is after a load", async () => {
    const k = main();
    const { oldId, lines } = await writeOldSubpath(k);
    expect(await store.load(sub(k))).toEqual(lines);
    const more = subagentTranscript(k.sessionId, "a1");
    await store.append(sub(k), more);
    expect(await children(k)).toEqual([oldId]);
    expect(await store.load(sub(k))).toEqual([...lines, ...more]);
  });

  test("delete of a subpath stored under its old id removes it, and the main session stays", async () => {
    const k = main();
    const { mainLines } = await writeOldSubpath(k);
    await store.delete(sub(k));
    expect(await children(k)).toEqual([]);
    expect(await store.load(sub(k))).toBeNull();
    expect(await store.load(k)).toEqual(mainLines);
    expect(await store.listSubkeys(k)).toEqual([]);
  });
});
