import { invalidArgument } from "../../core/errors.js";

/** uint64 seqs from the wire as JS numbers; beyond 2^53 no log can reach, so reject. */
export function seqArg(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER))
    throw invalidArgument(`${what} ${value} is out of range`);
  return Number(value);
}
