/**
 * Two writers of one LangGraph thread (two savers, as two processes)
 * resume the interrupted thread at the same time: the second has read the
 * thread and is inside its review node when the first runs to the end.
 * The second then gets CheckpointConflictError and writes nothing more,
 * so the thread holds the first writer's history alone; with the check off
 * (the control) both "succeed" and the thread silently forks.
 */
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { expect, test } from "vitest";
import { CheckpointConflictError, SessiondSaver } from "../../src/adapters/langgraph/index.js";
import { buildGraph, messagesOf } from "./langgraph-graph.js";
import { serverPerTest } from "./support.js";

const config = { configurable: { thread_id: "thread-two-writers" } };

const srv = serverPerTest();

/** Runs the two writers (the check on or off in the second one). */
async function twoWriters(compareAndSwap: boolean) {
  let inReview: () => void = () => {};
  const reviewing = new Promise<void>((resolve) => {
    inReview = resolve;
  });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const first = buildGraph(new SessiondSaver({ client: srv().client }));
  const second = buildGraph(new SessiondSaver({ client: srv().client, compareAndSwap }), {
    answered: async () => {
      inReview();
      await released;
    },
  });
  await first.invoke(
    { messages: [new HumanMessage({ id: "h1", content: "add 2 and 3" })] },
    config,
  );
  // The second writer resumes and waits inside the review...
  const secondRun = second.invoke(new Command({ resume: "second" }), config).then(
    () => "ok",
    (err: unknown) => err,
  );
  await reviewing;
  // ...while the first one resumes and runs to the end.
  await first.invoke(new Command({ resume: "first" }), config);
  release();
  const outcome = await secondRun;
  const reader = buildGraph(new SessiondSaver({ client: srv().client }));
  const history = [];
  for await (const s of reader.getStateHistory(config)) history.push(s);
  const parents = history.map((s) => s.parentConfig?.configurable?.checkpoint_id);
  return {
    outcome,
    latest: messagesOf((await reader.getState(config)).values).at(-1),
    forks: parents.filter((p, i) => p !== undefined && parents.indexOf(p) !== i).length,
  };
}

test("the second writer of an interrupted thread gets CheckpointConflictError and writes nothing", async () => {
  const { outcome, latest, forks } = await twoWriters(true);
  expect(outcome).toBeInstanceOf(CheckpointConflictError);
  expect(String((outcome as Error).message)).toMatch(
    /written by another writer since this saver read it/,
  );
  expect(latest).toMatchObject({ type: "human", content: "review: first" });
  expect(forks).toBe(0);
});

test("control: without the check both writers succeed and the thread forks silently", async () => {
  const { outcome, latest, forks } = await twoWriters(false);
  expect(outcome).toBe("ok");
  expect(latest).toMatchObject({ type: "human", content: "review: second" });
  expect(forks).toBe(1);
});
