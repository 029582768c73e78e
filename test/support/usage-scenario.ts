/**
 * One session for the usage roll-up tests (core, store on every engine,
 * server): a tree with an abandoned branch off the current path, another
 * off a rewound-to entry, priced, caller-costed and unpriced messages over
 * two price periods, a redacted message, and the sums they must give,
 * computed here from the entries with nothing of src/core/usage-*.
 *
 *   root - u1 - a1 - u2 - a2                 (abandoned: fork a1)
 *                \- u3 - a3 - u4 - a4 - u5   (current)
 *                      \- a5                 (abandoned: fork u3)
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import type { UsageTotals } from "../../gen/sessiond/v1/session_pb.js";
import { user } from "./fixtures.js";

/** The hour the price changes. */
const CHANGE = Date.parse("2026-03-04T06:00:00Z");

/** The price table of the scenario (`serve --prices` / `parsePriceTable`). */
export const SCENARIO_PRICES = {
  prices: [
    {
      model: "sonnet",
      currency: "USD",
      input_per_mtok: "3",
      output_per_mtok: "15",
      cache_read_per_mtok: "0.3",
      cache_write_per_mtok: "3.75",
    },
    {
      model: "sonnet",
      from: "2026-03-04T06:00:00Z",
      currency: "USD",
      input_per_mtok: "6",
      output_per_mtok: "30",
      cache_read_per_mtok: "0.6",
      cache_write_per_mtok: "7.5",
    },
  ],
};

interface Tokens {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
}

export interface Reply {
  id: string;
  model: string;
  at: string;
  tokens: Tokens;
  cost?: { amount: string; currency: string };
}

/** An ASSISTANT message with usage at a time of day (on 2026-03-04, UTC). */
export function reply(r: Reply, parentId?: string): Entry {
  return create(EntrySchema, {
    id: r.id,
    parentId,
    timestamp: timestampFromMs(Date.parse(`2026-03-04T${r.at}Z`)),
    kind: {
      case: "message",
      value: {
        role: Role.ASSISTANT,
        model: r.model,
        content: [{ part: { case: "text", value: `reply ${r.id}` } }],
        usage: {
          inputTokens: BigInt(r.tokens.input),
          outputTokens: BigInt(r.tokens.output),
          cacheReadTokens: BigInt(r.tokens.cacheRead ?? 0),
          cacheWriteTokens: BigInt(r.tokens.cacheWrite ?? 0),
          reasoningTokens: BigInt(r.tokens.reasoning ?? 0),
          cost: r.cost,
        },
      },
    },
  });
}

const REPLIES: Record<string, Reply> = {
  a1: {
    id: "a1",
    model: "sonnet",
    at: "05:10:00",
    tokens: { input: 100, output: 20, cacheRead: 1000, cacheWrite: 50, reasoning: 5 },
  },
  a2: {
    id: "a2",
    model: "sonnet",
    at: "05:20:00",
    tokens: { input: 200, output: 30 },
    cost: { amount: "0.01", currency: "USD" },
  },
  a3: { id: "a3", model: "mystery", at: "05:30:00", tokens: { input: 10, output: 5 } },
  a5: {
    id: "a5",
    model: "sonnet",
    at: "06:10:00",
    tokens: { input: 300, output: 40, reasoning: 10 },
  },
  a4: {
    id: "a4",
    model: "sonnet",
    at: "06:20:00",
    tokens: { input: 400, output: 50, cacheRead: 2000 },
    cost: { amount: "0.5", currency: "EUR" },
  },
};

/** The last user message: what follows the newest assistant message in the context. */
export const TAIL_TEXT = "x".repeat(41);
/** The text of the assistant message without usage between a4 and u5. */
const QUIET_TEXT = "no usage";

/** One step of the scenario, for whatever runs it (a core log or a Session). */
export type Step = { append: Entry[] } | { rewind: string } | { redact: string[] };

