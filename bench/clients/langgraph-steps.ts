/**
 * The client of scenario l: one LangGraph graph whose state grows by a
 * message each step, run for `steps` steps on SessiondSaver (over the
 * sessiond server at `sessiondUrl`) and on PostgresSaver
 * (@langchain/langgraph-checkpoint-postgres, on the database `pgUrl`), the
 * two runs alternating thread by thread; every put and getTuple of the
 * savers timed. Then `reads` getTuple of each thread's latest checkpoint,
 * alternating. Prints {sessiond, postgres} with the timings in ms.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import {
  type BaseCheckpointSaver,
  END,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SessiondSaver } from "../../src/adapters/langgraph/index.js";
import { createSessiondClient } from "../../src/client/index.js";

const a = JSON.parse(process.argv[2] ?? "{}") as {
  sessiondUrl: string;
  pgUrl: string;
  steps: number;
  reads: number;
  /** Prefix of the two threads' ids. */
  thread: string;
};

interface Timed {
  put: number[];
  putWrites: number[];
  getTuple: number[];
  reads: number[];
  runMs: number;
}

/** Wraps the saver's put / putWrites / getTuple with timers. */
function timed(saver: BaseCheckpointSaver): Timed {
  const t: Timed = { put: [], putWrites: [], getTuple: [], reads: [], runMs: 0 };
  for (const m of ["put", "putWrites", "getTuple"] as const) {
    const orig = (saver[m] as (...args: unknown[]) => Promise<unknown>).bind(saver);
    (saver as unknown as Record<string, unknown>)[m] = async (...args: unknown[]) => {
      const t0 = performance.now();
      try {
        return await orig(...args);
      } finally {
        t[m].push(performance.now() - t0);
      }
    };
  }
  return t;
}

/** A graph of `steps` steps, each adding a message of about 400 characters to the state. */
function graph(saver: BaseCheckpointSaver, steps: number) {
  return new StateGraph(MessagesAnnotation)
    .addNode("step", (s) => {
      const n = s.messages.length;
      const text = `Step ${n}: ${"the agent reasons about the task and writes down what it found. ".repeat(6)}`;
      return { messages: [new AIMessage({ id: `m-${n}`, content: text })] };
    })
    .addEdge(START, "step")
    .addConditionalEdges("step", (s) => (s.messages.length > steps ? END : "step"))
    .compile({ checkpointer: saver });
}

const sessiond = new SessiondSaver({ client: createSessiondClient({ baseUrl: a.sessiondUrl }) });
const postgres = PostgresSaver.fromConnString(a.pgUrl);
await postgres.setup();
const savers = { sessiond, postgres } as const;
const timings = { sessiond: timed(sessiond), postgres: timed(postgres) };
const input = {
  messages: [new HumanMessage({ id: "q", content: "Work on the task step by step." })],
};
for (const name of ["postgres", "sessiond"] as const) {
  const t0 = performance.now();
  await graph(savers[name], a.steps).invoke(input, {
    configurable: { thread_id: `${a.thread}-${name}` },
    recursionLimit: a.steps * 2 + 10,
  });
  timings[name].runMs = performance.now() - t0;
}
for (let i = 0; i < a.reads; i++) {
  for (const name of i % 2 === 0
    ? (["sessiond", "postgres"] as const)
    : (["postgres", "sessiond"] as const)) {
    const t0 = performance.now();
    const tuple = await savers[name].getTuple({
      configurable: { thread_id: `${a.thread}-${name}` },
    });
    timings[name].reads.push(performance.now() - t0);
    const msgs = (tuple?.checkpoint.channel_values as { messages?: unknown[] } | undefined)
      ?.messages;
    if (msgs?.length !== a.steps + 1)
      throw new Error(`${name}: ${msgs?.length} messages read back`);
  }
}
await postgres.end();
process.stdout.write(`${JSON.stringify(timings)}\n`);
process.exit(0);
