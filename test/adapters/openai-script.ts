import {
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  tool,
  Usage,
} from "@openai/agents-core";
import { afterEach } from "vitest";
import { z } from "zod";
import { type AdapterServer, dataDir, serveDir } from "./support.js";

/**
 * What the OpenAI Agents adapter's tests drive the SDK's Runner with: a
 * model answering from a script (no network), and items to script it with.
 */

/** The SDK's Model interface, answering from a script and recording what it was sent. */
export class ScriptedModel implements Model {
  readonly inputs: unknown[] = [];
  constructor(private readonly steps: AgentOutputItem[][]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(structuredClone(request.input));
    const output = this.steps.shift();
    if (output === undefined) throw new Error("the script has no more model responses");
    return { usage: new Usage(), output };
  }
  getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

/** A call of the `add` tool. */
export const call = (callId: string, a: number, b: number, extra = {}): AgentOutputItem => ({
  type: "function_call",
  callId,
  name: "add",
  arguments: JSON.stringify({ a, b }),
  status: "completed",
  ...extra,
});

/** An assistant message. */
export const say = (text: string, extra = {}): AgentOutputItem => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
  ...extra,
});

/** A tool adding two numbers. */
export const add = tool({
  name: "add",
  description: "adds two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
});

/** Servers on JSONL data directories, each closed and removed after its test. */
export function serversPerTest(): {
  /** A fresh data directory. */
  dir(): Promise<string>;
  /** A server on `dir` (a second one on the same directory is a restart). */
  serve(dir: string): Promise<AdapterServer>;
} {
  const servers: AdapterServer[] = [];
  const removals: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const remove of removals.splice(0)) await remove();
  });
  return {
    async dir() {
      const { dir, remove } = await dataDir();
      removals.push(remove);
      return dir;
    },
    async serve(dir) {
      const s = await serveDir(dir);
      servers.push(s);
      return s;
    },
  };
}
