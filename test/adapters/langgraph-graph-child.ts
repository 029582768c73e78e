/**
 * The resuming half of langgraph-graph.test.ts, in a process of its own
 * (a new process resuming an interrupted thread). Args (JSON): {url,
 * workspace, threadId, resume}. Resumes the thread with the human's
 * answer and prints the messages of the final state.
 */
import { Command } from "@langchain/langgraph";
import { SessiondSaver } from "../../src/adapters/langgraph/index.js";
import { createSessiondClient } from "../../src/client/index.js";
import { buildGraph, messagesOf } from "./langgraph-graph.js";

const a = JSON.parse(process.argv[2] ?? "{}") as {
  url: string;
  workspace: string;
  threadId: string;
  resume: string;
};
const saver = new SessiondSaver({
  client: createSessiondClient({ baseUrl: a.url }),
  workspace: a.workspace,
});
const graph = buildGraph(saver);
const out = await graph.invoke(new Command({ resume: a.resume }), {
  configurable: { thread_id: a.threadId },
});
process.stdout.write(`${JSON.stringify(messagesOf(out))}\n`);
process.exit(0);
