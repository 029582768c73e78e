import { endianness } from "node:os";
import { crc32 } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { UsageSchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { WS } from "../../../test/support/jsonl/fixtures.js";
import { SAVED_FILES as files, plain } from "../../../test/support/jsonl/listing-index-fixtures.js";
import { addMessage, emptyRaw } from "../../core/usage-sums.js";
import { usageToJson } from "../usage-report.js";
import { decodeIndex, encodeIndex } from "./listing-index-codec.js";

/** The index file's format: what is written is read back, and nothing else is. */

/** `good` with its header changed by `edit` (the CRC kept right). */
function withHeader(good: Buffer, edit: (h: Record<string, unknown>) => void): Buffer {
  const nl = good.indexOf(0x0a);
  const header = JSON.parse(good.toString("latin1", 0, nl));
  edit(header);
  const text = JSON.stringify(header);
  return Buffer.concat([
    Buffer.from(`${text.padEnd(Math.ceil((text.length + 1) / 8) * 8 - 1, " ")}\n`),
    good.subarray(nl + 1),
  ]);
}

/** `good` with the body changed by `edit` and the header's CRC made right again (a buggy writer). */
function withBody(good: Buffer, edit: (body: Buffer, nums: Float64Array) => void): Buffer {
  const nl = good.indexOf(0x0a);
  const body = Buffer.from(good.subarray(nl + 1));
  const nums = new Float64Array(body.buffer, body.byteOffset, Math.floor(body.length / 8));
  edit(body, nums);
  return withHeader(Buffer.concat([good.subarray(0, nl + 1), body]), (h) => {
    h.crc = crc32(body).toString(16).padStart(8, "0");
  });
}

describe("listing index file format", () => {
  it("reads back what it wrote, roots' JSON and every kind of field included", () => {
    expect(plain(decodeIndex(encodeIndex(files), WS))).toEqual(plain(files));
  });

  it("an empty index is an index of no files", () => {
    expect(decodeIndex(encodeIndex([]), WS)).toEqual([]);
  });

  it("reads the numbers wherever the bytes lie in memory", () => {
    const good = encodeIndex(files);
    const shifted = Buffer.alloc(good.length + 3);
    good.copy(shifted, 3);
    expect(plain(decodeIndex(shifted.subarray(3), WS))).toEqual(plain(files));
  });

  it("keeps one tag set once, shared (and frozen) by the records that have it", () => {
    const base = files[0];
    if (base?.record === undefined) throw new Error("fixture without a record");
    const twins = [base, { ...base, id: "twin" }];
    const [a, b] = decodeIndex(encodeIndex(twins), WS) ?? [];
    expect(a?.record?.tags).toEqual(base.record.tags);
    expect(b?.record?.tags).toBe(a?.record?.tags);
    expect(Object.isFrozen(a?.record?.tags)).toBe(true);
  });

  it("refuses bytes that a writer of this version did not write whole", () => {
    const good = encodeIndex(files);
    const cases: Buffer[] = [
      Buffer.alloc(0),
      good.subarray(0, good.length - 1),
      Buffer.concat([good, Buffer.from("x")]),
      withHeader(good, (h) => {
        h.version = 1;
      }),
      withHeader(good, (h) => {
        h.format = "something.else";
      }),
      withHeader(good, (h) => {
        h.endian = endianness() === "LE" ? "BE" : "LE";
      }),
      // The header not padded to a multiple of 8.
      Buffer.from(good.toString("latin1").replace(" \n", "\n"), "latin1"),
      // One flipped bit anywhere in the body.
      Buffer.from(good.map((b, i) => (i === good.length - 3 ? b ^ 4 : b))),
    ];
    for (const bytes of cases) expect(decodeIndex(bytes, WS)).toBeUndefined();
  });

  it("refuses a whole file whose values are not of the shape this code writes", () => {
    const good = encodeIndex(files);
    expect(
      decodeIndex(
        withBody(good, () => undefined),
        WS,
      )?.length,
    ).toBe(files.length);
    const W = 20;
    const bad: ((body: Buffer, nums: Float64Array) => void)[] = [
      (_, n) => {
        n[0] = 64; // an unknown flag
      },
      (_, n) => {
        n[1] = Number.NaN; // the inode
      },
      (_, n) => {
        n[5] = 1.5; // created ms
      },
      (_, n) => {
        n[6] = 0; // an empty root
      },
      (_, n) => {
        n[W + 6] = 1; // a root ending before the previous one
      },
      (_, n) => {
        n[7] = 1e9; // an id past the strings
      },
      (_, n) => {
        n[W + 7] = 0; // a string ending before the previous one
      },
      (_, n) => {
        n[15] = 2.5; // head seq
      },
      (_, n) => {
        n[18] = 7; // no such tag set
      },
      (_, n) => {
        n[19] = 1e9; // usage sums past their section
      },
      (_, n) => {
        n[W + 19] = -1; // usage sums ending before the previous ones
      },
      (body) => {
        // The tag sets, still JSON of the same length, but a value not a string.
        const at = W * files.length * 8;
        const sets = body.toString("latin1", at, body.indexOf("}]", at) + 2);
        body.write(sets.replace('"u1"', "1234"), at, "latin1");
      },
    ];
    for (const edit of bad) expect(decodeIndex(withBody(good, edit), WS)).toBeUndefined();
  });
});

describe("listing index usage sums", () => {
  it("reads back a record's usage sums (UsageReport's per hour and model)", () => {
    const base = files[0];
    if (base?.record === undefined) throw new Error("fixture without a record");
    const raw = emptyRaw();
    addMessage(
      raw,
      create(UsageSchema, {
        inputTokens: 12n,
        outputTokens: 3n,
        reasoningTokens: 1n,
        cost: { amount: "0.5", currency: "EUR" },
      }),
    );
    addMessage(raw, create(UsageSchema, { inputTokens: 2n ** 60n, cacheReadTokens: 7n }));
    const usage = new Map([
      ["x", { hour: 3_600_000 * 5, model: "m1", raw, firstSeq: 2, lastSeq: 9 }],
      ["y", { hour: 0, model: "", raw: emptyRaw(), firstSeq: 1, lastSeq: 1 }],
    ]);
    const withUsage = [{ ...base, record: { ...base.record, usage } }, ...files.slice(1)];
    const back = decodeIndex(encodeIndex(withUsage), WS) ?? [];
    expect(back.length).toBe(withUsage.length);
    expect(usageToJson(back[0]?.record?.usage ?? new Map())).toBe(usageToJson(usage));
    expect(back[1]?.record?.usage).toBeUndefined();
  });
});
