/**
 * SessiondSession driven by the Agents SDK's real Runner with a scripted
 * model (no network): the model sees, call after call, exactly what it sees
 * with the SDK's own MemorySession on the same script, across tool calls, a
 * popItem, a server restart and a clearSession; the items are typed entries.
 */

import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  Agent,
  type AgentInputItem,
  type AgentOutputItem,
  MemorySession,
  Runner,
  type Session,
} from "@openai/agents-core";
import { afterEach, describe, expect, test } from "vitest";
import { EntryKind, View } from "../../gen/sessiond/v1/session_pb.js";
import { SessiondSession } from "../../src/adapters/openai-agents/index.js";
import {
  createSessiondClient,
  readTree,
  type SessiondClient,
  type SessiondClientOptions,
  textOf,
} from "../../src/client/index.js";
import { add, call, ScriptedModel, say } from "./openai-script.js";
import { type AdapterServer, dataDir, serveDir } from "./support.js";

/** Model responses, in the order the runs below ask for them. */
function script(): AgentOutputItem[][] {
  return [
    [call("call_1", 1, 2, { id: "fc_1" })],
    [say("It is 3.", { id: "msg_1" })],
    [call("call_2", 2, 5, { providerData: { trace: [1, { deep: true }] } })],
    [say("7.")],
    [
      { type: "reasoning", content: [{ type: "input_text", text: "two sums at once" }] },
      call("call_3", 10, 1),
      call("call_4", 20, 2, { arguments: '{ "a": 20, "b": 2 }' }),
    ],
    [say("11 and 22.")],
    [say("Hello again.")],
  ];
}

/** What a script run observes: every model input, each popped item, the final items. */
interface Observed {
  inputs: unknown[];
  popped: (AgentInputItem | undefined)[];
  items: AgentInputItem[];
}

/**
 * The script: two turns with tool calls, a popItem, a restart (`restart`
 * gives the session to use from then on), a turn with two parallel calls
 * and reasoning, a clearSession and a last turn.
 */
async function runScript(
  first: Session,
  restart: (s: Session) => Promise<Session>,
): Promise<Observed> {
  const model = new ScriptedModel(script());
  const agent = new Agent({ name: "calc", instructions: "Add.", model, tools: [add] });
  const runner = new Runner({ tracingDisabled: true });
  const popped: (AgentInputItem | undefined)[] = [];
  let session = first;
  await runner.run(agent, "What is 1+2?", { session });
  await runner.run(agent, "And 2+5?", { session });
  popped.push(await session.popItem());
  session = await restart(session);
  await runner.run(agent, "Now 10+1 and 20+2.", { session });
  await session.clearSession();
  popped.push(await session.popItem());
  await runner.run(agent, "Hello?", { session });
  return { inputs: model.inputs, popped, items: await session.getItems() };
}

let servers: AdapterServer[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const c of cleanups.splice(0)) await c();
});

function client(baseUrl: string, extra: Partial<SessiondClientOptions> = {}): SessiondClient {
  return createSessiondClient({ baseUrl, timeoutMs: 15_000, ...extra });
}

async function newServer(dir: string): Promise<AdapterServer> {
  const s = await serveDir(dir);
  servers.push(s);
  return s;
}

