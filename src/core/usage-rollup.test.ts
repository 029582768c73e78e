import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EntrySchema, Role, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import {
  appendBatch,
  buildLog,
  compaction,
  newLog,
  rewindTo,
  ts,
  user,
} from "../../test/support/fixtures.js";
import {
  expectedTotals,
  plainTotals,
  reply,
  SCENARIO_CONTEXT_TOKENS,
  SCENARIO_PRICES,
  scenarioSteps,
} from "../../test/support/usage-scenario.js";
import { planReset } from "./move-plan.js";
import type { SessionLog } from "./session-log.js";
import { contextTokens, rollUpEntries } from "./usage-rollup.js";
import { parsePriceTable, totalsToProto, type UsageGroups } from "./usage-sums.js";
import { planWithhold, withheldMarker } from "./withheld.js";

const table = parsePriceTable(SCENARIO_PRICES);
function priced(g: UsageGroups | undefined) {
  if (g === undefined) throw new Error("no such usage");
  return plainTotals(totalsToProto(g.price(table)));
}

function scenarioLog(): SessionLog {
  const log = newLog();
  for (const step of scenarioSteps()) {
    if ("append" in step) appendBatch(log, step.append);
    else if ("rewind" in step) rewindTo(log, { target: step.rewind });
    else {
      const marker = withheldMarker(WithheldReason.REDACTED, "test", ts(1), "");
      log.replaceAll(planWithhold(log.lookup, log.sessionId, step.redact, marker).changed);
    }
  }
  return log;
}

describe("usage roll-up of a session's tree", () => {
  const log = scenarioLog();
  const r = rollUpEntries(log.entries(), log.leafId);

  it("the tree counts every assistant message with usage, abandoned branches included", () => {
    expect(priced(r.tree)).toEqual(expectedTotals(["a1", "a2", "a3", "a4", "a5"]));
  });

  it("the current path counts the messages root -> current leaf only", () => {
    expect(priced(r.currentPath)).toEqual(expectedTotals(["a1", "a3", "a4"]));
  });

  it("branches: the current one first, then each abandoned leaf by seq with its fork and what it cost beyond it", () => {
    expect(
      r.branches.map((b) => ({
        leaf: b.leafEntryId,
        current: b.current,
        fork: b.forkEntryId,
        usage: priced(b.usage),
      })),
    ).toEqual([
      { leaf: "u5", current: true, fork: "", usage: expectedTotals(["a1", "a3", "a4"]) },
      { leaf: "a2", current: false, fork: "a1", usage: expectedTotals(["a2"]) },
      { leaf: "a5", current: false, fork: "u3", usage: expectedTotals(["a5"]) },
    ]);
  });

  it("a redacted message keeps its usage and counts", () => {
    expect(log.get("a1")?.withheld).toBeDefined();
    expect(priced(r.tree).input).toBe(expectedTotals(["a1", "a2", "a3", "a4", "a5"]).input);
    expect(priced(r.tree).cacheRead).toBe(3000);
  });

  it("context_tokens: the newest assistant message's tokens plus the characters after it / 4", () => {
    expect(r.contextTokens).toBe(BigInt(SCENARIO_CONTEXT_TOKENS));
  });

  it("head_seq is the log's", () => {
    expect(r.headSeq).toBe(log.headSeq);
  });

  it("after a rewind to an entry with children, the current branch still heads the list at that entry", () => {
    const l = scenarioLog();
    rewindTo(l, { target: "a1" });
    const b = rollUpEntries(l.entries(), l.leafId).branches;
    expect(b[0]).toMatchObject({ leafEntryId: "a1", current: true, forkEntryId: "" });
    expect(b.slice(1).map((x) => [x.leafEntryId, x.forkEntryId])).toEqual([
      ["a2", "a1"],
      ["a5", "a1"],
      ["u5", "a1"],
    ]);
    expect(priced(b[3]?.usage)).toEqual(expectedTotals(["a3", "a4"]));
  });

  it("an empty context (after a reset) estimates 0 tokens", () => {
    const l = scenarioLog();
    for (const e of planReset(l, {}, {}).write) l.apply(e);
    const after = rollUpEntries(l.entries(), l.leafId);
    expect(after.contextTokens).toBe(0n);
    expect(priced(after.currentPath).messages).toBe(0);
    expect(priced(after.tree)).toEqual(expectedTotals(["a1", "a2", "a3", "a4", "a5"]));
  });
});

describe("context estimate", () => {
  it("counts every character of the context when no assistant message has usage", () => {
    const log = buildLog(user("u1", "a".repeat(10)), user("u2", "b".repeat(7)));
    expect(contextTokens(log.path())).toBe(5n);
  });

  it("takes no assistant message older than the newest compaction as its base", () => {
    const log = newLog();
    appendBatch(log, [
      user("u1", "x".repeat(400)),
      reply({ id: "a1", model: "m", at: "05:00:00", tokens: { input: 5000, output: 100 } }),
      user("u2", "y".repeat(8)),
    ]);
    appendBatch(log, [compaction("c1", "z".repeat(12), ["u1"])]);
    // a1 saw u1's 400 characters; now u1 is a 12-character summary (+ its prefix).
    const n = contextTokens(log.path());
    expect(n).toBeLessThan(5100n);
    const prefix = "Previous conversation summary:\n".length;
    const chars = prefix + 12 + "reply a1".length + 8;
    expect(n).toBe(BigInt(Math.ceil(chars / 4)));
  });

  it("counts a tool call's name and JSON arguments", () => {
    const call = create(EntrySchema, {
      id: "a1",
      kind: {
        case: "message",
        value: {
          role: Role.ASSISTANT,
          content: [
            {
              part: {
                case: "toolCall",
                value: {
                  id: "c1",
                  name: "calc",
                  arguments: { kind: { case: "numberValue", value: 12 } },
                },
              },
            },
          ],
        },
      },
    });
    expect(contextTokens(buildLog(call).path())).toBe(BigInt(Math.ceil(("calc".length + 2) / 4)));
  });
});
