import { describe, expect, it } from "vitest";
import { terminalLine, terminalLines } from "./terminal-text.js";

describe("terminalLine", () => {
  it("makes an SGR colour sequence visible instead of passing the ESC through", () => {
    expect(terminalLine("\x1b[31mred\x1b[0m")).toBe("\\x1b[31mred\\x1b[0m");
  });

  it("makes an OSC window-title sequence visible, BEL included", () => {
    expect(terminalLine("\x1b]0;owned\x07after")).toBe("\\x1b]0;owned\\x07after");
  });

  it("makes NUL, CR, DEL and 8-bit C1 controls visible", () => {
    expect(terminalLine("a\0b\rc\x7fd\x9b2Je")).toBe("a\\x00b\\rc\\x7fd\\x9b2Je");
  });

  it("keeps a line one line: tab and newline become \\t and \\n", () => {
    expect(terminalLine("a\tb\nc")).toBe("a\\tb\\nc");
  });

  it("makes line separators and bidi overrides visible, keeps implicit marks", () => {
    expect(terminalLine("x\u2028y\u2029z")).toBe("x\\u2028y\\u2029z");
    expect(terminalLine("ok\u202eevil\u202c \u2066iso\u2069")).toBe(
      "ok\\u202eevil\\u202c \\u2066iso\\u2069",
    );
    expect(terminalLine("\u05e9\u200f\u200e")).toBe("\u05e9\u200f\u200e");
  });

  it("leaves printable text, backslashes and non-Latin scripts alone", () => {
    const text = 'C:\\path "quoted" ünïcödé 中文 🙂 ├─ │';
    expect(terminalLine(text)).toBe(text);
  });
});

describe("terminalLines", () => {
  it("splits at LF and CRLF and keeps tabs for indentation", () => {
    expect(terminalLines("one\r\n\ttwo\nthree")).toEqual(["one", "\ttwo", "three"]);
  });

  it("escapes controls inside each line", () => {
    expect(terminalLines("\x1b[2Jcleared\nbell\x07")).toEqual(["\\x1b[2Jcleared", "bell\\x07"]);
  });
});
