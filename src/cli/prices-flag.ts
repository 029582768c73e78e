import { readFileSync } from "node:fs";
import { type PriceTable, parsePriceTable } from "../core/usage-sums.js";
import { CliError } from "./command.js";

/**
 * `serve --prices FILE`: the operator's price table, read and checked
 * before the server starts, so that a bad row stops it naming the row.
 */
export function priceTableOf(path: string): PriceTable {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new CliError(
      `--prices: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CliError(`--prices: ${path} is not JSON: ${(err as Error).message}`);
  }
  try {
    return parsePriceTable(json);
  } catch (err) {
    throw new CliError(`--prices: ${path}: ${(err as Error).message}`);
  }
}
