import { describe, expect, it } from "vitest";
import { fold } from "./search-text.js";
import { SNIPPET_CHARS, snippet } from "./snippet.js";

/** "w000 w001 …": word k starts at 5k (plus whatever comes before it). */
const words = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `w${String(from + i).padStart(3, "0")}`).join(" ");
const cut = (text: string, query: string) => snippet(text, [fold(query)]);

describe("snippet", () => {
  it("a short text is shown whole, white space collapsed", () => {
    expect(cut("  one\n\ttwo   three ", "two")).toBe("one two three");
  });

  it("a text of exactly the snippet's length is not cut; one more character is", () => {
    expect(SNIPPET_CHARS).toBe(160);
    expect(cut("x".repeat(160), "x")).toBe("x".repeat(160));
    expect(cut("x".repeat(161), "x")).toBe(`${"x".repeat(160)}…`);
  });

  it("a long text is cut 50 characters before the match, 160 in all, with … on both sides", () => {
    const text = `${words(100)} NEEDLE ${words(100, 100)}`;
    expect(cut(text, "needle")).toBe(`…${words(10, 90)} NEEDLE ${words(20, 100)}…`);
  });

  it("a cut inside a word moves to the space nearby, at either end", () => {
    const text = `${words(100)} NEEDLE ${words(100, 100)}`;
    // "dle" is at 503: the start falls inside w090, the end inside w121.
    expect(cut(text, "dle")).toBe(`…${words(9, 91)} NEEDLE ${words(21, 100)}…`);
  });

  it("a cut moves to a space 14 characters away, not to one 15 away", () => {
    const near = `${"x".repeat(265)} ${"z".repeat(34)} NEEDLE ${"y".repeat(300)}`;
    expect(cut(near, "needle").slice(0, 38)).toBe(`…${"z".repeat(34)} NE`);
    const far = `${"x".repeat(266)} ${"z".repeat(33)} NEEDLE ${"y".repeat(300)}`;
    expect(cut(far, "needle").slice(0, 18)).toBe(`…x${"x".repeat(14)} z`);
    const nearEnd = `${"x".repeat(300)} NEEDLE ${"y".repeat(89)} ${"w".repeat(100)}`;
    expect(cut(nearEnd, "needle").endsWith(`${"y".repeat(89)}…`)).toBe(true);
    const farEnd = `${"x".repeat(300)} NEEDLE ${"y".repeat(88)} ${"w".repeat(100)}`;
    expect(cut(farEnd, "needle").endsWith(` ${"w".repeat(14)}…`)).toBe(true);
  });

  it("no space nearby: the cut stays inside the word", () => {
    const text = `${"x".repeat(300)} NEEDLE ${"y".repeat(300)}`;
    expect(cut(text, "needle")).toBe(`…${"x".repeat(49)} NEEDLE ${"y".repeat(103)}…`);
  });

  it("a match near the start shows the start without …", () => {
    expect(cut(`NEEDLE ${words(200)}`, "needle")).toBe(
      `NEEDLE ${words(30)} w030…`.replace(" w030…", "…"),
    );
  });

  it("a match near the end shows the last 160 characters (from the next whole word)", () => {
    const text = `${words(200)} NEEDLE`;
    expect(cut(text, "needle")).toBe(`…${words(30, 170)} NEEDLE`);
  });

  it("the earliest match of any word is the one shown, whatever the order of the words", () => {
    const text = `${words(100)} late ${words(100, 100)} later early`;
    const shown = `…${words(10, 90)} late ${words(21, 100)}…`;
    expect(snippet(text, ["early", "late"])).toBe(shown);
    expect(snippet(text, ["late", "early"])).toBe(shown);
    expect(snippet(text, ["late", "absent"])).toBe(shown);
  });

  it("a long word found at the second character is shown whole", () => {
    const long = "y".repeat(300);
    expect(cut(`a${long} ${words(10)}`, long)).toBe(`a${long}…`);
  });

  it("a long word inside a longer one ends the snippet where the match ends", () => {
    const long = "y".repeat(200);
    expect(cut(`${"a".repeat(10)} ${long}bbbb ${words(10)}`, long)).toBe(
      `${"a".repeat(10)} ${long}…`,
    );
  });

  it("the end moves back to the space right after a long match", () => {
    const long = "y".repeat(105);
    const text = `${words(20)} ${long} ${"b".repeat(200)}`;
    expect(cut(text, long)).toBe(`…${words(10, 10)} ${long}…`);
  });

  it("a short word after a match at the end of the text is kept, without …", () => {
    const text = `${words(200)} NEEDLE abc`;
    expect(cut(text, "needle")).toBe(`…${words(30, 170)} NEEDLE abc`);
  });

  it("finds the match when folding lengthens the text before it (İ folds to two characters)", () => {
    const text = `${"\u0130".repeat(200)} NEEDLE ${"x".repeat(200)}`;
    expect(cut(text, "needle")).toBe(`…${"\u0130".repeat(49)} NEEDLE ${"x".repeat(103)}…`);
  });

  it("a match of a word that folding lengthens maps back to the text", () => {
    const text = `${"a".repeat(200)} x\u0130y ${"b".repeat(200)}`;
    expect(cut(text, "x\u0130y")).toBe(`…${"a".repeat(49)} x\u0130y ${"b".repeat(106)}…`);
  });

  it("a long word found after a lengthening fold ends where it ends in the text", () => {
    const long = `\u0130${"y".repeat(299)}`;
    expect(cut(`${"a".repeat(10)} ${long} ${"b".repeat(50)}`, long)).toBe(
      `${"a".repeat(10)} ${long}…`,
    );
  });

  it("cuts at the edges of the surrogate range but not outside it", () => {
    const rat = "\u{1f400}"; // low surrogate DC00
    expect(cut(`a${rat.repeat(300)}`, "zzz")).toBe(`a${rat.repeat(79)}…`);
    const last = "\u{1f7ff}"; // low surrogate DFFF
    expect(cut(`a${last.repeat(300)}`, "zzz")).toBe(`a${last.repeat(79)}…`);
    const wide = "\uff21"; // above the surrogates, one unit
    expect(cut(wide.repeat(300), "zzz")).toBe(`${wide.repeat(160)}…`);
  });

  it("never cuts a character in two, at either end", () => {
    const text = `${"😀".repeat(100)}NEEDLE${"😀".repeat(100)}`;
    expect(cut(text, "eedle")).toBe(`…${"😀".repeat(25)}NEEDLE${"😀".repeat(52)}…`);
    expect(cut(`a${"😀".repeat(300)}`, "zzz")).toBe(`a${"😀".repeat(79)}…`);
  });

  it("a word longer than the snippet is shown whole", () => {
    const long = "y".repeat(300);
    expect(cut(`${words(50)} ${long} ${words(50, 50)}`, long)).toBe(`…${words(10, 40)} ${long}…`);
  });

  it("no match shows the start", () => {
    expect(cut(words(200), "nothing")).toBe(`${words(32)}…`);
  });
});
