import { describe, expect, it } from "vitest";
import { SNIPPET_CHARS, snippet } from "./snippet.js";

const words = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `w${from + i}`).join(" ");

describe("snippet", () => {
  it("a short text is shown whole, white space collapsed", () => {
    expect(snippet("  one\n\ttwo   three ", ["two"])).toBe("one two three");
  });

  it("a text of exactly the snippet's length is not cut", () => {
    const text = "x".repeat(SNIPPET_CHARS);
    expect(snippet(text, ["x"])).toBe(text);
  });

  it("a long text is cut around the first match, with … on both sides, between words", () => {
    const text = `${words(100)} NEEDLE ${words(100, 100)}`;
    const s = snippet(text, ["needle"]);
    expect(s.startsWith("…")).toBe(true);
    expect(s.endsWith("…")).toBe(true);
    expect(s).toContain("NEEDLE");
    expect(s.length).toBeLessThanOrEqual(SNIPPET_CHARS + 2);
    expect(s.length).toBeGreaterThan(SNIPPET_CHARS - 30);
    // Cut at spaces: the first and last words are whole words of the text.
    const inner = s.slice(1, -1).split(" ");
    for (const w of inner) expect(text.split(" ")).toContain(w);
    // About a third of the budget before the match.
    expect(s.indexOf("NEEDLE")).toBeGreaterThan(30);
    expect(s.indexOf("NEEDLE")).toBeLessThan(60);
  });

  it("a match near the start shows the start without …", () => {
    const s = snippet(`NEEDLE ${words(200)}`, ["needle"]);
    expect(s.startsWith("NEEDLE")).toBe(true);
    expect(s.endsWith("…")).toBe(true);
  });

  it("a match near the end shows the end without …", () => {
    const s = snippet(`${words(200)} NEEDLE`, ["needle"]);
    expect(s.startsWith("…")).toBe(true);
    expect(s.endsWith("NEEDLE")).toBe(true);
  });

  it("the earliest match of any word is the one shown", () => {
    const text = `${words(100)} late ${words(100, 100)} later early`;
    expect(snippet(text, ["early", "late"])).toContain("late w100");
  });

  it("finds the match when folding lengthens the text before it (İ folds to two characters)", () => {
    const text = `${"\u0130".repeat(120)} ${words(20)} NEEDLE ${words(100, 100)}`;
    const s = snippet(text, ["needle"]);
    expect(s).toContain("NEEDLE");
    expect(s.startsWith("…")).toBe(true);
  });

  it("a match of a word that folding lengthens maps back to the text", () => {
    const text = `${words(100)} x\u0130y ${words(100, 100)}`;
    expect(snippet(text, ["xi\u0307y"])).toContain("x\u0130y");
  });

  it("never cuts a character in two", () => {
    const text = "😀".repeat(300);
    const s = snippet(text, ["zzz"]);
    expect(s.endsWith("…")).toBe(true);
    expect(s.slice(0, -1)).toBe("😀".repeat((s.length - 1) / 2));
    const shifted = snippet(`a${"😀".repeat(100)}NEEDLE${"😀".repeat(100)}`, ["needle"]);
    expect(shifted.startsWith("…")).toBe(true);
    expect([...shifted.slice(1, -1)].every((c) => c === "😀" || /[A-Z]/.test(c))).toBe(true);
  });

  it("a word longer than the snippet is shown whole", () => {
    const long = "y".repeat(300);
    const s = snippet(`${words(50)} ${long} ${words(50, 50)}`, [long]);
    expect(s).toContain(long);
  });

  it("no match (a word found only after folding the whole text) shows the start", () => {
    const s = snippet(words(200), ["nothing"]);
    expect(s.startsWith("w0 w1")).toBe(true);
    expect(s.endsWith("…")).toBe(true);
  });
});
