import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { WS } from "../../../test/support/jsonl/fixtures.js";
import { SAVED_FILES as files, plain } from "../../../test/support/jsonl/listing-index-fixtures.js";
import { decodeIndex, encodeIndex } from "./listing-index-codec.js";

/** The index file's format: what is written is read back, and nothing else is. */

/** An index with a valid header and CRC around `tuples` (what a buggy writer could make). */
function wrapped(tuples: unknown, roots = ""): Buffer {
  const meta = Buffer.from(`${JSON.stringify(tuples)}\n`);
  const body = Buffer.concat([meta, Buffer.from(roots)]);
  const crc = crc32(body).toString(16).padStart(8, "0");
  const header = JSON.stringify({
    format: "sessiond.listing-index",
    version: 1,
    crc,
    bytes: body.length,
    files: meta.length - 1,
  });
  return Buffer.concat([Buffer.from(`${header}\n`), body]);
}

describe("listing index file format", () => {
  it("reads back what it wrote, roots' JSON included", () => {
    expect(plain(decodeIndex(encodeIndex(files), WS))).toEqual(plain(files));
  });

  it("an empty index is an index of no files", () => {
    expect(decodeIndex(encodeIndex([]), WS)).toEqual([]);
  });

  it("refuses bytes that a writer of this version did not write whole", () => {
    const good = encodeIndex(files);
    const cases: Buffer[] = [
      Buffer.alloc(0),
      good.subarray(0, good.length - 1),
      Buffer.concat([good, Buffer.from("x")]),
      Buffer.from(good.toString().replace('"version":1', '"version":2')),
      Buffer.from(good.toString().replace("sessiond.listing-index", "something.else")),
      // One flipped bit anywhere in the body.
      Buffer.from(good.map((b, i) => (i === good.length - 3 ? b ^ 4 : b))),
    ];
    for (const bytes of cases) expect(decodeIndex(bytes, WS)).toBeUndefined();
  });

  it("refuses a whole file whose entries are not of the shape this code writes", () => {
    const tuple = [0, "a", 1, 2, 3, 4, "r", 5, "", 0, 2];
    const record = [6, 7, null, { k: "v" }, 1, "l", 0, 8, null, 0];
    expect(decodeIndex(wrapped([tuple], "{}"), WS)?.length).toBe(1);
    expect(decodeIndex(wrapped([[...tuple, ...record]], "{}"), WS)?.[0]?.record?.tags).toEqual({
      k: "v",
    });
    const bad: unknown[] = [
      tuple.slice(0, 10),
      [...tuple, ...record.slice(0, 9)],
      [2, ...tuple.slice(1)],
      [0, 7, ...tuple.slice(2)],
      [...tuple.slice(0, 2), "1", ...tuple.slice(3)],
      [...tuple.slice(0, 9), 1, 2],
      [...tuple, ...record.slice(0, 3), { k: 1 }, ...record.slice(4)],
      [...tuple, ...record.slice(0, 9), 2],
      { sub: 0 },
    ];
    for (const t of bad) expect(decodeIndex(wrapped([tuple, t], "{}"), WS)).toBeUndefined();
    expect(decodeIndex(wrapped({ files: [] }), WS)).toBeUndefined();
  });
});
