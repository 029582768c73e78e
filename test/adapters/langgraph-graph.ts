/**
 * A LangGraph graph for the saver's tests, the same in every process: a
 * scripted model (its reply depends only on the conversation so far), an
 * `add` tool run by LangGraph's ToolNode, and a review node that
 * interrupts for a human's answer. Plus the normal form the tests compare
 * runs in: messages without their ids, checkpoints by position.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import {
  type BaseCheckpointSaver,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
  type StateSnapshot,
} from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

const add = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

/** The model: a tool call for "add X and Y", the sum once the tool answered. */
function scriptedModel(state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } {
  const msgs = state.messages;
  const last = msgs[msgs.length - 1];
  const n = msgs.length;
  if (last?.getType() === "tool") {
    return { messages: [new AIMessage({ id: `ai-${n}`, content: `The sum is ${last.content}.` })] };
  }
  const [a, b] = String(last?.content ?? "")
    .match(/-?\d+/g)
    ?.map(Number) ?? [0, 0];
  return {
    messages: [
      new AIMessage({
        id: `ai-${n}`,
        content: "",
        tool_calls: [{ id: `call-${n}`, name: "add", args: { a, b }, type: "tool_call" }],
      }),
    ],
  };
}

/** What a test may run inside the graph: after the review got its answer, before it returns. */
export interface GraphHooks {
  answered?: () => Promise<void>;
}

async function review(
  state: typeof MessagesAnnotation.State,
  hooks: GraphHooks,
): Promise<{ messages: BaseMessage[] }> {
  const draft = state.messages[state.messages.length - 1]?.content;
  const answer = interrupt({ question: "Send this answer?", draft });
  await hooks.answered?.();
  return {
    messages: [
      new HumanMessage({ id: `review-${state.messages.length}`, content: `review: ${answer}` }),
    ],
  };
}

/** The graph, compiled with `checkpointer`. */
export function buildGraph(checkpointer: BaseCheckpointSaver, hooks: GraphHooks = {}) {
  return new StateGraph(MessagesAnnotation)
    .addNode("model", scriptedModel)
    .addNode("tools", new ToolNode([add]))
    .addNode("review", (s) => review(s, hooks))
    .addEdge(START, "model")
    .addConditionalEdges("model", (s) => {
      const last = s.messages[s.messages.length - 1] as AIMessage;
      return (last.tool_calls?.length ?? 0) > 0 ? "tools" : "review";
    })
    .addEdge("tools", "model")
    .addEdge("review", END)
    .compile({ checkpointer });
}

/** Messages as the tests compare them: kind, text, tool calls, the call a tool result answers. */
export function messagesOf(values: unknown): unknown[] {
  const msgs = ((values as { messages?: BaseMessage[] }).messages ?? []) as BaseMessage[];
  return msgs.map((m) => ({
    type: m.getType(),
    content: m.content,
    toolCalls: (m as AIMessage).tool_calls?.map((c) => [c.id, c.name, c.args]),
    toolCallId: (m as { tool_call_id?: string }).tool_call_id,
  }));
}

/** A thread's history (newest first) with checkpoint ids replaced by positions in it. */
export function historyOf(snapshots: StateSnapshot[]): unknown[] {
  const pos = new Map(snapshots.map((s, i) => [s.config.configurable?.checkpoint_id, i]));
  return snapshots.map((s) => ({
    next: s.next,
    source: s.metadata?.source,
    step: s.metadata?.step,
    messages: messagesOf(s.values),
    parent: s.parentConfig ? pos.get(s.parentConfig.configurable?.checkpoint_id) : undefined,
    interrupts: s.tasks.flatMap((t) => t.interrupts.map((i) => i.value)),
  }));
}
