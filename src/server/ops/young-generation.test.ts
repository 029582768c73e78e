import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BusyClock, growthFactor } from "./young-generation.js";

const MB = 2 ** 20;

/**
 * Runs a child process that makes 400,000 long-lived objects (survivors
 * that make V8 grow its young generation), 2,000 per turn of the event loop
 * as a server's calls come, and prints its largest semi-space, MB; `cap`
 * calls capYoungGeneration first.
 */
function largestSemiSpace(
  cap: number | undefined,
  nodeOptions: string[] = [],
  busy = false,
): number {
  const module = JSON.stringify(new URL("./young-generation.ts", import.meta.url).pathname);
  const code = [
    `import { capYoungGeneration, currentSemiSpace, SERVE_BUSY_LOAD } from ${module};`,
    cap === undefined
      ? ""
      : `capYoungGeneration(${cap}, undefined, ${busy ? "SERVE_BUSY_LOAD" : "undefined"});`,
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

/**
 * A child process under sustained load as 64 appends in flight make it:
 * every turn makes ~100 KB of garbage and one "call" of ~20 KB that stays
 * alive for the next 64 turns. Prints the largest semi-space (MB) once it
 * passes 8 MB, or after 5 s. With `busy`, sustained means 0.5 s here
 * (SERVE_BUSY_LOAD's 3 s would make a slow test).
 */
function largestSemiSpaceUnderLoad(cap: number, busy: boolean): number {
  const module = JSON.stringify(new URL("./young-generation.ts", import.meta.url).pathname);
  const code = [
    `import { capYoungGeneration, currentSemiSpace } from ${module};`,
    `capYoungGeneration(${cap}, undefined, ${busy ? "{ semiSpaceMb: 16, afterMs: 500, gapMs: 1000 }" : "undefined"});`,
    "const inFlight = new Array(64); let largest = 0; const start = Date.now();",
    "for (let r = 0; Date.now() - start < 5000; r++) {",
    "  let garbage = []; for (let i = 0; i < 1000; i++) garbage.push({ i, s: String(i) });",
    "  const call = []; for (let i = 0; i < 200; i++) call.push({ i, a: [i, i] });",
    "  inFlight[r % 64] = call;",
    "  await new Promise((resolve) => setImmediate(resolve));",
    "  largest = Math.max(largest, currentSemiSpace());",
    `  if (largest > ${8 * MB}) break;`,
    "}",
    `console.log(largest / ${MB});`,
  ].join("\n");
  const out = execFileSync(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", code],
    {
      encoding: "utf8",
    },
  );
  return Number(out.trim());
}

describe("capYoungGeneration", () => {
  it("keeps the young generation of a process that keeps many objects at the cap", () => {
    expect(largestSemiSpace(undefined)).toBeGreaterThan(8);
    expect(largestSemiSpace(8)).toBeLessThanOrEqual(8);
  });

  it("keeps it at the cap for a burst of long-lived objects also when it may grow under sustained load", () => {
    expect(largestSemiSpace(8, [], true)).toBeLessThanOrEqual(8);
  });

  it("lets it grow past the cap under sustained load with a BusyLoad, not without", () => {
    expect(largestSemiSpaceUnderLoad(8, true)).toBeGreaterThan(8);
    expect(largestSemiSpaceUnderLoad(8, false)).toBeLessThanOrEqual(8);
  }, 60_000);

  it("leaves an operator's --max-semi-space-size alone", () => {
    expect(largestSemiSpace(8, ["--max-semi-space-size=16"])).toBeGreaterThan(8);
  });
});

describe("BusyClock", () => {
  const load = { semiSpaceMb: 16, afterMs: 3000, gapMs: 1000 };

  it("is busy once collections at most gapMs apart have gone on for afterMs, while the last is recent", () => {
    const c = new BusyClock(load);
    for (let t = 0; t < 3000; t += 500) c.minor(t);
    expect(c.busyAt(2600)).toBe(false);
    c.minor(3000);
    expect(c.busyAt(3000)).toBe(true);
    expect(c.busyAt(4000)).toBe(true);
    expect(c.busyAt(4001)).toBe(false);
  });

  it("starts over after a gap longer than gapMs", () => {
    const c = new BusyClock(load);
    for (let t = 0; t <= 3000; t += 500) c.minor(t);
    c.minor(4500);
    expect(c.busyAt(4500)).toBe(false);
    for (let t = 5000; t <= 7500; t += 500) c.minor(t);
    expect(c.busyAt(7500)).toBe(true);
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
