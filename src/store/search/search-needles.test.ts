import { describe, expect, it } from "vitest";
import { needleOf, needlesOf } from "./search-needles.js";
import { fold } from "./search-text.js";

describe("needles", () => {
  it("a needle is the longest run of characters JSON keeps and nothing else folds to", () => {
    expect(needleOf("deploy")).toBe("deploy");
    expect(needleOf("kubernetes")).toBe("ubernete");
    expect(needleOf('say"hello\\world')).toBe("hello");
    expect(needleOf("\u00e9t\u00e9")).toBe("t");
    expect(needleOf("iks")).toBe("");
    expect(needleOf("function")).toBe("function");
    expect(needleOf("pi")).toBe("p");
    expect(needleOf("xiii-ab")).toBe("xiii-ab");
    expect(needleOf("abii")).toBe("ab");
    expect(needleOf("ab\u0307cd")).toBe("ab");
    expect(needleOf("abc\u00e9abcd")).toBe("abcd");
    expect(needleOf("a b")).toBe("a b");
  });

  it("words without such a run add no needle, and repeats are dropped", () => {
    expect(needlesOf(["ski", "deploy", "xdeploy", "deploy"])).toEqual(["deploy", "xdeploy"]);
    expect(needlesOf(["\u00e9\u00e9"])).toEqual([]);
  });

  it("no character outside printable ASCII folds to one a needle may hold", () => {
    const offenders: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (cp >= 0x20 && cp <= 0x7e) continue;
      if (needleOf(fold(c)) !== "") offenders.push(cp.toString(16));
    }
    expect(offenders).toEqual([]);
  });

  it("JSON writes every character a needle may hold as itself", () => {
    for (let cp = 0x20; cp <= 0x7e; cp++) {
      const c = String.fromCharCode(cp);
      if (needleOf(c) === c) expect(JSON.stringify(c)).toBe(`"${c}"`);
    }
    expect(needleOf('"')).toBe("");
    expect(needleOf("\\")).toBe("");
  });

  it("the letters other characters fold to are left out: k and s anywhere, i at the end of a run", () => {
    expect(needleOf("k")).toBe("");
    expect(needleOf("i")).toBe("");
    expect(needleOf("s")).toBe("");
    expect(needleOf("j")).toBe("j");
    expect(needleOf("ij")).toBe("ij");
    // A dotted capital I folds to "i" and a combining dot: a run ends there.
    expect(needleOf(fold("x\u0130y"))).toBe("x");
  });

  it("a needle is in the folded text of every text whose folded form holds the word", () => {
    for (const text of ["P\u0130", "\u212aernel", "\u017ftop", "FUNCTION", "x\u0130y"]) {
      const folded = fold(text);
      for (let a = 0; a < folded.length; a++) {
        for (let b = a + 1; b <= folded.length; b++) {
          const needle = needleOf(folded.slice(a, b));
          if (needle === "") continue;
          // Only ASCII bytes of the text itself may hold it (what the stored bytes show).
          expect(text.replace(/[A-Z]/g, (c) => c.toLowerCase())).toContain(needle);
        }
      }
    }
  });
});