describe("SessiondSession under the SDK's Runner", () => {
  test("the model sees what it sees with MemorySession, across a popItem, a restart and a clearSession", async () => {
    const expected = await runScript(new MemorySession(), async (s) => s);
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    let srv = await newServer(dir);
    const actual = await runScript(new SessiondSession({ client: srv.client }), async (s) => {
      const sessionId = await s.getSessionId();
      await srv.close();
      servers = servers.filter((x) => x !== srv);
      srv = await newServer(dir);
      return new SessiondSession({ client: srv.client, sessionId });
    });
    expect(actual.inputs).toEqual(expected.inputs);
    expect(actual.popped).toEqual(expected.popped);
    expect(actual.items).toEqual(expected.items);
    expect(expected.inputs).toHaveLength(7);
  });

  test("a turn whose output a guardrail blocks is kept as MemorySession keeps it (a history transaction)", async () => {
    const blocked = async (session: Session) => {
      const model = new ScriptedModel([[call("call_1", 1, 2)], [say("SECRET 3.")]]);
      const agent = new Agent({
        name: "calc",
        instructions: "Add.",
        model,
        tools: [add],
        outputGuardrails: [
          {
            name: "no-secrets",
            execute: async ({ agentOutput }) => ({
              tripwireTriggered: String(agentOutput).includes("SECRET"),
              outputInfo: {},
            }),
          },
        ],
      });
      const runner = new Runner({ tracingDisabled: true });
      await expect(runner.run(agent, "What is 1+2?", { session })).rejects.toThrow(/guardrail/i);
      return session.getItems();
    };
    const expected = await blocked(new MemorySession());
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    expect(await blocked(new SessiondSession({ client: srv.client }))).toEqual(expected);
    expect(expected.map((i) => i.type)).toEqual([
      "message",
      "function_call",
      "function_call_result",
    ]);
  });

  test("a history transaction applies once: a retry is a no-op, its id with another transaction is refused", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const session = new SessiondSession({ client: srv.client });
    const hi: AgentInputItem = { type: "message", role: "user", content: "hi" };
    const transaction = { type: "append_items" as const, items: [hi] };
    await session.applyHistoryTransaction({ operationId: "op-1", transaction });
    await session.applyHistoryTransaction({ operationId: "op-1", transaction });
    expect(await session.getItems()).toEqual([hi]);
    const other = { type: "append_items" as const, items: [hi, hi] };
    await expect(
      session.applyHistoryTransaction({ operationId: "op-1", transaction: other }),
    ).rejects.toThrow(/already applied/);
    expect(await session.getItems()).toEqual([hi]);
  });

  test("replace_suffix swaps the session's last items in one write; the replaced ones stay in the tree", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const session = new SessiondSession({ client: srv.client });
    const user = (content: string): AgentInputItem => ({ type: "message", role: "user", content });
    await session.addItems([user("keep"), user("old 1"), user("old 2")]);
    const replace = (expectedSuffix: AgentInputItem[]) =>
      session.applyHistoryTransaction({
        operationId: `replace-${expectedSuffix.length}`,
        transaction: { type: "replace_suffix", expectedSuffix, replacement: [user("new")] },
      });
    await expect(replace([user("old 2")].concat(user("x")))).rejects.toThrow(/no longer ends/);
    await replace([user("old 1"), user("old 2")]);
    expect(await session.getItems()).toEqual([user("keep"), user("new")]);
    const tree = await readTree(srv.client, { session: await session.getSessionId() });
    const previews = tree.nodes
      .filter((n) => n.kind === EntryKind.MESSAGE)
      .map((n) => [n.preview, n.onCurrentPath]);
    expect(previews).toEqual([
      ["keep", true],
      ["old 1", false],
      ["old 2", false],
      ["new", true],
    ]);
  });

  test("items are typed entries: user, assistant, tool call and tool result messages", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const session = new SessiondSession({ client: srv.client, title: "calc" });
    const model = new ScriptedModel(script().slice(0, 2));
    const agent = new Agent({ name: "calc", instructions: "Add.", model, tools: [add] });
    await new Runner({ tracingDisabled: true }).run(agent, "What is 1+2?", { session });
    const state = await srv.client.session.getState({ session: await session.getSessionId() });
    const messages = (state.state?.messages ?? []).map((m) => m.message);
    expect(messages.map((m) => m?.role)).toEqual([1, 2, 3, 2]);
    const toolCall = messages[1]?.content[0]?.part;
    expect(toolCall?.case).toBe("toolCall");
    expect(toolCall?.case === "toolCall" && toolCall.value.name).toBe("add");
    expect(messages[2]?.toolCallId).toBe("call_1");
    expect(messages[2]?.content[0]?.part).toEqual({ case: "text", value: "3" });
    expect(messages[3]?.content[0]?.part).toEqual({ case: "text", value: "It is 3." });
  });

  test("popItem rewinds: the popped item stays in the tree, off the current path", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const session = new SessiondSession({ client: srv.client });
    await session.addItems([
      { type: "message", role: "user", content: "one" },
      { type: "message", role: "user", content: "two" },
    ]);
    expect(await session.popItem()).toEqual({ type: "message", role: "user", content: "two" });
    expect(await session.getItems()).toEqual([{ type: "message", role: "user", content: "one" }]);
    const tree = await readTree(srv.client, { session: await session.getSessionId() });
    const messages = tree.nodes.filter((n) => n.kind === EntryKind.MESSAGE);
    expect(messages.map((n) => [n.preview, n.onCurrentPath])).toEqual([
      ["one", true],
      ["two", false],
    ]);
    const history = await srv.client.session.getState({
      session: await session.getSessionId(),
      view: View.HISTORY,
      atEntryId: messages[1]?.id,
    });
    expect(history.state?.messages.map((m) => textOf(m))).toEqual(["one", "two"]);
  });

  test("clearSession resets the leaf to the root and keeps the history", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const session = new SessiondSession({ client: srv.client });
    await session.addItems([{ type: "message", role: "user", content: "kept in history" }]);
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await session.popItem()).toBeUndefined();
    const history = await srv.client.session.getState({
      session: await session.getSessionId(),
      view: View.HISTORY,
    });
    expect(history.state?.messages).toHaveLength(0);
    const tree = await readTree(srv.client, { session: await session.getSessionId() });
    expect(tree.nodes.some((n) => n.preview === "kept in history")).toBe(true);
  });

  test("eraseSession leaves no item readable: the session id stays, with its title and tags, and takes new items", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const session = new SessiondSession({ client: srv.client, title: "t", tags: { user: "ana" } });
    await session.addItems([{ type: "message", role: "user", content: "my secret" }]);
    const id = await session.getSessionId();
    await session.eraseSession();
    expect(await session.getItems()).toEqual([]);
    const tree = await readTree(srv.client, { session: id });
    expect(tree.nodes.some((n) => n.preview.includes("secret"))).toBe(false);
    const hits = await srv.client.store.searchEntries({ query: "secret" });
    expect(hits.hits).toEqual([]);
    const meta = (await srv.client.store.getSession({ session: id })).session;
    expect([meta?.title, meta?.tags]).toEqual(["t", { user: "ana" }]);
    await session.addItems([{ type: "message", role: "user", content: "after" }]);
    expect(await session.getItems()).toEqual([{ type: "message", role: "user", content: "after" }]);
  });

  test("items with no message type and fields beyond the projection come back deep-equal", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const session = new SessiondSession({ client: srv.client });
    const items: AgentInputItem[] = [
      { role: "system", content: "be terse" },
      {
        role: "user",
        content: [
          { type: "input_text", text: "look" },
          { type: "input_image", image: "https://x/y.png" },
        ],
      },
      {
        type: "hosted_tool_call",
        name: "web_search",
        status: "completed",
        id: "ws_1",
        providerData: { q: "x" },
      },
      {
        type: "function_call_result",
        callId: "orphan",
        name: "add",
        status: "completed",
        output: "3",
      },
      { type: "reasoning", content: [], rawContent: [{ type: "reasoning_text", text: "hm" }] },
      {
        type: "message",
        role: "assistant",
        status: "incomplete",
        content: [{ type: "refusal", refusal: "no" }],
      },
      {
        type: "function_call",
        callId: "c9",
        name: "add",
        arguments: "not json",
        status: "in_progress",
      },
    ];
    await session.addItems(items);
    expect(await session.getItems()).toEqual(items);
    expect(await session.getItems(2)).toEqual(items.slice(-2));
  });

  test("two runners adding to one session concurrently lose none of each other's items", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const runners = ["a", "b"].map((who) => ({
      who,
      session: new SessiondSession({ client: client(srv.server.url), sessionId: "shared" }),
    }));
    const said = (who: string, i: number): AgentInputItem => ({
      type: "message",
      role: "user",
      content: `${who}${i}`,
    });
    await Promise.all(
      runners.map(async ({ who, session }) => {
        for (let i = 0; i < 10; i++) await session.addItems([said(who, i), said(who, i + 100)]);
      }),
    );
    const texts = (await runners[0]?.session.getItems())?.map(
      (i) => (i as { content: string }).content,
    );
    expect(texts).toHaveLength(40);
    for (const who of ["a", "b"]) {
      const mine = texts?.filter((t) => t.startsWith(who));
      const expected = Array.from({ length: 10 }, (_, i) => [`${who}${i}`, `${who}${i + 100}`]);
      expect(mine).toEqual(expected.flat());
    }
  });

  test("two Runners on one session, running at once, keep both conversations whole", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const runOne = async (who: string, a: number, b: number) => {
      const model = new ScriptedModel([[call(`call_${who}`, a, b)], [say(`${who}: ${a + b}`)]]);
      const agent = new Agent({ name: who, instructions: "Add.", model, tools: [add] });
      const session = new SessiondSession({
        client: client(srv.server.url),
        sessionId: "two-runners",
      });
      await new Runner({ tracingDisabled: true }).run(agent, `${who}: ${a}+${b}?`, { session });
      const alone = new MemorySession();
      const replay = new ScriptedModel([[call(`call_${who}`, a, b)], [say(`${who}: ${a + b}`)]]);
      const soloAgent = new Agent({ name: who, instructions: "Add.", model: replay, tools: [add] });
      await new Runner({ tracingDisabled: true }).run(soloAgent, `${who}: ${a}+${b}?`, {
        session: alone,
      });
      return alone.getItems();
    };
    const [first, second] = await Promise.all([runOne("x", 1, 2), runOne("y", 3, 4)]);
    const stored = await new SessiondSession({
      client: srv.client,
      sessionId: "two-runners",
    }).getItems();
    expect([
      [...(first ?? []), ...(second ?? [])],
      [...(second ?? []), ...(first ?? [])],
    ]).toContainEqual(stored);
    expect(stored).toHaveLength(8);
  });

  test("a write planned before another runner's is refused, re-planned on top of it and kept", async () => {
    const { dir, remove } = await dataDir();
    cleanups.push(remove);
    const srv = await newServer(dir);
    const b = new SessiondSession({ client: client(srv.server.url), sessionId: "raced" });
    await b.addItems([{ type: "message", role: "user", content: "first" }]);
    const codes: string[] = [];
    let cutIn = true;
    // Runner b appends between a's read of the session and a's Append.
    const race: Interceptor = (next) => async (req) => {
      if (req.method.name === "Append" && cutIn) {
        cutIn = false;
        await b.addItems([{ type: "message", role: "user", content: "b cut in" }]);
      }
      try {
        return await next(req);
      } catch (err) {
        codes.push(Code[ConnectError.from(err).code]);
        throw err;
      }
    };
    const a = new SessiondSession({
      client: client(srv.server.url, { interceptors: [race] }),
      sessionId: "raced",
    });
    await a.addItems([{ type: "message", role: "user", content: "a" }]);
    expect(codes).toEqual(["Aborted"]);
    const texts = (await a.getItems()).map((i) => (i as { content: string }).content);
    expect(texts).toEqual(["first", "b cut in", "a"]);
  });
});
