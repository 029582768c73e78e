import { describe, expect, it } from "vitest";
import { BloomCache, type BloomRow } from "./bloom-cache.js";
import { BLOOM_BYTES } from "./search-bloom.js";

/** A filter with the bits `at` set (bit p: byte p >> 3, bit p & 7 from the low end). */
function bloom(...at: number[]): Buffer {
  const b = Buffer.alloc(BLOOM_BYTES);
  for (const p of at) b[p >>> 3] = (b[p >>> 3] as number) | (1 << (p & 7));
  return b;
}

describe("BloomCache", () => {
  it("finds the rows whose filter has every bit, and every row without a filter, after a seq", () => {
    const c = new BloomCache();
    const rows: BloomRow[] = [
      { seq: 2, bloom: bloom(1, 9, 2047) },
      { seq: 3, bloom: bloom(1) },
      { seq: 5, bloom: null },
      { seq: 7, bloom: bloom(9, 2047, 1) },
    ];
    const s = c.extend("w", "s", "1", undefined, rows, 7);
    expect(BloomCache.candidates(s, [1, 9, 2047], 0)).toEqual([2, 5, 7]);
    expect(BloomCache.candidates(s, [1, 9, 2047], 2)).toEqual([5, 7]);
    expect(BloomCache.candidates(s, [8], 0)).toEqual([5]);
    // Extended past what it covers: appended rows join.
    const more = c.extend("w", "s", "1", c.get("w", "s", "1"), [{ seq: 9, bloom: bloom(8) }], 9);
    expect(more.coveredSeq).toBe(9);
    expect(BloomCache.candidates(more, [8], 0)).toEqual([5, 9]);
  });

  it("drops a session's filters when its incarnation changes", () => {
    const c = new BloomCache();
    c.extend("w", "s", "1", undefined, [{ seq: 2, bloom: bloom(3) }], 2);
    expect(c.get("w", "s", "1")?.coveredSeq).toBe(2);
    expect(c.get("w", "s", "2")).toBeUndefined();
    expect(c.get("w", "s", "1")).toBeUndefined();
    expect(c.size).toBe(0);
  });

  it("holds at most its bound, dropping the least recently searched sessions first", () => {
    const c = new BloomCache(2.5 * BLOOM_BYTES);
    const one = (id: string) => c.extend("w", id, "1", undefined, [{ seq: 2, bloom: bloom(3) }], 2);
    one("a");
    one("b");
    expect(c.get("w", "a", "1")).toBeDefined(); // a searched after b
    one("c");
    expect(c.get("w", "b", "1")).toBeUndefined();
    expect(c.get("w", "a", "1")).toBeDefined();
    expect(c.get("w", "c", "1")).toBeDefined();
    expect(c.size).toBe(2 * BLOOM_BYTES);
  });
});
