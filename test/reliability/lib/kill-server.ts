/**
 * Starting `sessiond serve` for the kill tests (T1, T4), with a second and
 * third attempt when a start fails: a start failure is not a durability
 * violation in itself (on a shared machine it can be a concurrent
 * `npm run build` rewriting dist/ under the starting process), so it is
 * logged and counted, and only a server that fails three times in a row
 * ends the test (as "the test itself failed", with the server's output).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type SessiondProcess, type StartOptions, startSessiond } from "../../harness/server.js";

export interface StartCounter {
  /** Failed start attempts that were followed by another attempt. */
  failedStarts: number;
}

export async function startWithRetry(
  opts: StartOptions,
  counter: StartCounter,
  log: (line: string) => void,
): Promise<SessiondProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSessiond(opts);
    } catch (err) {
      if (attempt >= 3) throw err;
      counter.failedStarts++;
      const first = String((err as Error).message ?? err)
        .split("\n")
        .filter((l) => l.trim() !== "")
        .slice(0, 6)
        .join(" | ");
      log(`server start failed (attempt ${attempt}), trying again: ${first}`);
      await sleep(2_000);
    }
  }
}
