import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionFilterSchema } from "../../../gen/sessiond/v1/store_service_pb.js";
import { storeOn } from "../../../test/support/search-fixtures.js";
import type { RootRecord } from "../../storage/engine.js";
import { MemoryEngine } from "../../storage/memory.js";
import { checkFilter } from "../session-filter.js";
import { SearchGate } from "./search-gate.js";

/**
 * The gate of a filtered search: which sessions it admits, and that it
 * reads their records in batches of the sessions met next, once each,
 * leaving out those their root already rules out.
 */

async function workspace(n: number): Promise<{ memory: MemoryEngine; roots: RootRecord[] }> {
  const memory = new MemoryEngine();
  const store = storeOn(memory);
  // Subagents of one parent: agent types need one.
  const parentSessionId = (await store.create()).session.id;
  for (let i = 0; i < n; i++) {
    await store.create({
      title: i % 3 === 0 ? `keep ${i}` : `drop ${i}`,
      agentType: i % 2 === 0 ? "explore" : "plan",
      parentSessionId,
    });
  }
  const roots = (await memory.listRoots("default"))
    .filter((r) => r.parentSessionId === parentSessionId)
    .sort((a, b) => a.createdAtMs - b.createdAtMs);
  return { memory, roots };
}

/** The memory engine, with every `list` call's ids. */
function counting(memory: MemoryEngine): { engine: MemoryEngine; asked: string[][] } {
  const asked: string[][] = [];
  const engine = Object.assign(Object.create(memory) as MemoryEngine, {
    list(ws: string, ids?: readonly string[]) {
      asked.push([...(ids ?? [])]);
      return memory.list(ws, ids);
    },
  });
  return { engine, asked };
}

describe("the search gate", () => {
  it("admits the sessions the filter takes, reading records a batch at a time, each once", async () => {
    const { memory, roots } = await workspace(200);
    const { engine, asked } = counting(memory);
    const filter = checkFilter(
      create(SessionFilterSchema, { agentType: "explore", titleContains: "keep" }),
    );
    const gate = new SearchGate(engine, "default", filter);
    const admitted: string[] = [];
    for (let i = 0; i < roots.length; i++) {
      const root = roots[i] as RootRecord;
      if (await gate.admits(root, roots, i + 1)) admitted.push(root.sessionId);
    }
    const explore = roots.filter((_, i) => i % 2 === 0).map((r) => r.sessionId);
    expect(admitted).toEqual(roots.filter((_, i) => i % 6 === 0).map((r) => r.sessionId));
    // 100 sessions the root takes: a batch of 64, then the other 36; none the root rules out.
    expect(asked.map((ids) => ids.length)).toEqual([64, 36]);
    expect(asked.flat()).toEqual(explore);
  });

  it("a session met again, or named twice among the next, is not read again", async () => {
    const { memory, roots } = await workspace(4);
    const { engine, asked } = counting(memory);
    const gate = new SearchGate(
      engine,
      "default",
      checkFilter(create(SessionFilterSchema, { titleContains: "keep" })),
    );
    const [a, b] = roots as [RootRecord, RootRecord];
    expect(await gate.admits(a, [b, b, a, b], 0)).toBe(true);
    expect(await gate.admits(b, [a], 0)).toBe(false);
    expect(await gate.admits(a, [], 0)).toBe(true);
    expect(asked).toEqual([[a.sessionId, b.sessionId]]);
  });

  it("without a filter it admits every session and reads nothing", async () => {
    const { memory, roots } = await workspace(2);
    const { engine, asked } = counting(memory);
    const gate = new SearchGate(engine, "default", undefined);
    for (const r of roots) expect(await gate.admits(r, roots, 0)).toBe(true);
    expect(asked).toEqual([]);
  });

  it("a session gone since its root was read is not admitted", async () => {
    const { memory, roots } = await workspace(1);
    const root = roots[0] as RootRecord;
    await memory.delete({ workspace: "default", sessionId: root.sessionId });
    const gate = new SearchGate(
      memory,
      "default",
      checkFilter(
        create(SessionFilterSchema, { titleContains: "", tags: {}, agentType: "explore" }),
      ),
    );
    expect(await gate.admits(root, [], 0)).toBe(false);
  });
});
