/**
 * The SDK's history rewrites on SessiondSession: a compaction
 * (replaceHistoryWithCompaction, which the Runner calls when a model
 * response holds a `compaction` item) and history mutations
 * (applyHistoryMutations). The items read back are those of the SDK's own
 * MemorySession given the same calls; the replaced items stay in the tree.
 */

import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  Agent,
  type AgentInputItem,
  type AgentOutputItem,
  MemorySession,
  Runner,
  type Session,
  type SessionHistoryMutation,
} from "@openai/agents-core";
import { describe, expect, test } from "vitest";
import { type Entry, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { EntryKind, View } from "../../gen/sessiond/v1/session_pb.js";
import { SessiondSession } from "../../src/adapters/openai-agents/index.js";
import {
  createSessiondClient,
  readTree,
  type SessiondClient,
  textOf,
} from "../../src/client/index.js";
import { add, call, ScriptedModel, say, serversPerTest } from "./openai-script.js";

const servers = serversPerTest();

const user = (content: string): AgentInputItem => ({ type: "message", role: "user", content });
const compaction = (n: number): AgentInputItem => ({
  type: "compaction",
  id: `cmp_${n}`,
  encrypted_content: `summary ${n}, encrypted`,
});
const answer = (text: string) => say(text) as AgentInputItem;

/** A session on a fresh server, with a client that records the write RPCs it makes. */
async function recordedSession(): Promise<{
  session: SessiondSession;
  client: SessiondClient;
  writes: string[];
}> {
  const srv = await servers.serve(await servers.dir());
  const writes: string[] = [];
  const record: Interceptor = (next) => async (req) => {
    if (["Append", "Rewind", "Reset"].includes(req.method.name)) writes.push(req.method.name);
    return next(req);
  };
  const client = createSessiondClient({
    baseUrl: srv.server.url,
    timeoutMs: 15_000,
    interceptors: [record],
  });
  return { session: new SessiondSession({ client }), client, writes };
}

/** What a session shows after each step of a script. */
interface Observed {
  inputs: unknown[];
  popped: (AgentInputItem | undefined)[];
  items: AgentInputItem[][];
}

/**
 * Three turns, the second answered with a compaction item (the Runner
 * then replaces the history), a restart, then popItem until the session is
 * empty, then a new item.
 */
async function compactionScript(
  first: Session,
  restart: (s: Session) => Promise<Session>,
): Promise<Observed> {
  const model = new ScriptedModel([
    [call("call_1", 1, 2)],
    [say("It is 3.")],
    [compaction(1) as AgentOutputItem, say("7.")],
    [say("Hello again.")],
  ]);
  const agent = new Agent({ name: "calc", instructions: "Add.", model, tools: [add] });
  const runner = new Runner({ tracingDisabled: true });
  const observed: Observed = { inputs: model.inputs, popped: [], items: [] };
  let session = first;
  await runner.run(agent, "What is 1+2?", { session });
  await runner.run(agent, "And 2+5?", { session });
  observed.items.push(await session.getItems());
  session = await restart(session);
  await runner.run(agent, "Hello?", { session });
  observed.items.push(await session.getItems());
  for (;;) {
    const popped = await session.popItem();
    observed.popped.push(popped);
    observed.items.push(await session.getItems());
    if (popped === undefined) break;
  }
  await session.addItems([user("after")]);
  observed.items.push(await session.getItems());
  return observed;
}

describe("replaceHistoryWithCompaction", () => {
  test("a compaction the model returns leaves the session as MemorySession leaves it, across a restart and popItems past the compaction item", async () => {
    const expected = await compactionScript(new MemorySession(), async (s) => s);
    const dir = await servers.dir();
    let srv = await servers.serve(dir);
    let compactions = 0;
    const actual = await compactionScript(
      new SessiondSession({ client: srv.client }),
      async (s) => {
        const sessionId = await s.getSessionId();
        const tree = await readTree(srv.client, { session: sessionId });
        compactions = tree.nodes.filter((n) => n.kind === EntryKind.COMPACTION).length;
        await srv.close();
        srv = await servers.serve(dir);
        return new SessiondSession({ client: srv.client, sessionId });
      },
    );
    expect(actual).toEqual(expected);
    expect(compactions).toBe(1); // the Runner called replaceHistoryWithCompaction
    expect(expected.items[0]).toEqual([compaction(1), say("7.")]);
    expect(expected.popped).toHaveLength(5);
  });

  test("a compaction is one Append: a Compaction entry replaces the old items, which leave getItems and the CONTEXT view and stay in the HISTORY view and the tree", async () => {
    const { session, client, writes } = await recordedSession();
    await session.addItems([user("old question"), answer("old answer")]);
    writes.length = 0;
    await session.replaceHistoryWithCompaction([compaction(1), answer("new answer")]);
    expect(writes).toEqual(["Append"]);
    expect(await session.getItems()).toEqual([compaction(1), answer("new answer")]);
    const id = await session.getSessionId();
    const context = await client.session.getState({ session: id, view: View.CONTEXT });
    const texts = context.state?.messages.map((m) => textOf(m)) ?? [];
    expect(texts).toHaveLength(2);
    expect(texts[0]).toMatch(/^Previous conversation summary:\n.*encrypted compaction item/);
    expect(texts[1]).toBe("new answer");
    const history = await client.session.getState({ session: id, view: View.HISTORY });
    expect(history.state?.messages.map((m) => textOf(m))).toEqual([
      "old question",
      "old answer",
      "new answer",
    ]);
    const tree = await readTree(client, { session: id });
    const old = tree.nodes.filter((n) => n.preview.startsWith("old "));
    expect(old.map((n) => n.preview)).toEqual(["old question", "old answer"]);
    expect(tree.nodes.filter((n) => n.kind === EntryKind.COMPACTION)).toHaveLength(1);
  });

  test("a second compaction replaces the first one's summary too: the CONTEXT view shows one summary", async () => {
    const { session, client } = await recordedSession();
    await session.addItems([user("q1"), answer("a1")]);
    await session.replaceHistoryWithCompaction([compaction(1), answer("a2")]);
    await session.addItems([user("q3")]);
    await session.replaceHistoryWithCompaction([compaction(2), answer("a3")]);
    expect(await session.getItems()).toEqual([compaction(2), answer("a3")]);
    const context = await client.session.getState({ session: await session.getSessionId() });
    const texts = context.state?.messages.map((m) => textOf(m)) ?? [];
    expect(texts.map((t) => t.split("\n")[0])).toEqual(["Previous conversation summary:", "a3"]);
  });

  test("a compaction of an empty session is its items alone: no Compaction entry (it would replace nothing)", async () => {
    const { session, client } = await recordedSession();
    await session.addItems([user("cleared")]);
    await session.clearSession();
    await session.replaceHistoryWithCompaction([compaction(1), answer("a")]);
    expect(await session.getItems()).toEqual([compaction(1), answer("a")]);
    const tree = await readTree(client, { session: await session.getSessionId() });
    expect(tree.nodes.some((n) => n.kind === EntryKind.COMPACTION)).toBe(false);
  });

  test("a replace_suffix transaction reaching into the compaction item leaves what MemorySession leaves", async () => {
    const steps = async (session: Session & SessiondSessionLike) => {
      await session.addItems([user("q1"), answer("a1")]);
      await session.replaceHistoryWithCompaction?.([compaction(1), answer("a2")]);
      await session.applyHistoryTransaction({
        operationId: "op-1",
        transaction: {
          type: "replace_suffix",
          expectedSuffix: [compaction(1), answer("a2")],
          replacement: [answer("a3")],
        },
      });
      return session.getItems();
    };
    const expected = await steps(withCompactionFallback(new MemorySession()));
    const { session } = await recordedSession();
    expect(await steps(session)).toEqual(expected);
    expect(expected).toEqual([answer("a3")]);
  });

  test("clearSession after a compaction: no items, everything kept in the tree", async () => {
    const { session, client } = await recordedSession();
    await session.addItems([user("q1")]);
    await session.replaceHistoryWithCompaction([compaction(1), answer("a2")]);
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await session.popItem()).toBeUndefined();
    const tree = await readTree(client, { session: await session.getSessionId() });
    expect(tree.nodes.filter((n) => n.kind === EntryKind.MESSAGE).map((n) => n.preview)).toEqual([
      "q1",
      "a2",
    ]);
  });

  test("eraseSession after a compaction leaves nothing readable", async () => {
    const { session, client } = await recordedSession();
    await session.addItems([user("secret q")]);
    await session.replaceHistoryWithCompaction([compaction(1), answer("secret a")]);
    await session.eraseSession();
    expect(await session.getItems()).toEqual([]);
    const tree = await readTree(client, { session: await session.getSessionId() });
    expect(tree.nodes.map((n) => n.kind)).toEqual([EntryKind.SESSION_INFO]);
    expect((await client.store.searchEntries({ query: "secret" })).hits).toEqual([]);
  });
});

