import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fromBase64Bytes } from "./base64-bytes.js";

describe("fromBase64Bytes", () => {
  it("decodes what toString('base64') made, at every length around the pieces' bounds", () => {
    // 64 KiB characters a piece = 49,152 bytes; lengths on, before and after
    // one and two bounds, and every padding (length mod 3).
    const piece = (64 * 1024 * 3) / 4;
    const lengths = [
      0,
      1,
      2,
      3,
      4,
      5,
      100,
      piece - 1,
      piece,
      piece + 1,
      piece + 2,
      2 * piece + 1,
      255_000,
    ];
    for (const n of lengths) {
      const bytes = randomBytes(n);
      const ascii = Buffer.from(bytes.toString("base64"), "latin1");
      const got = fromBase64Bytes(ascii);
      expect(got.length, `length ${n}`).toBe(n);
      expect(got.equals(bytes), `bytes of length ${n}`).toBe(true);
    }
  });

  it("reads a subarray of a larger buffer (the driver's message)", () => {
    const bytes = randomBytes(70_001);
    const text = bytes.toString("base64");
    const message = Buffer.concat([
      Buffer.from("xx\u0000"),
      Buffer.from(text, "latin1"),
      Buffer.from("yy"),
    ]);
    const inner = message.subarray(3, 3 + text.length);
    expect(fromBase64Bytes(inner).equals(bytes)).toBe(true);
  });
});
