import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Usage, UsageSchema } from "../../gen/sessiond/v1/entry_pb.js";
import { UsageTotalsSchema } from "../../gen/sessiond/v1/session_pb.js";
import { isSessiondError } from "./errors.js";
import {
  addMessage,
  emptyRaw,
  mergeRaw,
  NO_PRICES,
  parsePriceTable,
  priceRaw,
  rawFromJson,
  rawToJson,
  totalsToProto,
  UINT64_MAX,
  UsageGroups,
} from "./usage-sums.js";

const H = Date.parse("2026-02-01T10:00:00Z");
const HOUR = 3_600_000;

function usage(
  input: number,
  output: number,
  cacheRead = 0,
  cacheWrite = 0,
  reasoning = 0,
  cost?: { amount: string; currency: string },
): Usage {
  return create(UsageSchema, {
    inputTokens: BigInt(input),
    outputTokens: BigInt(output),
    cacheReadTokens: BigInt(cacheRead),
    cacheWriteTokens: BigInt(cacheWrite),
    reasoningTokens: BigInt(reasoning),
    cost,
  });
}

const sonnet = {
  model: "sonnet",
  currency: "USD",
  input_per_mtok: "3",
  output_per_mtok: "15",
  cache_read_per_mtok: "0.3",
  cache_write_per_mtok: "3.75",
};

/**
 * The expected amount computed apart from the module: decimal strings of
 * tokens * price with the point moved by hand (prices written in millionths
 * of a unit per token), then rounded half up at 12 digits.
 */
function expectedAmount(parts: Array<[tokens: number, perMTok: string]>): string {
  // Everything in 10^-18 units: price per MTok in 10^-12 units / 10^6 per token.
  let total = 0n;
  for (const [t, p] of parts) {
    const [w, f = ""] = p.split(".");
    const units12 = BigInt(w as string) * 10n ** 12n + BigInt(f.padEnd(12, "0"));
    total += BigInt(t) * units12;
  }
  const q = total / 1_000_000n;
  const r = total % 1_000_000n;
  const rounded = r >= 500_000n ? q + 1n : q;
  const s = rounded.toString().padStart(13, "0");
  const whole = s.slice(0, -12);
  const frac = s.slice(-12).replace(/0+$/, "");
  return frac === "" ? whole : `${whole}.${frac}`;
}

/** Expects `fn` to throw a SessiondError of `code` whose message matches. */
function expectRefusal(fn: () => unknown, code: string, message: RegExp): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(isSessiondError(thrown) && thrown.code, String(thrown)).toBe(code);
  expect((thrown as Error).message).toMatch(message);
}

