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

  it("upper-case letters fold before they get here, and the three letters other characters fold to are left out", () => {
    expect(needleOf("k")).toBe("");
    expect(needleOf("i")).toBe("");
    expect(needleOf("s")).toBe("");
    expect(needleOf("j")).toBe("j");
  });
});
