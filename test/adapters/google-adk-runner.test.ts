/**
 * SessiondSessionService (sessiond/google-adk) under ADK's own Runner with
 * a scripted model and a tool that writes session, user:, app: and temp:
 * state: the same turns on InMemorySessionService and on sessiond (over a
 * server on JSONL, the last turn by a new service and client, as after an
 * agent restart) give equal sessions (events, state), equal listings and
 * equal GetSessionConfig slices; temp: state is never stored; app: and
 * user: state are shared with the user's other sessions. Two writers of
 * one session: the stale one gets StaleSessionError and writes nothing;
 * its control (compareAndSwap: false) interleaves the events.
 */
import {
  BaseLlm,
  type BaseLlmConnection,
  type BaseSessionService,
  createEvent,
  FunctionTool,
  InMemorySessionService,
  LlmAgent,
  type LlmRequest,
  type LlmResponse,
  Runner,
  type Session,
} from "@google/adk";
import { expect, test } from "vitest";
import { z } from "zod";
import { SessiondSessionService, StaleSessionError } from "../../src/adapters/google-adk/index.js";
import { createSessiondClient } from "../../src/client/index.js";
import { serverPerTest } from "./support.js";

const APP = "calc";

/** The model: a call of `add` for a question, the sum once the tool answered. */
class ScriptedLlm extends BaseLlm {
  constructor() {
    super({ model: "scripted" });
  }
  async *generateContentAsync(req: LlmRequest): AsyncGenerator<LlmResponse, void> {
    const last = req.contents[req.contents.length - 1];
    const answered = last?.parts?.find((p) => p.functionResponse)?.functionResponse;
    if (answered) {
      const sum = (answered.response as { result: number }).result;
      yield { content: { role: "model", parts: [{ text: `The sum is ${sum}.` }] } };
      return;
    }
    const [a, b] = (last?.parts?.[0]?.text ?? "").match(/-?\d+/g)?.map(Number) ?? [0, 0];
    yield {
      content: {
        role: "model",
        parts: [
          { functionCall: { id: `call-${req.contents.length}`, name: "add", args: { a, b } } },
        ],
      },
    };
  }
  connect(): Promise<BaseLlmConnection> {
    throw new Error("no live connection in tests");
  }
}

const add = new FunctionTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }, ctx) => {
    const state = ctx?.state;
    state?.set("last_sum", a + b);
    state?.set("user:calls", Number(state.get("user:calls") ?? 0) + 1);
    state?.set("app:total", Number(state.get("app:total") ?? 0) + a + b);
    state?.set("temp:scratch", "never stored");
    return { result: a + b };
  },
});

function runner(sessionService: BaseSessionService): Runner {
  const agent = new LlmAgent({ name: "calculator", model: new ScriptedLlm(), tools: [add] });
  return new Runner({ appName: APP, agent, sessionService });
}

async function turn(service: BaseSessionService, sessionId: string, text: string): Promise<void> {
  for await (const _ of runner(service).runAsync({
    userId: "ana",
    sessionId,
    newMessage: { role: "user", parts: [{ text }] },
  })) {
    // the events are what the session service stored
  }
}

/** A session as the tests compare it: events without their random ids and clock. */
function comparable(s: Session | undefined) {
  if (s === undefined) return undefined;
  return {
    id: s.id,
    appName: s.appName,
    userId: s.userId,
    state: s.state,
    events: s.events.map(({ id: _id, invocationId: _inv, timestamp: _ts, ...rest }) =>
      JSON.parse(JSON.stringify(rest)),
    ),
  };
}

const srv = serverPerTest();

/** The turns of the test on `service`; `restarted` is the service of the last turn. */
async function scenario(service: BaseSessionService, restarted: BaseSessionService) {
  await service.createSession({
    appName: APP,
    userId: "ana",
    sessionId: "s1",
    state: { mood: "ok" },
  });
  await turn(service, "s1", "add 2 and 3");
  await turn(service, "s1", "add 10 and 20");
  await turn(restarted, "s1", "add 1 and 1");
  await restarted.createSession({ appName: APP, userId: "ana", sessionId: "s2" });
  const key = { appName: APP, userId: "ana", sessionId: "s1" };
  return {
    s1: comparable(await restarted.getSession(key)),
    s2: comparable(await restarted.getSession({ ...key, sessionId: "s2" })),
    recent: comparable(await restarted.getSession({ ...key, config: { numRecentEvents: 3 } })),
    list: (await restarted.listSessions({ appName: APP, userId: "ana" })).sessions.map((s) => s.id),
    paged: (await restarted.listSessions({ appName: APP, limit: 1, page: 2 })).totalPages,
    missing: await restarted.getSession({ ...key, sessionId: "nope" }),
  };
}

test("under ADK's Runner, sessiond across a restart equals InMemorySessionService", async () => {
  const memory = new InMemorySessionService();
  const theirs = await scenario(memory, memory);
  const ours = await scenario(
    new SessiondSessionService({ client: srv().client }),
    new SessiondSessionService({ client: createSessiondClient({ baseUrl: srv().server.url }) }),
  );
  expect(ours).toEqual(theirs);
  // What the comparison covers.
  expect(theirs.s1?.events.length).toBe(12);
  expect(theirs.s1?.state).toMatchObject({
    mood: "ok",
    last_sum: 2,
    "user:calls": 3,
    "app:total": 37,
  });
  expect(theirs.s2?.state).toEqual({ "user:calls": 3, "app:total": 37 });
  expect(theirs.recent?.events.length).toBe(3);
});

test("temp: state is never stored", async () => {
  const service = new SessiondSessionService({ client: srv().client });
  await service.createSession({ appName: APP, userId: "ana", sessionId: "s1" });
  await turn(service, "s1", "add 2 and 3");
  const page = await srv().client.session.getEntries({ session: "s1" });
  const stored = JSON.stringify(
    page.entries.map((e) => e.kind),
    (_k, v) => (typeof v === "bigint" ? String(v) : v),
  );
  expect(stored).toContain("last_sum");
  expect(stored).not.toContain("temp:");
  expect(stored).not.toContain("never stored");
});

/** Two services read one session; each appends an event to its copy, the first one first. */
async function twoWriters(compareAndSwap: boolean) {
  const a = new SessiondSessionService({ client: srv().client });
  const b = new SessiondSessionService({ client: srv().client, compareAndSwap });
  await a.createSession({ appName: APP, userId: "ana", sessionId: "s1" });
  const key = { appName: APP, userId: "ana", sessionId: "s1" };
  const copyA = (await a.getSession(key)) as Session;
  const copyB = (await b.getSession(key)) as Session;
  const event = (author: string, text: string) =>
    createEvent({ invocationId: author, author, content: { role: "user", parts: [{ text }] } });
  await a.appendEvent({ session: copyA, event: event("a", "from a") });
  const outcome = await b.appendEvent({ session: copyB, event: event("b", "from b") }).then(
    () => "ok",
    (err: unknown) => err,
  );
  const stored = (await a.getSession(key))?.events.map((e) => e.author);
  return { outcome, stored };
}

test("a writer holding a stale copy gets StaleSessionError and writes nothing", async () => {
  const { outcome, stored } = await twoWriters(true);
  expect(outcome).toBeInstanceOf(StaleSessionError);
  expect(stored).toEqual(["a"]);
});

test("control: without expected_seq the stale writer's event interleaves", async () => {
  const { outcome, stored } = await twoWriters(false);
  expect(outcome).toBe("ok");
  expect(stored).toEqual(["a", "b"]);
});
