/**
 * A LangGraph graph with a scripted model, a tool and a human review
 * (langgraph-graph.ts) on SessiondSaver over a server on JSONL: it runs
 * until the review interrupts, a new process resumes it, then the thread
 * time-travels to a past checkpoint and forks with another question, and
 * the fork runs and is resumed too. Every answer, the final states and
 * the whole history (sources, steps, parents, interrupts, messages) equal
 * the same run on LangGraph's MemorySaver. In sessiond the fork is a
 * branch of the thread's session.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { HumanMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, Command, MemorySaver } from "@langchain/langgraph";
import { expect, test } from "vitest";
import {
  CHECKPOINT_NAMESPACE,
  SessiondSaver,
  threadSessionId,
} from "../../src/adapters/langgraph/index.js";
import { buildGraph, historyOf, messagesOf } from "./langgraph-graph.js";
import { serverPerTest } from "./support.js";

const run = promisify(execFile);
const REPO = join(import.meta.dirname, "../..");
const THREAD = "thread-review-1";

const srv = serverPerTest();

/** The scenario on `saver`; `resume` answers the first review (in another process for sessiond). */
async function scenario(saver: BaseCheckpointSaver, resume: (answer: string) => Promise<unknown>) {
  const graph = buildGraph(saver);
  const config = { configurable: { thread_id: THREAD } };
  const first = await graph.invoke(
    { messages: [new HumanMessage({ id: "h1", content: "add 2 and 3" })] },
    config,
  );
  const interrupted = await graph.getState(config);
  const resumed = await resume("approved");
  const done = await graph.getState(config);
  const history = [];
  for await (const s of graph.getStateHistory(config)) history.push(s);
  // Time travel: back to the checkpoint where the model was about to answer the question...
  const past = history.find((s) => s.next.includes("model") && s.metadata?.step === 0);
  if (past === undefined) throw new Error("no checkpoint before the model in the history");
  // ...and fork it with another question.
  const forkConfig = await graph.updateState(past.config, {
    messages: [new HumanMessage({ id: "h1", content: "add 10 and 20" })],
  });
  const forked = await graph.invoke(null, forkConfig);
  const forkResumed = await graph.invoke(new Command({ resume: "approved again" }), config);
  const all = [];
  for await (const s of graph.getStateHistory(config)) all.push(s);
  return {
    first: messagesOf(first),
    interrupts: interrupted.tasks.flatMap((t) => t.interrupts.map((i) => i.value)),
    next: interrupted.next,
    resumed,
    done: messagesOf(done.values),
    forked: messagesOf(forked),
    forkResumed: messagesOf(forkResumed),
    history: historyOf(all),
  };
}

test("interrupt, resume in a new process, time travel and fork: equal to MemorySaver, the fork a branch", async () => {
  const workspace = "lg-graph";
  const saver = new SessiondSaver({ client: srv().client, workspace });
  const ours = await scenario(saver, async (answer) => {
    const args = { url: srv().server.url, workspace, threadId: THREAD, resume: answer };
    const { stdout } = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        join(REPO, "test/adapters/langgraph-graph-child.ts"),
        JSON.stringify(args),
      ],
      { cwd: REPO, timeout: 60_000 },
    );
    return JSON.parse(stdout);
  });
  const memory = new MemorySaver();
  const theirs = await scenario(memory, async (answer) =>
    messagesOf(
      await buildGraph(memory).invoke(new Command({ resume: answer }), {
        configurable: { thread_id: THREAD },
      }),
    ),
  );
  expect(ours).toEqual(theirs);
  // What was run is what the test means to compare.
  expect(theirs.next).toEqual(["review"]);
  expect(theirs.interrupts).toEqual([{ question: "Send this answer?", draft: "The sum is 5." }]);
  expect((theirs.resumed as unknown[]).at(-1)).toMatchObject({
    type: "human",
    content: "review: approved",
  });
  expect(theirs.forkResumed.map((m) => (m as { content: unknown }).content)).toContain(
    "The sum is 30.",
  );
  expect(theirs.history.some((h) => (h as { source: string }).source === "update")).toBe(true);

  // In the session, the fork is a second child of the past checkpoint's entry.
  const page = await srv().client.session.getEntries({
    workspace,
    session: threadSessionId(THREAD),
  });
  const checkpoints = page.entries.filter(
    (e) => e.kind.case === "custom" && e.kind.value.namespace === CHECKPOINT_NAMESPACE,
  );
  const children = new Map<string, number>();
  for (const e of checkpoints)
    children.set(e.parentId ?? "", (children.get(e.parentId ?? "") ?? 0) + 1);
  expect(checkpoints.length).toBe(theirs.history.length);
  expect([...children.values()].filter((n) => n > 1).length).toBe(1);
});
