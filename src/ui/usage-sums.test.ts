import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { totalsText, usageOfEntries } from "./usage-sums.js";

function msg(
  id: string,
  parentId: string | undefined,
  role: Role,
  usage?: { in: number; out: number; reasoning?: number; cost?: [string, string] },
): Entry {
  return create(EntrySchema, {
    id,
    parentId,
    seq: 0n,
    kind: {
      case: "message",
      value: {
        role,
        content: [{ part: { case: "text", value: id } }],
        usage:
          usage === undefined
            ? undefined
            : {
                inputTokens: BigInt(usage.in),
                outputTokens: BigInt(usage.out),
                reasoningTokens: BigInt(usage.reasoning ?? 0),
                cost:
                  usage.cost === undefined
                    ? undefined
                    : { amount: usage.cost[0], currency: usage.cost[1] },
              },
      },
    },
  });
}

//   root ─ u1 ─ a1 ─ u2 ─ a2 (leaf)
//                 └─ u3 ─ a3 (abandoned)
const root = create(EntrySchema, { id: "root", kind: { case: "sessionInfo", value: {} } });
const entries = [
  root,
  msg("u1", "root", Role.USER),
  msg("a1", "u1", Role.ASSISTANT, { in: 100, out: 10, reasoning: 4, cost: ["0.1", "USD"] }),
  msg("u2", "a1", Role.USER),
  msg("a2", "u2", Role.ASSISTANT, { in: 200, out: 20, cost: ["0.2", "USD"] }),
  msg("u3", "a1", Role.USER),
  msg("a3", "u3", Role.ASSISTANT, { in: 50, out: 5, cost: ["0.000000000001", "EUR"] }),
  msg("a4", "a2", Role.ASSISTANT, { in: 1, out: 1 }),
].map((e, i) => ({ ...e, seq: BigInt(i + 1) }));

describe("usage summed in the page (exports and shares)", () => {
  it("sums exactly: 0.1 + 0.2 USD is 0.3, currencies apart in order, a message without cost unpriced", () => {
    const t = usageOfEntries("s", entries, "a4").tree;
    if (t === undefined) throw new Error("no tree");
    expect(t.messages).toBe(4n);
    expect([t.inputTokens, t.outputTokens, t.reasoningTokens]).toEqual([351n, 36n, 4n]);
    expect(t.cost.map((c) => [c.amount, c.currency])).toEqual([
      ["0.000000000001", "EUR"],
      ["0.3", "USD"],
    ]);
    expect(t.unpricedMessages).toBe(1n);
    expect(totalsText(t)).toBe(
      "4 msg · in 351 · out 36 (reasoning 4) · cache read 0 · cache write 0 · 0.000000000001 EUR + 0.3 USD · 1 unpriced",
    );
  });

  it("the tree, the current path and each branch beyond its fork point", () => {
    const u = usageOfEntries("s", entries, "a4");
    expect(u.tree?.inputTokens).toBe(351n);
    expect(u.currentPath?.inputTokens).toBe(301n);
    expect(u.branches.map((b) => [b.leafEntryId, b.current, b.forkEntryId])).toEqual([
      ["a4", true, ""],
      ["a3", false, "a1"],
    ]);
    expect(u.branches[1]?.usage?.inputTokens).toBe(50n);
    expect(u.total?.inputTokens).toBe(351n);
    expect(u.headSeq).toBe(8n);
    // As the server counts it: the context from the newest assistant message's tokens.
    expect(u.contextTokens).toBe(2n);
  });

  it("a cost a hand-made file holds that is no decimal counts as unpriced", () => {
    const bad = msg("a5", "a4", Role.ASSISTANT, { in: 7, out: 1, cost: ["1,5", "USD"] });
    const u = usageOfEntries("s", [...entries, { ...bad, seq: 9n }], "a5");
    expect(u.tree?.unpricedMessages).toBe(2n);
    expect(u.tree?.cost.map((c) => c.amount)).toEqual(["0.000000000001", "0.3"]);
  });

  it("a fork's snapshot leaves the copies of its source out, as GetUsage does", () => {
    const forkRoot = create(EntrySchema, {
      id: "froot",
      seq: 1n,
      kind: { case: "sessionInfo", value: { forkedFrom: { sessionId: "s", entryId: "a1" } } },
    });
    const copies = [
      { ...msg("u1", "froot", Role.USER), seq: 2n },
      { ...(entries[2] as Entry), seq: 3n },
    ];
    const own = { ...msg("a9", "a1", Role.ASSISTANT, { in: 9, out: 9 }), seq: 4n };
    const u = usageOfEntries("f", [forkRoot, ...copies, own], "a9");
    expect(u.tree?.inputTokens).toBe(9n);
    expect(u.forked?.inputTokens).toBe(100n);
  });
});
