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

  it("finds the same rows as testing each row's filter, across many rows added in several steps", () => {
    // A seeded generator: the same filters every run.
    let x = 12345;
    const random = () => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x / 2 ** 32;
    };
    const rows: BloomRow[] = [];
    for (let seq = 2; rows.length < 1000; seq += 1 + Math.floor(random() * 3)) {
      if (random() < 0.02) rows.push({ seq, bloom: null });
      else {
        const f = Buffer.alloc(BLOOM_BYTES);
        for (let i = 0; i < BLOOM_BYTES; i++)
          f[i] = Math.floor(random() * 256) & Math.floor(random() * 256);
        rows.push({ seq, bloom: f });
      }
    }
    const has = (r: BloomRow, bits: number[]) =>
      r.bloom === null ||
      bits.every((p) => ((r.bloom as Buffer)[p >>> 3] as number) & (1 << (p & 7)));
    const c = new BloomCache();
    let s = c.extend("w", "s", "1", undefined, rows.slice(0, 3), 10);
    for (let from = 3; from < rows.length; from += 97) {
      s = c.extend("w", "s", "1", c.get("w", "s", "1"), rows.slice(from, from + 97), 10 + from);
    }
    expect(s.seqs).toEqual(rows.map((r) => r.seq));
    for (let t = 0; t < 50; t++) {
      const bits = Array.from({ length: 1 + (t % 6) }, () => Math.floor(random() * 2048));
      const after = t % 3 === 0 ? 0 : (rows[Math.floor(random() * rows.length)] as BloomRow).seq;
      const expected = rows.filter((r) => r.seq > after && has(r, bits)).map((r) => r.seq);
      expect(BloomCache.candidates(s, bits, after)).toEqual(expected);
    }
  });

  it("holds at most its bound, dropping the least recently searched sessions first", () => {
    // A session of one row holds planes of one byte: BLOOM_BYTES * 8 bytes.
    const c = new BloomCache(2.5 * 8 * BLOOM_BYTES);
    const one = (id: string) => c.extend("w", id, "1", undefined, [{ seq: 2, bloom: bloom(3) }], 2);
    one("a");
    one("b");
    expect(c.get("w", "a", "1")).toBeDefined(); // a searched after b
    one("c");
    expect(c.get("w", "b", "1")).toBeUndefined();
    expect(c.get("w", "a", "1")).toBeDefined();
    expect(c.get("w", "c", "1")).toBeDefined();
    expect(c.size).toBe(2 * 8 * BLOOM_BYTES);
  });
});
