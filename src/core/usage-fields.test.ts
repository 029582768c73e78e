/**
 * Usage.reasoning_tokens and Usage.cost (issue 42) survive every hand-written
 * codec the append path uses (binary request decoder, stored JSON writer and
 * reader), compared with protobuf-es, and a malformed cost is refused.
 */
import { create, fromJsonString, toBinary, toJsonString } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { AppendRequestSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import { buildLog, CLOCK, expectError, user } from "../../test/support/fixtures.js";
import { planAppend } from "./append-plan.js";
import { decodeAppendRequest, tryDecodeAppendRequest } from "./codec/append-request-binary.js";
import { tryDecodeEntry } from "./codec/entry-from-json.js";
import { tryEntryJson } from "./codec/entry-to-json.js";

function reply(id: string, usage: Record<string, unknown>): Entry {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: {
        role: Role.ASSISTANT,
        content: [{ part: { case: "text", value: "ok" } }],
        model: "m1",
        usage,
      },
    },
  });
}

const priced = reply("a1", {
  inputTokens: 10n,
  outputTokens: 7n,
  reasoningTokens: 5n,
  cost: { amount: "0.000123", currency: "USD" },
});

describe("Usage.reasoning_tokens and Usage.cost", () => {
  it("the binary append decoder reads reasoning tokens on its fast path and cost like fromBinary", () => {
    const reasoningOnly = reply("a2", { outputTokens: 3n, reasoningTokens: 2n });
    const bytes = toBinary(
      AppendRequestSchema,
      create(AppendRequestSchema, { session: "s", entries: [reasoningOnly] }),
    );
    const fast = tryDecodeAppendRequest(bytes);
    expect(fast).toBeDefined();
    const u =
      fast?.entries[0]?.kind.case === "message" ? fast.entries[0].kind.value.usage : undefined;
    expect(u?.reasoningTokens).toBe(2n);

    const withCost = toBinary(
      AppendRequestSchema,
      create(AppendRequestSchema, { session: "s", entries: [priced] }),
    );
    const decoded = decodeAppendRequest(withCost);
    const m = decoded.entries[0]?.kind.value as {
      usage?: { cost?: { amount: string; currency: string } };
    };
    expect(m.usage?.cost).toMatchObject({ amount: "0.000123", currency: "USD" });
  });

  it("the stored JSON writer and reader keep both, as protobuf-es's JSON does (fast paths, not their fallbacks)", () => {
    const json = tryEntryJson(priced);
    expect(json).toBe(toJsonString(EntrySchema, priced));
    const back = tryDecodeEntry(JSON.parse(json as string));
    expect(back).toBeDefined();
    expect(toJsonString(EntrySchema, back as Entry)).toBe(toJsonString(EntrySchema, priced));
    expect(fromJsonString(EntrySchema, json as string).kind.value).toMatchObject({
      usage: { reasoningTokens: 5n, cost: { amount: "0.000123", currency: "USD" } },
    });
  });

  it.each([
    [{ amount: "1,5", currency: "USD" }, /usage\.cost\.amount/],
    [{ amount: "0.5", currency: "dollars" }, /usage\.cost\.currency/],
    [{ amount: "", currency: "" }, /usage\.cost\.amount/],
  ])("Append refuses cost %j with INVALID_ARGUMENT naming the entry", (cost, what) => {
    const log = buildLog(user("u1", "hi"));
    const err = expectError(
      () =>
        planAppend(
          log,
          { entries: [reply("bad1", { outputTokens: 1n, cost })] },
          { now: () => CLOCK },
        ),
      "INVALID_ARGUMENT",
      '"bad1"',
    );
    expect(err.message).toMatch(what);
  });

  it("Append accepts a well-formed cost", () => {
    const log = buildLog(user("u1", "hi"));
    const p = planAppend(log, { entries: [priced] }, { now: () => CLOCK });
    expect(p.write).toHaveLength(1);
  });
});
