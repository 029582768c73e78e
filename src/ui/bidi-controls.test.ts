import { describe, expect, it } from "vitest";
import { showBidiControls } from "./bidi-controls.js";

describe("bidi run controls", () => {
  it("an override, an embedding and an isolate show as their code points", () => {
    expect(showBidiControls("a\u202Eb\u202Ac\u2067d\u2069")).toBe(
      "a[U+202E]b[U+202A]c[U+2067]d[U+2069]",
    );
  });

  it("right-to-left text and its marks are left as they are", () => {
    const hebrew = "\u05E9\u05DC\u05D5\u05DD\u200F \u200E(1)";
    expect(showBidiControls(hebrew)).toBe(hebrew);
  });
});