describe("usage sums", () => {
  it("sums tokens of every message and keeps caller costs apart from the uncosted tokens", () => {
    const raw = emptyRaw();
    const msgs = [
      usage(100, 20, 5, 7, 3),
      usage(1, 2, 3, 4, 1, { amount: "0.5", currency: "USD" }),
      usage(9, 8, 0, 0, 0, { amount: "0.000000000001", currency: "EUR" }),
      usage(0, 0),
    ];
    for (const m of msgs) addMessage(raw, m);
    expect(raw.messages).toBe(4);
    expect(raw.input).toBe(110n);
    expect(raw.output).toBe(30n);
    expect(raw.cacheRead).toBe(8n);
    expect(raw.cacheWrite).toBe(11n);
    expect(raw.reasoning).toBe(4n);
    expect(raw.uncosted).toEqual({
      messages: 2,
      input: 100n,
      output: 20n,
      cacheRead: 5n,
      cacheWrite: 7n,
    });
    expect(totalsToProto(priceRaw(raw, "sonnet", H, NO_PRICES)).cost).toEqual([
      expect.objectContaining({ amount: "0.000000000001", currency: "EUR" }),
      expect.objectContaining({ amount: "0.5", currency: "USD" }),
    ]);
  });

  it("prices the uncosted tokens exactly with the row of the model", () => {
    const table = parsePriceTable({ prices: [sonnet] });
    const raw = emptyRaw();
    addMessage(raw, usage(1234, 567, 89, 10, 100));
    addMessage(raw, usage(1, 1, 1, 1, 0, { amount: "1.25", currency: "USD" }));
    const t = totalsToProto(priceRaw(raw, "sonnet", H, table));
    // 1234*3 + 567*15 + 89*0.3 + 10*3.75 = 12271.2 per million tokens, + 1.25 from the caller.
    expect(t.cost.map((c) => [c.currency, c.amount])).toEqual([["USD", "1.2622712"]]);
    expect(
      expectedAmount([
        [1234, "3"],
        [567, "15"],
        [89, "0.3"],
        [10, "3.75"],
      ]),
    ).toBe("0.0122712");
    expect(t.unpricedMessages).toBe(0n);
  });

  it("rounds half up once per group sum, not per message", () => {
    // 1 input token at 0.0000005 per MTok = 5e-13: below half a unit alone;
    // three of them in one group are 1.5e-12, rounded up to 2e-12.
    const table = parsePriceTable({
      prices: [{ ...sonnet, input_per_mtok: "0.0000005" }],
    });
    const groups = new UsageGroups();
    for (let i = 0; i < 3; i++) groups.add(H + i * 1000, "sonnet", usage(1, 0));
    expect(totalsToProto(groups.price(table)).cost[0]?.amount).toBe("0.000000000002");
    const alone = emptyRaw();
    addMessage(alone, usage(1, 0));
    expect(totalsToProto(priceRaw(alone, "sonnet", H, table)).cost[0]?.amount).toBe(
      "0.000000000001",
    );
    const below = parsePriceTable({ prices: [{ ...sonnet, input_per_mtok: "0.000000499999" }] });
    expect(totalsToProto(priceRaw(alone, "sonnet", H, below)).cost[0]?.amount).toBe("0");
  });

  it("picks per model the row with the latest from at or before the hour", () => {
    const table = parsePriceTable({
      prices: [
        { ...sonnet, from: "2026-02-01T11:00:00Z", input_per_mtok: "2" },
        { ...sonnet, input_per_mtok: "1" },
        { ...sonnet, from: "2026-02-01T10:00:00Z", input_per_mtok: "4" },
        { ...sonnet, model: "other", from: "2026-02-01T09:00:00Z", input_per_mtok: "100" },
      ],
    });
    const price = (hour: number) => {
      const raw = emptyRaw();
      addMessage(raw, usage(1_000_000, 0));
      return totalsToProto(priceRaw(raw, "sonnet", hour, table)).cost[0]?.amount;
    };
    expect(price(H - HOUR)).toBe("1");
    expect(price(H)).toBe("4");
    expect(price(H + HOUR)).toBe("2");
    expect(price(H + 5 * HOUR)).toBe("2");
  });

  it("counts messages without caller cost and without a row as unpriced, adding no cost", () => {
    const table = parsePriceTable({ prices: [{ ...sonnet, from: "2026-02-01T11:00:00Z" }] });
    const groups = new UsageGroups();
    groups.add(H + 10, "sonnet", usage(10, 10)); // before the row's from
    groups.add(H + HOUR, "unknown-model", usage(10, 10));
    groups.add(H + HOUR, "", usage(10, 10));
    groups.add(H + HOUR, "unknown-model", usage(10, 10, 0, 0, 0, { amount: "2", currency: "USD" }));
    const t = totalsToProto(groups.price(table));
    expect(t.messages).toBe(4n);
    expect(t.unpricedMessages).toBe(3n);
    expect(t.cost.map((c) => c.amount)).toEqual(["2"]);
  });

  it("groups by hour and model: the same tokens an hour apart take each hour's price", () => {
    const table = parsePriceTable({
      prices: [
        { ...sonnet, input_per_mtok: "1" },
        { ...sonnet, from: "2026-02-01T11:00:00Z", input_per_mtok: "2" },
      ],
    });
    const groups = new UsageGroups();
    groups.add(H + HOUR - 1, "sonnet", usage(1_000_000, 0));
    groups.add(H + HOUR, "sonnet", usage(1_000_000, 0));
    expect(groups.size).toBe(2);
    expect(totalsToProto(groups.price(table)).cost[0]?.amount).toBe("3");
  });

  it("merges raw sums as if their messages were added to one", () => {
    const a = emptyRaw();
    const b = emptyRaw();
    const both = emptyRaw();
    const ms = [usage(1, 2, 3, 4, 1), usage(5, 6, 7, 8, 2, { amount: "0.1", currency: "USD" })];
    addMessage(a, ms[0] as Usage);
    addMessage(b, ms[1] as Usage);
    for (const m of ms) addMessage(both, m);
    mergeRaw(a, b);
    expect(a).toEqual(both);
  });

  it("persists raw sums through JSON unchanged, large counts included", () => {
    const raw = emptyRaw();
    addMessage(raw, usage(3, 4, 5, 6, 1, { amount: "0.000000000001", currency: "USD" }));
    addMessage(raw, usage(7, 8));
    raw.input += 2n ** 60n;
    const back = rawFromJson(JSON.parse(JSON.stringify(rawToJson(raw))));
    expect(back).toEqual(raw);
  });

  it("refuses malformed persisted sums with DATA_LOSS", () => {
    expectRefusal(() => rawFromJson({ m: -1, i: 0, o: 0, cr: 0, cw: 0, r: 0 }), "DATA_LOSS", /m/);
    expectRefusal(() => rawFromJson({ m: 1, i: "x", o: 0, cr: 0, cw: 0, r: 0 }), "DATA_LOSS", /i/);
    expectRefusal(
      () => rawFromJson({ m: 1, i: 0, o: 0, cr: 0, cw: 0, r: 0, c: { USD: "1e3" } }),
      "DATA_LOSS",
      /USD/,
    );
  });
});

