import { setImmediate as immediate } from "node:timers/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { importLine, stdoutAtExit } from "../../../test/support/exit-child.js";
import { batchedLines } from "./log-batch.js";

/** Two turns of the event loop: a batch goes out in the turn after its lines were added. */
async function tick(): Promise<void> {
  await immediate();
  await immediate();
}

describe("batchedLines", () => {
  it("writes the lines of one turn of the event loop in one write, one line each, in order", async () => {
    const writes: string[] = [];
    const sink = batchedLines((chunk) => writes.push(chunk));
    sink('{"n":1}');
    sink('{"n":2}');
    sink('{"n":3}');
    expect(writes).toEqual([]);
    await tick();
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n']);
  });

  it("waits for the turn after the lines were added, so the writes scheduled in their turn go first", async () => {
    const writes: string[] = [];
    const sink = batchedLines((chunk) => writes.push(chunk));
    sink("a");
    await immediate();
    expect(writes).toEqual([]);
    await immediate();
    expect(writes).toEqual(["a\n"]);
  });

  it("writes a later turn's lines in a write of their own", async () => {
    const writes: string[] = [];
    const sink = batchedLines((chunk) => writes.push(chunk));
    sink("a");
    await tick();
    sink("b");
    await tick();
    expect(writes).toEqual(["a\n", "b\n"]);
  });

  it("writes a batch at once when it reaches the size limit, and the rest at the next turn", async () => {
    const writes: string[] = [];
    const sink = batchedLines((chunk) => writes.push(chunk), 10);
    sink("12345");
    sink("67890");
    expect(writes).toEqual(["12345\n67890\n"]);
    sink("x");
    await tick();
    expect(writes).toEqual(["12345\n67890\n", "x\n"]);
  });

  describe("with a spacing", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    /** A sink spaced by 10 ms on a clock the test moves (`at.ms`), with fake setTimeout. */
    function spaced() {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      const at = { ms: 1000 };
      const writes: string[] = [];
      const sink = batchedLines(
        (chunk) => writes.push(chunk),
        1024,
        10,
        () => at.ms,
      );
      return { at, writes, sink };
    }

    it("writes a quiet server's line at the next turn, as without one", async () => {
      const { writes, sink } = spaced();
      sink("a");
      await tick();
      expect(writes).toEqual(["a\n"]);
    });

    it("holds the lines of later turns until the spacing has passed since the last write, then writes them in one", async () => {
      const { at, writes, sink } = spaced();
      sink("a");
      await tick();
      at.ms += 3;
      sink("b");
      await tick();
      // "b" was due at 1003, 3 ms after "a": it waits the 7 ms left.
      at.ms += 3;
      vi.advanceTimersByTime(3);
      sink("c");
      await tick();
      expect(writes).toEqual(["a\n"]);
      at.ms += 4;
      vi.advanceTimersByTime(4);
      expect(writes).toEqual(["a\n", "b\nc\n"]);
      // Past the spacing: the next turn's line goes out at once.
      at.ms += 20;
      sink("d");
      await tick();
      expect(writes).toEqual(["a\n", "b\nc\n", "d\n"]);
    });

    it("still writes a held batch at once when it reaches the size limit", async () => {
      const { at, writes, sink } = spaced();
      sink("a");
      await tick();
      at.ms += 1;
      sink("b");
      await tick();
      sink("x".repeat(1100));
      expect(writes).toEqual(["a\n", `b\n${"x".repeat(1100)}\n`]);
      vi.advanceTimersByTime(20);
      expect(writes).toHaveLength(2);
    });
  });

  it("writes the waiting lines when the process exits in the same turn", () => {
    const out = stdoutAtExit([
      importLine("{ batchedLines }", new URL("./log-batch.ts", import.meta.url)),
      "const sink = batchedLines((chunk) => process.stdout.write(chunk));",
      "sink('first'); sink('last'); process.exit(3);",
    ]);
    expect(out).toBe("first\nlast\n");
  });

  it("writes lines held for the spacing when the process exits", () => {
    const out = stdoutAtExit([
      importLine("{ batchedLines }", new URL("./log-batch.ts", import.meta.url)),
      "const sink = batchedLines((chunk) => process.stdout.write(chunk), 1024, 60_000);",
      "sink('first');",
      "setImmediate(() => setImmediate(() => setImmediate(() => { sink('held'); setImmediate(() => setImmediate(() => setImmediate(() => process.exit(3)))); })));",
    ]);
    expect(out).toBe("first\nheld\n");
  });

  it("writes at once a line added at exit after the waiting lines went out (another exit listener's)", () => {
    const out = stdoutAtExit([
      importLine("{ batchedLines }", new URL("./log-batch.ts", import.meta.url)),
      "const sink = batchedLines((chunk) => process.stdout.write(chunk));",
      "sink('first');",
      "process.once('exit', () => sink('late'));",
      "process.exit(3);",
    ]);
    expect(out).toBe("first\nlate\n");
  });
});
