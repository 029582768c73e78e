import { fromBinary, fromJsonString, toBinary, toJsonString } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { GetEntriesResponseSchema } from "../../../gen/sessiond/v1/session_service_pb.js";
import { idsOf, ts, user, withSeq } from "../../../test/support/fixtures.js";
import { ENTRIES_RESERVE_BYTES, entriesResponse } from "./entries-response.js";

/** Entries of 1, 10, 100 ... KB of text (escapes and multi-byte UTF-8 in JSON too). */
function entries(sizes: number[]): Entry[] {
  return sizes.map((kb, i) =>
    withSeq(
      user(`e${i}`, 'é"x'.repeat((kb * 1024) / 4), { parentId: `p${i}`, timestamp: ts(i) }),
      i + 2,
    ),
  );
}

const codecs = [
  {
    name: "binary",
    json: false,
    encode: (r: ReturnType<typeof entriesResponse>) => toBinary(GetEntriesResponseSchema, r),
    decode: (b: Uint8Array) => fromBinary(GetEntriesResponseSchema, b),
  },
  {
    name: "JSON",
    json: true,
    encode: (r: ReturnType<typeof entriesResponse>) =>
      Buffer.from(toJsonString(GetEntriesResponseSchema, r)),
    decode: (b: Uint8Array) =>
      fromJsonString(GetEntriesResponseSchema, Buffer.from(b).toString("utf8")),
  },
];

describe.each(codecs)("entriesResponse, $name", ({ json, encode, decode }) => {
  const all = entries([10, 10, 40, 1, 1, 100, 3, 3, 3, 3]);

  it("sends every entry when they fit, as they are", () => {
    const bytes = encode(entriesResponse(all, 11, 10_000_000, json));
    const back = decode(bytes);
    expect(idsOf(back.entries)).toEqual(idsOf(all));
    expect(back.entries).toEqual(all.map((e) => ({ ...e })));
    expect(back.headSeq).toBe(11n);
  });

  for (const budget of [1, 15_000, 30_000, 60_000, 120_000, 200_000]) {
    it(`fills a page up to a budget of ${budget} bytes and never past it (one entry at least)`, () => {
      let from = 0;
      const read: string[] = [];
      while (from < all.length) {
        const bytes = encode(entriesResponse(all.slice(from), 11, budget, json));
        const page = decode(bytes).entries;
        expect(page.length).toBeGreaterThan(0);
        if (page.length > 1)
          expect(bytes.length).toBeLessThanOrEqual(budget + ENTRIES_RESERVE_BYTES);
        // Not cut short: one entry more would not have fitted.
        if (from + page.length < all.length) {
          const more = encode(entriesResponse(all.slice(from), 11, 1e9, json));
          const next = decode(more).entries.slice(0, page.length + 1);
          const larger = encode(entriesResponse(next, 11, 1e9, json)).length;
          expect(larger).toBeGreaterThan(budget - ENTRIES_RESERVE_BYTES);
        }
        read.push(...idsOf(page));
        from += page.length;
      }
      expect(read).toEqual(idsOf(all));
    });
  }
});
