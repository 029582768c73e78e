import { setImmediate as immediate } from "node:timers/promises";
import { describe, expect, it } from "vitest";
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

  it("writes the waiting lines when the process exits in the same turn", () => {
    const out = stdoutAtExit([
      importLine("{ batchedLines }", new URL("./log-batch.ts", import.meta.url)),
      "const sink = batchedLines((chunk) => process.stdout.write(chunk));",
      "sink('first'); sink('last'); process.exit(3);",
    ]);
    expect(out).toBe("first\nlast\n");
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
