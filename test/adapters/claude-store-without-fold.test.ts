/**
 * SessiondSessionStore where the SDK cannot be loaded (an optional peer not
 * installed, or CommonJS on a Node that cannot require an ES module): it
 * has no `foldSessionSummary`, so it keeps no summaries, and once it writes
 * lines it removes the summary the session holds rather than leave a stale
 * one to be listed.
 */
import type { SessionKey, SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { SessiondSessionStore } from "../../src/adapters/claude-agent-sdk/index.js";
import { SessionStore } from "../../src/store/index.js";
import { ENGINE_FACTORIES, type EngineFixture } from "../support/store-model.js";
import { uuid } from "./claude-transcript.js";
import { type AdapterServer, serveStore } from "./support.js";

vi.mock("@anthropic-ai/claude-agent-sdk", () => {
  throw new Error("Cannot find module '@anthropic-ai/claude-agent-sdk'");
});

const jsonl = ENGINE_FACTORIES.find((f) => f.name === "jsonl");
let fixture: EngineFixture;
let srv: AdapterServer;
let store: SessiondSessionStore;

beforeEach(async () => {
  fixture = await (jsonl as NonNullable<typeof jsonl>).open();
  srv = await serveStore(new SessionStore(fixture.engine));
  store = new SessiondSessionStore({ client: srv.client });
});
afterEach(async () => {
  await srv.close();
  await fixture.dispose();
});

const prompt = (text: string) =>
  ({
    type: "user",
    uuid: uuid(),
    parentUuid: null,
    message: { role: "user", content: text },
  }) as SessionStoreEntry;

test("without the SDK's fold, lines are stored and loaded, and the summary the session held is removed", async () => {
  const k: SessionKey = { projectKey: "-work-proj", sessionId: crypto.randomUUID() };
  const first = prompt("first");
  await store.append(k, [first]);
  // A summary a writer with the SDK kept, as it stores it.
  await srv.client.session.append({
    session: k.sessionId,
    entries: [
      {
        kind: {
          case: "sessionInfo",
          value: { tags: { "claude.summary.0": '{"customTitle":"before"}' } },
        },
      },
    ],
  });
  expect(await store.listSessionSummaries(k.projectKey)).toEqual([
    expect.objectContaining({ sessionId: k.sessionId, data: { customTitle: "before" } }),
  ]);
  const second = prompt("second");
  await store.append(k, [second]);
  const meta = await srv.client.store.getSession({ session: k.sessionId });
  expect(Object.keys(meta.session?.tags ?? {}).sort()).toEqual([
    "claude.project",
    "claude.session",
  ]);
  expect(await store.listSessionSummaries(k.projectKey)).toEqual([]);
  expect(await store.load(k)).toEqual([first, second]);
});
