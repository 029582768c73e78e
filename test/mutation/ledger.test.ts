import { describe, expect, it } from "vitest";
import { filesToMutate, type Ledger, recorded } from "./ledger.js";
import type { Tally } from "./report.js";

const entry = (blob: string) => ({ blob, date: "2026-12-07", result: "1 / 0 / 0 / 0 / 0" });
const hashes: Record<string, string> = { "a.ts": "A2", "b.ts": "B1", "c.ts": "C1", "d.ts": "D1" };
const hashOf = (file: string) => hashes[file];

describe("quick mode's files, with the ledger of passing runs", () => {
  it("runs what changed since the base and what moved on since its run on record, not what is on record as it is", () => {
    const ledger: Ledger = {
      "a.ts": entry("A1"), // on record, changed since: run although the last commit did not touch it
      "b.ts": entry("B1"), // on record as it is, and changed since the base: vouched, not run
      "c.ts": entry("C1"), // on record as it is, untouched: not run
      "gone.ts": entry("G1"), // deleted since: nothing to run
    };
    expect(filesToMutate(["b.ts", "d.ts"], ledger, hashOf)).toEqual({
      run: ["a.ts", "d.ts"],
      vouched: ["b.ts"],
    });
  });

  it("without a ledger, what changed since the base (as before)", () => {
    expect(filesToMutate(["d.ts", "c.ts"], {}, hashOf)).toEqual({
      run: ["c.ts", "d.ts"],
      vouched: [],
    });
    expect(filesToMutate([], {}, hashOf)).toEqual({ run: [], vouched: [] });
  });
});

describe("recording a passing run", () => {
  it("records each file with the content it was run on, the day and its counts; keeps the others", () => {
    const t: Tally = {
      killed: 10,
      survived: 0,
      timeout: 2,
      noCoverage: 0,
      ignored: 3,
      staticNotRun: 0,
      errors: 0,
    };
    const before: Ledger = { "c.ts": entry("C0"), "x.ts": entry("X1") };
    const after = recorded(
      before,
      new Map([
        ["c.ts", t],
        ["gone.ts", t],
      ]),
      hashOf,
      "2026-12-08",
    );
    expect(after).toEqual({
      "c.ts": { blob: "C1", date: "2026-12-08", result: "10 / 0 / 2 / 0 / 3" },
      "x.ts": entry("X1"),
    });
    expect(before["c.ts"]?.blob).toBe("C0");
  });
});
