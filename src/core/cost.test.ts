import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CostSchema } from "../../gen/sessiond/v1/entry_pb.js";
import { amountUnits, costProblem, formatUnits } from "./cost.js";

const cost = (amount: string, currency: string) => create(CostSchema, { amount, currency });

describe("cost", () => {
  it("accepts decimals with up to 12 fraction digits and ISO codes", () => {
    expect(costProblem(cost("0", "USD"))).toBeUndefined();
    expect(costProblem(cost("12.000000000001", "EUR"))).toBeUndefined();
  });

  it.each([
    ["", "USD"],
    ["-1", "USD"],
    ["1.", "USD"],
    [".5", "USD"],
    ["01", "USD"],
    ["1e3", "USD"],
    ["0.0000000000001", "USD"],
    ["1", "usd"],
    ["1", ""],
    ["1", "USDT"],
  ])("refuses amount %j currency %j", (amount, currency) => {
    expect(costProblem(cost(amount, currency))).toMatch(/usage\.cost\.(amount|currency)/);
  });

  it("adds exactly where binary floating point does not", () => {
    const sum = ["0.1", "0.2", "0.000000000001"].map(amountUnits).reduce((a, b) => a + b, 0n);
    expect(formatUnits(sum)).toBe("0.300000000001");
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(formatUnits(amountUnits("3.50"))).toBe("3.5");
    expect(formatUnits(0n)).toBe("0");
    expect(formatUnits(amountUnits("123456789012345678.999999999999"))).toBe(
      "123456789012345678.999999999999",
    );
  });
});
