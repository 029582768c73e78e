/**
 * Text with a lone UTF-16 surrogate (a JS string may hold one, UTF-8 cannot)
 * through a real server and a restart of it: SessiondSession's items come
 * back exactly, not with U+FFFD in the surrogate's place, while other
 * clients read the typed entries with U+FFFD there.
 */

import type { AgentInputItem } from "@openai/agents-core";
import { describe, expect, test } from "vitest";
import { SessiondSession } from "../../src/adapters/openai-agents/index.js";
import { textOf } from "../../src/client/index.js";
import { serversPerTest } from "./openai-script.js";

const HIGH = "\uD800";
const LOW = "\uDC00";

/** Items whose texts hold lone high and low surrogates, one kind of text each. */
const items: AgentInputItem[] = [
  { type: "message", role: "user", content: `a${HIGH}b` },
  {
    type: "message",
    role: "user",
    content: [
      { type: "input_text", text: `${LOW}first` },
      { type: "input_text", text: `last${HIGH}` },
    ],
  },
  {
    type: "function_call",
    callId: "call_1",
    name: "lookup",
    // JSON text: JSON.stringify escapes the surrogate, JSON.parse brings it back.
    arguments: JSON.stringify({ q: `x${HIGH}y`, [`k${LOW}`]: 1 }),
    status: "completed",
  },
  {
    type: "function_call_result",
    callId: "call_1",
    name: "lookup",
    status: "completed",
    output: { type: "text", text: `found ${LOW} here` },
  },
  {
    type: "function_call",
    callId: "call_2",
    name: "raw",
    arguments: `not json ${HIGH}`,
    status: "completed",
  },
  { type: "function_call_result", callId: "call_2", name: "raw", status: "completed", output: LOW },
  {
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: `done ${HIGH}${LOW} (a pair: ${HIGH}\uDC01)` }],
  },
  { type: "reasoning", content: [{ type: "input_text", text: `think${LOW}` }] },
  {
    type: "hosted_tool_call",
    name: `web${HIGH}`,
    status: "completed",
    providerData: { [`q${LOW}`]: [`r${HIGH}`] },
  },
];

const servers = serversPerTest();

describe("lone surrogates through a sessiond server", () => {
  test("items with lone surrogates in user, assistant, tool output and argument text come back exactly, not as U+FFFD", async () => {
    const dir = await servers.dir();
    const first = await servers.serve(dir);
    const writer = new SessiondSession({ client: first.client });
    await writer.addItems(items);
    const sessionId = await writer.getSessionId();
    await first.close();
    const second = await servers.serve(dir);
    const reader = new SessiondSession({ client: second.client, sessionId });
    expect(await reader.getItems()).toEqual(items);
  });

  test("other clients read the typed text with U+FFFD in the lone surrogate's place", async () => {
    const srv = await servers.serve(await servers.dir());
    const session = new SessiondSession({ client: srv.client });
    await session.addItems(items.slice(0, 1));
    const state = await srv.client.session.getState({ session: await session.getSessionId() });
    expect(state.state?.messages.map((m) => textOf(m))).toEqual(["a\uFFFDb"]);
  });
});
