/**
 * Exact money for usage roll-ups (Usage.cost, UsageTotals.cost). Amounts
 * travel as decimal strings so that no sum is rounded: they are added here
 * as integers of 10^-12 units (BigInt), the finest amount the contract
 * allows (at most 12 fraction digits), and written back without trailing
 * zeros. No library: the whole need is parse / add / format of one fixed
 * scale, which BigInt does exactly.
 */
import type { Cost } from "../../gen/sessiond/v1/entry_pb.js";

/** Fraction digits the contract allows in an amount. */
export const COST_SCALE_DIGITS = 12;
const SCALE = 10n ** BigInt(COST_SCALE_DIGITS);
const AMOUNT = /^(0|[1-9][0-9]{0,17})(?:\.([0-9]{1,12}))?$/;
const CURRENCY = /^[A-Z]{3}$/;

/** What is wrong with a caller's cost, if anything (for INVALID_ARGUMENT). */
export function costProblem(c: Cost): string | undefined {
  if (!AMOUNT.test(c.amount)) {
    return `usage.cost.amount ${JSON.stringify(c.amount.slice(0, 40))} is not a decimal like "0.0123" (at most 18 integer and 12 fraction digits)`;
  }
  if (!CURRENCY.test(c.currency)) {
    return `usage.cost.currency ${JSON.stringify(c.currency.slice(0, 16))} is not an ISO 4217 code like "USD"`;
  }
  return undefined;
}

/** An amount (already checked by costProblem) in 10^-12 units. */
export function amountUnits(amount: string): bigint {
  const m = AMOUNT.exec(amount);
  if (m === null) throw new RangeError(`not a decimal amount: ${amount}`);
  const frac = (m[2] ?? "").padEnd(COST_SCALE_DIGITS, "0");
  return BigInt(m[1] as string) * SCALE + BigInt(frac);
}

/** 10^-12 units as a decimal string without trailing zeros ("0" for zero). */
export function formatUnits(units: bigint): string {
  const whole = units / SCALE;
  const frac = (units % SCALE).toString().padStart(COST_SCALE_DIGITS, "0").replace(/0+$/, "");
  return frac === "" ? whole.toString() : `${whole}.${frac}`;
}
