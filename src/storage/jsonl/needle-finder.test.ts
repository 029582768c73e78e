import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NeedleFinder } from "./needle-finder.js";

/** Every start of `needle` in `text`, ASCII case ignored: the finder's answers written naively. */
function starts(text: string, needle: string): number[] {
  const lower = text.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const out: number[] = [];
  for (let i = lower.indexOf(needle); i !== -1; i = lower.indexOf(needle, i + 1)) out.push(i);
  return out;
}

describe("NeedleFinder", () => {
  it("finds each occurrence, case ignored, for any sequence of rising starting points", () => {
    const text = fc
      .array(fc.constantFrom("a", "A", "b", "B", "q", "Q", "-", "\n", "é"), { maxLength: 80 })
      .map((a) => a.join(""));
    const needle = fc
      .array(fc.constantFrom("a", "b", "q", "-"), { minLength: 1, maxLength: 5 })
      .map((a) => a.join(""));
    const froms = fc.array(fc.nat(90), { maxLength: 12 }).map((a) => a.sort((x, y) => x - y));
    fc.assert(
      fc.property(text, needle, froms, (t, n, fs) => {
        const buf = Buffer.from(t, "latin1");
        const all = starts(t, n);
        const finder = new NeedleFinder(n);
        finder.reset(buf);
        for (const from of fs) {
          expect(finder.next(from)).toBe(all.find((s) => s >= from) ?? -1);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("reset starts over on other bytes", () => {
    const finder = new NeedleFinder("abc");
    finder.reset(Buffer.from("xxABCxx"));
    expect(finder.next(0)).toBe(2);
    expect(finder.next(3)).toBe(-1);
    finder.reset(Buffer.from("abc"));
    expect(finder.next(0)).toBe(0);
  });

  it("never reports a match running past the end of the bytes it was given", () => {
    const bytes = Buffer.from("xxab|cd");
    const finder = new NeedleFinder("abcd");
    finder.reset(bytes.subarray(0, 4));
    expect(finder.next(0)).toBe(-1);
    const whole = new NeedleFinder("xab");
    whole.reset(Buffer.from("zzXAB").subarray(0, 4));
    expect(whole.next(0)).toBe(-1);
  });

  it("within tells whether the needle starts and ends inside a range", () => {
    const finder = new NeedleFinder("needle");
    finder.reset(Buffer.from("{a}{NEEDLE}{b}"));
    expect(finder.within(0, 3)).toBe(false);
    expect(finder.within(3, 11)).toBe(true);
    expect(finder.within(11, 14)).toBe(false);
  });

  it("the share of records holding a needle grows with what it is found in", () => {
    const common = new NeedleFinder("commonword");
    const rare = new NeedleFinder("rareword");
    const before = common.heldShare;
    common.reset(Buffer.from("commonword commonword"));
    rare.reset(Buffer.from("commonword commonword"));
    expect(common.within(0, 10)).toBe(true);
    expect(rare.within(0, 10)).toBe(false);
    expect(common.heldShare).toBeGreaterThan(before);
    expect(rare.heldShare).toBeLessThan(common.heldShare);
  });
});