/** The steps building the tree drawn above (a1 redacted at the end). */
export function scenarioSteps(): Step[] {
  const r = (id: string) => reply(REPLIES[id] as Reply);
  const quiet = create(EntrySchema, {
    id: "a0",
    kind: {
      case: "message",
      value: { role: Role.ASSISTANT, content: [{ part: { case: "text", value: QUIET_TEXT } }] },
    },
  });
  return [
    { append: [user("u1"), r("a1"), user("u2"), r("a2")] },
    { rewind: "a1" },
    { append: [user("u3"), r("a3")] },
    { rewind: "u3" },
    { append: [r("a5")] },
    { rewind: "a3" },
    { append: [user("u4"), r("a4"), quiet, user("u5", TAIL_TEXT)] },
    { redact: ["a1"] },
  ];
}

/** A UsageTotals as a plain object, for comparing with `expectedTotals`. */
export interface PlainTotals {
  messages: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
  cost: Array<[currency: string, amount: string]>;
  unpriced: number;
}

export function plainTotals(t: UsageTotals | undefined): PlainTotals {
  if (t === undefined) throw new Error("totals missing");
  return {
    messages: Number(t.messages),
    input: Number(t.inputTokens),
    output: Number(t.outputTokens),
    cacheRead: Number(t.cacheReadTokens),
    cacheWrite: Number(t.cacheWriteTokens),
    reasoning: Number(t.reasoningTokens),
    cost: t.cost.map((c) => [c.currency, c.amount]),
    unpriced: Number(t.unpricedMessages),
  };
}

/**
 * The sums of the scenario's messages `ids`, priced by hand: the prices
 * are whole multiples of 10^-12 per token, so every message's cost is
 * exact on its own and no rounding enters.
 */
export function expectedTotals(ids: readonly string[]): PlainTotals {
  return sumReplies(scenarioReplies(ids));
}

/** The scenario's replies of these ids. */
export function scenarioReplies(ids: readonly string[]): Reply[] {
  return ids.map((id) => REPLIES[id] as Reply);
}

/** The same sums over any replies (subagent sessions' too). */
export function sumReplies(replies: readonly Reply[]): PlainTotals {
  const t: PlainTotals = {
    messages: 0,
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    reasoning: 0,
    cost: [],
    unpriced: 0,
  };
  // Money in millionths of a millionth (10^-12), as integers.
  const money = new Map<string, bigint>();
  const add = (currency: string, units: bigint) =>
    money.set(currency, (money.get(currency) ?? 0n) + units);
  for (const r of replies) {
    const k = r.tokens;
    t.messages += 1;
    t.input += k.input;
    t.output += k.output;
    t.cacheRead += k.cacheRead ?? 0;
    t.cacheWrite += k.cacheWrite ?? 0;
    t.reasoning += k.reasoning ?? 0;
    if (r.cost !== undefined) {
      const [whole, frac = ""] = r.cost.amount.split(".");
      add(r.cost.currency, BigInt(whole as string) * 10n ** 12n + BigInt(frac.padEnd(12, "0")));
    } else if (r.model === "sonnet") {
      // Per token in 10^-12: 3 per million = 3,000,000 units; doubled from 06:00.
      const f = Date.parse(`2026-03-04T${r.at}Z`) >= CHANGE ? 2n : 1n;
      add(
        "USD",
        f *
          (BigInt(k.input) * 3_000_000n +
            BigInt(k.output) * 15_000_000n +
            BigInt(k.cacheRead ?? 0) * 300_000n +
            BigInt(k.cacheWrite ?? 0) * 3_750_000n),
      );
    } else {
      t.unpriced += 1;
    }
  }
  t.cost = [...money.keys()].sort().map((c) => {
    const units = money.get(c) as bigint;
    const frac = (units % 10n ** 12n).toString().padStart(12, "0").replace(/0+$/, "");
    const whole = (units / 10n ** 12n).toString();
    return [c, frac === "" ? whole : `${whole}.${frac}`];
  });
  return t;
}

/** The context estimate of the scenario: a4's input + cache read + output, plus the text after it / 4. */
export const SCENARIO_CONTEXT_TOKENS =
  400 + 2000 + 50 + Math.ceil((QUIET_TEXT.length + TAIL_TEXT.length) / 4);

/** Replies of a subagent session, with their own ids (they must not collide within a session only). */
export function subagentReply(id: string, at: string, tokens: Tokens, cost?: Reply["cost"]): Reply {
  return cost === undefined
    ? { id, model: "sonnet", at, tokens }
    : { id, model: "sonnet", at, tokens, cost };
}