describe("price table", () => {
  it.each([
    [null, /expected an object/],
    [{ prices: {} }, /"prices" must be an array/],
    [{ prices: [], extra: 1 }, /unknown key "extra"/],
    [{ prices: [{ ...sonnet, model: "" }] }, /row 0: "model"/],
    [{ prices: [sonnet, { ...sonnet, currency: "usd" }] }, /row 1 \(model "sonnet"\): "currency"/],
    [
      { prices: [{ ...sonnet, input_per_mtok: 3 }] },
      /row 0 \(model "sonnet"\): "input_per_mtok" 3/,
    ],
    [{ prices: [{ ...sonnet, output_per_mtok: "-1" }] }, /"output_per_mtok"/],
    [{ prices: [{ ...sonnet, cache_read_per_mtok: "0.0000000000001" }] }, /"cache_read_per_mtok"/],
    [{ prices: [{ ...sonnet, cache_write_per_mtok: undefined }] }, /"cache_write_per_mtok"/],
    [{ prices: [{ ...sonnet, from: "2026-02-01T10:30:00Z" }] }, /not a whole UTC hour/],
    [{ prices: [{ ...sonnet, from: "yesterday" }] }, /"from" "yesterday" is not a timestamp/],
    [{ prices: [{ ...sonnet, input_per_mtoken: "3" }] }, /unknown key "input_per_mtoken"/],
    [
      { prices: [sonnet, { ...sonnet, from: "2026-01-01T00:00:00Z" }, sonnet] },
      /row 2 .*same model and from as row 0/,
    ],
  ])("refuses %j naming the row", (json, message) => {
    expectRefusal(() => parsePriceTable(json), "INVALID_ARGUMENT", message);
  });

  it("reads from as a UTC hour with an offset and prices as exact 10^-12 units", () => {
    const t = parsePriceTable({ prices: [{ ...sonnet, from: "2026-02-01T12:00:00+02:00" }] });
    expect(t.rows[0]).toEqual({
      model: "sonnet",
      fromMs: H,
      currency: "USD",
      inputPerMTok: 3_000_000_000_000n,
      outputPerMTok: 15_000_000_000_000n,
      cacheReadPerMTok: 300_000_000_000n,
      cacheWritePerMTok: 3_750_000_000_000n,
    });
  });
});

describe("usage sums beyond uint64", () => {
  it("saturate at the largest uint64 instead of failing the answer's encoding", () => {
    const raw = emptyRaw();
    const huge = create(UsageSchema, { inputTokens: UINT64_MAX, outputTokens: UINT64_MAX });
    addMessage(raw, huge);
    addMessage(raw, huge);
    const t = totalsToProto(priceRaw(raw, "m", H, NO_PRICES));
    expect(t.inputTokens).toBe(UINT64_MAX);
    expect(t.outputTokens).toBe(UINT64_MAX);
    expect(t.messages).toBe(2n);
    expect(() => toBinary(UsageTotalsSchema, t)).not.toThrow();
  });
});
