import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { growthFactor } from "./young-generation.js";

const MB = 2 ** 20;

/**
 * Runs a child process that makes 400,000 long-lived objects (survivors
 * that make V8 grow its young generation), 2,000 per turn of the event loop
 * as a server's calls come, and prints its largest semi-space, MB; `cap`
 * calls capYoungGeneration first.
 */
function largestSemiSpace(cap: number | undefined, nodeOptions: string[] = []): number {
  const module = JSON.stringify(new URL("./young-generation.ts", import.meta.url).pathname);
  const code = [
    `import { capYoungGeneration, currentSemiSpace } from ${module};`,
    cap === undefined ? "" : `capYoungGeneration(${cap});`,
    "const keep = []; let largest = 0;",
    "for (let r = 0; r < 200; r++) {",
    "  for (let i = 0; i < 2000; i++) keep.push({ i, pair: [i, i + 1], s: String(i) });",
    "  await new Promise((resolve) => setImmediate(resolve));",
    "  largest = Math.max(largest, currentSemiSpace());",
    "}",
    `console.log(largest / ${MB});`,
  ].join("\n");
  const out = execFileSync(
    process.execPath,
    [...nodeOptions, "--import", "tsx", "--input-type=module", "-e", code],
    { encoding: "utf8" },
  );
  return Number(out.trim());
}

describe("capYoungGeneration", () => {
  it("keeps the young generation of a process that keeps many objects at the cap", () => {
    expect(largestSemiSpace(undefined)).toBeGreaterThan(8);
    expect(largestSemiSpace(8)).toBeLessThanOrEqual(8);
  });

  it("leaves an operator's --max-semi-space-size alone", () => {
    expect(largestSemiSpace(8, ["--max-semi-space-size=16"])).toBeGreaterThan(8);
  });
});

describe("growthFactor", () => {
  it("lets one growth reach the cap but not pass it", () => {
    expect(growthFactor(8 * MB, 1 * MB)).toBe(8);
    expect(growthFactor(8 * MB, 2 * MB)).toBe(4);
    expect(growthFactor(8 * MB, 3 * MB)).toBe(2);
  });

  it("is 1 at or above the cap: no growth", () => {
    expect(growthFactor(8 * MB, 8 * MB)).toBe(1);
    expect(growthFactor(8 * MB, 16 * MB)).toBe(1);
  });
});