/** The optional methods the SDK calls when a session has them. */
interface SessiondSessionLike {
  replaceHistoryWithCompaction?(items: AgentInputItem[]): Promise<void>;
  applyHistoryTransaction: SessiondSession["applyHistoryTransaction"];
}

/** MemorySession with what the SDK's Runner does without replaceHistoryWithCompaction: clear, then add. */
function withCompactionFallback(memory: MemorySession): MemorySession & SessiondSessionLike {
  return Object.assign(memory, {
    async replaceHistoryWithCompaction(items: AgentInputItem[]) {
      await memory.clearSession();
      await memory.addItems(items);
    },
  });
}

const replaceCall = (callId: string, a: number, b: number): SessionHistoryMutation => ({
  type: "replace_function_call",
  callId,
  replacement: call(callId, a, b) as Extract<AgentInputItem, { type: "function_call" }>,
});

describe("applyHistoryMutations", () => {
  test("a function call replaced after a Runner turn reads back as in MemorySession, and the next turn's model input is the same", async () => {
    const run = async (session: Session & { applyHistoryMutations(a: unknown): Promise<void> }) => {
      const model = new ScriptedModel([[call("call_1", 1, 2)], [say("3.")], [say("Right.")]]);
      const agent = new Agent({ name: "calc", instructions: "Add.", model, tools: [add] });
      const runner = new Runner({ tracingDisabled: true });
      await runner.run(agent, "What is 1+2?", { session });
      await session.applyHistoryMutations({ mutations: [replaceCall("call_1", 1, 5)] });
      const items = await session.getItems();
      await runner.run(agent, "Sure?", { session });
      return { items, inputs: model.inputs, after: await session.getItems() };
    };
    const expected = await run(new MemorySession());
    const { session } = await recordedSession();
    expect(await run(session)).toEqual(expected);
    expect(expected.items[1]).toEqual(call("call_1", 1, 5));
  });

  test("calls sharing a call id collapse into the replacement, as in MemorySession; a drop of the last ones too", async () => {
    const cases: [AgentInputItem[], SessionHistoryMutation[]][] = [
      [
        [user("q"), call("c1", 1, 1), call("c1", 2, 2), toolOutput("c1", "4"), answer("4.")],
        [replaceCall("c1", 3, 3)],
      ],
      [[user("q"), call("c1", 1, 1), call("c1", 2, 2)], [replaceCall("c1", 1, 1)]],
      [
        [user("q"), call("c1", 1, 1), call("c2", 2, 2)],
        [replaceCall("c2", 5, 5), replaceCall("c1", 4, 4)],
      ],
    ];
    for (const [items, mutations] of cases) {
      const memory = new MemorySession();
      await memory.addItems(items);
      await memory.applyHistoryMutations({ mutations });
      const { session } = await recordedSession();
      await session.addItems(items);
      await session.applyHistoryMutations({ mutations });
      expect(await session.getItems()).toEqual(await memory.getItems());
    }
  });

  test("the replaced call and what followed it stay in the tree, off the current path, in one Append", async () => {
    const { session, client, writes } = await recordedSession();
    await session.addItems([user("q"), call("c1", 1, 2), toolOutput("c1", "3"), answer("3.")]);
    writes.length = 0;
    await session.applyHistoryMutations({ mutations: [replaceCall("c1", 1, 5)] });
    expect(writes).toEqual(["Append"]);
    const id = await session.getSessionId();
    const tree = await readTree(client, { session: id });
    const onPath = new Map(tree.nodes.map((n) => [n.id, n.onCurrentPath]));
    const entries = (await client.session.getEntries({ session: id })).entries;
    const calls = entries.filter((e) => argumentsOf(e) !== undefined);
    expect(calls.map((e) => [argumentsOf(e), onPath.get(e.id)])).toEqual([
      [{ a: 1, b: 2 }, false],
      [{ a: 1, b: 5 }, true],
    ]);
    const results = entries.filter((e) => messageOf(e)?.role === Role.TOOL);
    expect(results.map((e) => onPath.get(e.id))).toEqual([false, true]);
    expect(onPath.get(entries.find((e) => textOfEntry(e) === "q")?.id ?? "")).toBe(true);
  });

  test("a mutation that changes nothing writes nothing", async () => {
    const { session, writes } = await recordedSession();
    await session.addItems([user("q"), call("c1", 1, 2)]);
    writes.length = 0;
    await session.applyHistoryMutations({ mutations: [replaceCall("c1", 1, 2)] });
    await session.applyHistoryMutations({ mutations: [replaceCall("absent", 1, 2)] });
    await session.applyHistoryMutations({ mutations: [] });
    expect(writes).toEqual([]);
  });

  test("a mutation of another type is refused with INVALID_ARGUMENT naming it, and nothing is written", async () => {
    const { session, writes } = await recordedSession();
    await session.addItems([user("q"), call("c1", 1, 2)]);
    writes.length = 0;
    const unknown = { type: "delete_item", callId: "c1" } as unknown as SessionHistoryMutation;
    const err = await session.applyHistoryMutations({ mutations: [unknown] }).catch((e) => e);
    expect(ConnectError.from(err).code).toBe(Code.InvalidArgument);
    expect(String(err)).toMatch(/delete_item/);
    expect(writes).toEqual([]);
    expect(await session.getItems()).toEqual([user("q"), call("c1", 1, 2)]);
  });
});

function toolOutput(callId: string, text: string): AgentInputItem {
  return {
    type: "function_call_result",
    callId,
    name: "add",
    status: "completed",
    output: { type: "text", text },
  };
}

function messageOf(e: Entry) {
  return e.kind.case === "message" ? e.kind.value : undefined;
}

function argumentsOf(e: Entry): unknown {
  const part = messageOf(e)?.content[0]?.part;
  if (part?.case !== "toolCall") return undefined;
  const v = part.value.arguments?.kind;
  return v?.case === "structValue"
    ? Object.fromEntries(
        Object.entries(v.value.fields).map(([k, x]) => [k, x.kind.value as unknown]),
      )
    : undefined;
}

function textOfEntry(e: Entry): string | undefined {
  const part = messageOf(e)?.content[0]?.part;
  return part?.case === "text" ? part.value : undefined;
}
