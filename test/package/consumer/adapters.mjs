// The agent-SDK adapters of the INSTALLED package, with no SDK installed
// (they are optional peers): sessiond/openai-agents and
// sessiond/claude-agent-sdk import only their SDKs' types, so they load
// from ESM and CommonJS and keep items / transcript lines on the server at
// SESSIOND_URL; sessiond/langgraph and sessiond/google-adk extend their
// SDKs' base classes, so they refuse to load naming the missing SDK.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { SessiondSessionStore } from "sessiond/claude-agent-sdk";
import { createSessiondClient } from "sessiond/client";
import { SessiondSession } from "sessiond/openai-agents";

const require = createRequire(import.meta.url);
for (const subpath of ["sessiond/openai-agents", "sessiond/claude-agent-sdk"]) {
  assert.match(require.resolve(subpath), /[/\\]dist[/\\]cjs[/\\]/, subpath);
  assert.equal(
    typeof Object.values(require(subpath)).find((v) => typeof v === "function"),
    "function",
  );
}
for (const peer of ["@openai/agents-core", "@anthropic-ai/claude-agent-sdk"]) {
  assert.throws(() => require.resolve(peer), /Cannot find module/, `${peer} is installed`);
}

for (const [subpath, peer] of [
  ["sessiond/langgraph", "@langchain/langgraph-checkpoint"],
  ["sessiond/google-adk", "@google/adk"],
]) {
  assert.throws(() => require.resolve(peer), /Cannot find module/, `${peer} is installed`);
  await assert.rejects(import(subpath), (err) => String(err).includes(peer), subpath);
  assert.throws(
    () => require(subpath),
    (err) => String(err).includes(peer),
    subpath,
  );
}

const client = createSessiondClient({ baseUrl: process.env.SESSIOND_URL });
const session = new SessiondSession({ client, title: "package test" });
const items = [
  { type: "message", role: "user", content: "What is 1+2?" },
  {
    type: "function_call",
    callId: "c1",
    name: "add",
    arguments: '{"a":1,"b":2}',
    status: "completed",
  },
];
await session.addItems(items);
assert.deepEqual(await session.getItems(), items);
assert.deepEqual(await session.popItem(), items[1]);

const store = new SessiondSessionStore({ client });
const key = { projectKey: "-package-test", sessionId: "5f0c2b9e-0000-4000-8000-000000000001" };
const lines = [
  {
    type: "user",
    uuid: "5f0c2b9e-0000-4000-8000-00000000000a",
    message: { role: "user", content: "hi" },
  },
];
await store.append(key, lines);
assert.deepEqual(await store.load(key), lines);
assert.deepEqual(await store.listSessions(key.projectKey).then((l) => l.map((s) => s.sessionId)), [
  key.sessionId,
]);
console.log(
  "adapters (ESM + CommonJS, no SDK installed): ok; sessiond/langgraph and sessiond/google-adk name their missing SDK",
);
