import {
  type AgentInputItem,
  applySessionHistoryMutations,
  type SessionHistoryMutation,
} from "@openai/agents-core";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { applyMutations } from "./history-rewrite.js";

const callId = fc.constantFrom("c1", "c2", "c3");
const functionCall = fc.record({
  type: fc.constant("function_call" as const),
  callId,
  name: fc.constantFrom("add", "mul"),
  arguments: fc.jsonValue().map((v) => JSON.stringify(v)),
  status: fc.constant("completed" as const),
});
const item: fc.Arbitrary<AgentInputItem> = fc.oneof(
  functionCall,
  fc.record({
    type: fc.constant("message" as const),
    role: fc.constant("user" as const),
    content: fc.string(),
  }),
  fc.record({
    type: fc.constant("function_call_result" as const),
    callId,
    name: fc.constant("add"),
    status: fc.constant("completed" as const),
    output: fc.string(),
  }),
);
const mutation: fc.Arbitrary<SessionHistoryMutation> = fc.record({
  type: fc.constant("replace_function_call" as const),
  callId,
  replacement: functionCall,
});

describe("applyMutations", () => {
  test("gives the items the SDK's own applySessionHistoryMutations gives", () => {
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 8 }),
        fc.array(mutation, { maxLength: 3 }),
        (items, mutations) => {
          expect(applyMutations(items, mutations)).toEqual(
            applySessionHistoryMutations(items, mutations),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  test("a mutation the SDK version here does not define is refused, not skipped", () => {
    const expected = {
      type: "replace_function_call",
      callId: "c1",
      replacement: { type: "function_call", callId: "c1", name: "add", arguments: "{}" },
      expected: { type: "function_call", callId: "c1", name: "add", arguments: "[]" },
    } as SessionHistoryMutation;
    expect(() => applyMutations([], [expected])).toThrow(/no expected item/);
    const other = { type: "drop_item", callId: "c1" } as unknown as SessionHistoryMutation;
    expect(() => applyMutations([], [other])).toThrow(/"drop_item"/);
  });
});
