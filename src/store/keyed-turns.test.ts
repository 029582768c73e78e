import { describe, expect, it } from "vitest";
import { KeyedTurns } from "./keyed-turns.js";

/** A promise with its resolve and reject at hand. */
function gate<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("KeyedTurns", () => {
  it("runs one key's work in order, after a failure too; other keys do not wait; keys are forgotten", async () => {
    const turns = new KeyedTurns();
    const log: string[] = [];
    const first = gate();
    const a1 = turns.run("a", async () => {
      log.push("a1 start");
      await first.promise;
      log.push("a1 end");
      throw new Error("a1 failed");
    });
    const a2 = turns.run("a", async () => {
      log.push("a2");
      return 2;
    });
    const b1 = turns.run("b", async () => {
      log.push("b1");
      return "b";
    });
    expect(await b1).toBe("b");
    expect(log).toEqual(["a1 start", "b1"]);
    expect(turns.size).toBe(1);
    first.resolve();
    await expect(a1).rejects.toThrow("a1 failed");
    expect(await a2).toBe(2);
    expect(log).toEqual(["a1 start", "b1", "a1 end", "a2"]);
    await new Promise((r) => setImmediate(r));
    expect(turns.size).toBe(0);
  });
});
