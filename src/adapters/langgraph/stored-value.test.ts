import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  againstBase,
  bytesOf,
  commonStart,
  materialize,
  type StoredValue,
  storedBytes,
  storedJson,
  storedOf,
  utf8Length,
} from "./stored-value.js";

const encoder = new TextEncoder();

/** A chain of versions, each kept against the one before as the saver keeps them. */
function keep(texts: string[]): { stored: StoredValue[]; source: (i: number) => string } {
  const stored: StoredValue[] = [];
  texts.forEach((text, i) => {
    const whole = storedBytes("json", encoder.encode(text));
    stored.push(i === 0 ? whole : againstBase(whole, String(i - 1), texts[i - 1]));
  });
  const source = {
    version: (v: string) => stored[Number(v)],
    carried: () => undefined,
  };
  return { stored, source: (i) => materialize(stored[i] as StoredValue, source) };
}

describe("stored values", () => {
  it("every version of a chain of edits reads back exactly (surrogate pairs included)", () => {
    const edit = fc.record({
      cut: fc.nat(),
      add: fc.string({ unit: "grapheme", maxLength: 80 }),
    });
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 0, maxLength: 200 }),
        fc.array(edit, { maxLength: 12 }),
        (start, edits) => {
          const texts = [start.repeat(2)];
          for (const { cut, add } of edits) {
            const prev = texts[texts.length - 1] as string;
            const chars = [...prev];
            texts.push(chars.slice(0, cut % (chars.length + 1)).join("") + add + add);
          }
          const { stored, source } = keep(texts);
          texts.forEach((t, i) => {
            expect(source(i)).toBe(t);
            // What an entry holds is valid UTF-8: no tail starts or ends inside a pair.
            const d = stored[i]?.d ?? "";
            expect(new TextDecoder().decode(encoder.encode(d))).toBe(d);
            expect(storedOf(storedJson(stored[i] as StoredValue))).toEqual(stored[i]);
          });
        },
      ),
    );
  });

  it("a list that grew by an item keeps the list before it and stores the item", () => {
    const before = JSON.stringify(
      Array.from({ length: 20 }, (_, i) => ({ n: i, text: "x".repeat(40) })),
    );
    const after = `${before.slice(0, -1)},{"n":20,"text":"new"}]`;
    const v = againstBase(storedBytes("json", encoder.encode(after)), "c1", before);
    expect(v).toEqual({
      t: "json",
      base: "c1",
      keep: before.length - 1,
      d: ',{"n":20,"text":"new"}]',
    });
  });

  it("a value unlike its base is kept whole", () => {
    const v = againstBase(
      storedBytes("json", encoder.encode(`"${"b".repeat(100)}"`)),
      "c1",
      `"${"a".repeat(100)}"`,
    );
    expect(v.base).toBeUndefined();
  });

  it("bytes that are not UTF-8 are kept as base64 and read back", () => {
    const bytes = new Uint8Array([0xff, 0x00, 0xc3, 0x28]);
    const v = storedBytes("bytes", bytes);
    expect(v.b64).toBe(true);
    expect(bytesOf(v, v.d ?? "")).toEqual(bytes);
  });

  it("the common start never ends between the halves of a surrogate pair", () => {
    expect(commonStart("ab\u{1F9F5}", "ab\u{1F9F6}")).toBe(2);
    expect(utf8Length("a\u{1F9F5}é")).toBe(encoder.encode("a\u{1F9F5}é").length);
  });
});
