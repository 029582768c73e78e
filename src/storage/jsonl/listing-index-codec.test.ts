import { endianness } from "node:os";
import { crc32 } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { UsageSchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { WS } from "../../../test/support/jsonl/fixtures.js";
import { SAVED_FILES as files, plain } from "../../../test/support/jsonl/listing-index-fixtures.js";
import { addMessage, emptyRaw } from "../../core/usage-sums.js";
import { type SessionUsage, usageToJson } from "../usage-report.js";
import { WIDTH } from "./listing-index-body.js";
import { decodeIndex, encodeIndex } from "./listing-index-codec.js";
import type { LoadedFile, SavedFile } from "./listing-index-entries.js";

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
    const W = WIDTH;
    const bad: ((body: Buffer, nums: Float64Array) => void)[] = [
      (_, n) => {
        n[0] = 128; // an unknown flag
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
      (_, n) => {
        n[20] = 1; // usage rows past their section (it has none)
      },
      (_, n) => {
        n[0] = (n[0] as number) | 64; // usage as JSON without usage known
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

/** A session's groups of `[hour, model, input tokens, caller cost or undefined]`. */
function usageOf(groups: [number, string, bigint, string | undefined][]): SessionUsage {
  const out = new Map();
  groups.forEach(([hour, model, input, cost], i) => {
    const raw = emptyRaw();
    addMessage(
      raw,
      create(UsageSchema, {
        inputTokens: input,
        outputTokens: 3n,
        cacheReadTokens: 5n,
        cacheWriteTokens: 7n,
        reasoningTokens: 1n,
        cost: cost === undefined ? undefined : { amount: cost, currency: "EUR" },
      }),
    );
    addMessage(raw, create(UsageSchema, { inputTokens: 2n, outputTokens: 1n }));
    out.set(`${hour}/${model}`, { hour, model, raw, firstSeq: i + 2, lastSeq: i + 9 });
  });
  return out;
}

/** `files` with usage sums on the records of the first two. */
function withUsage(a: SessionUsage, b: SessionUsage): SavedFile[] {
  const [f0, f1, ...rest] = files as [SavedFile, SavedFile, ...SavedFile[]];
  if (f0.record === undefined || f1.record === undefined)
    throw new Error("fixture without a record");
  return [
    { ...f0, record: { ...f0.record, usage: a } },
    { ...f1, record: { ...f1.record, usage: b } },
    ...rest,
  ];
}

/** Loaded files as the next save writes them (listing-index.ts collect). */
function resaved(loaded: readonly LoadedFile[]): SavedFile[] {
  return loaded.map((f) => ({
    sub: f.sub,
    id: f.id,
    key: f.origin,
    rootId: f.rootId,
    createdAtMs: f.createdAtMs,
    parent: f.parent,
    payload: f,
    record: f.record,
  }));
}

/** The rows a loaded record reads in place, as [hour, model, messages, input]. */
function rowsOf(f: { record?: unknown } | undefined): unknown[] | false {
  const r = f?.record as
    | { usageRows(a: number, b: number, each: (...x: never[]) => void): boolean }
    | undefined;
  const out: unknown[] = [];
  const kept = r?.usageRows(-Infinity, Infinity, ((
    hour: number,
    model: string,
    n: Float64Array,
    at: number,
  ) => out.push([hour, model, n[at + 4], n[at + 5]])) as never);
  return kept === true ? out : false;
}

describe("listing index usage rows", () => {
  const H = 3_600_000;

  it("keeps usage sums as rows of numbers that a report reads in place, and reads them back", () => {
    const a = usageOf([
      [5 * H, "m1", 12n, undefined],
      [6 * H, "", 40n, undefined],
    ]);
    const b = usageOf([[5 * H, "m2", 1n, undefined]]);
    const back = decodeIndex(encodeIndex(withUsage(a, b)), WS) ?? [];
    expect(rowsOf(back[0])).toEqual([
      [5 * H, "m1", 2, 14],
      [6 * H, "", 2, 42],
    ]);
    expect(rowsOf(back[1])).toEqual([[5 * H, "m2", 2, 3]]);
    expect(usageToJson(back[0]?.record?.usage ?? new Map())).toBe(usageToJson(a));
    expect(usageToJson(back[1]?.record?.usage ?? new Map())).toBe(usageToJson(b));
    // A loaded index saved again (the next save of an unchanged workspace) keeps them.
    const again = decodeIndex(encodeIndex(resaved(back)), WS) ?? [];
    expect(rowsOf(again[0])).toEqual(rowsOf(back[0]));
    expect(rowsOf(again[1])).toEqual(rowsOf(back[1]));
    expect(usageToJson(again[1]?.record?.usage ?? new Map())).toBe(usageToJson(b));
    // Known and empty is not unknown.
    const none = decodeIndex(encodeIndex(withUsage(new Map(), b)), WS) ?? [];
    expect(rowsOf(none[0])).toEqual([]);
    expect(none[0]?.record?.usage?.size).toBe(0);
  });

  it("keeps as JSON the sums rows cannot hold exactly (caller-set costs, counts past 2^53)", () => {
    const costed = usageOf([
      [5 * H, "m1", 12n, "0.000000000001"],
      [6 * H, "m1", 1n, undefined],
    ]);
    const huge = usageOf([[5 * H, "m1", 2n ** 60n, undefined]]);
    const back = decodeIndex(encodeIndex(withUsage(costed, huge)), WS) ?? [];
    for (const [i, u] of [costed, huge].entries()) {
      expect(rowsOf(back[i])).toBe(false);
      expect(usageToJson(back[i]?.record?.usage ?? new Map())).toBe(usageToJson(u));
      const again = decodeIndex(encodeIndex(resaved(back)), WS) ?? [];
      expect(usageToJson(again[i]?.record?.usage ?? new Map())).toBe(usageToJson(u));
    }
  });

  it("refuses rows that this code does not write", () => {
    const good = encodeIndex(withUsage(usageOf([[5 * H, "m1", 12n, undefined]]), new Map()));
    expect(
      decodeIndex(
        withBody(good, () => undefined),
        WS,
      ),
    ).toBeDefined();
    const row = WIDTH * files.length; // the first row's first number
    const bad: ((n: Float64Array) => void)[] = [
      (n) => {
        n[row] = 5 * H + 1; // not an hour's start
      },
      (n) => {
        n[row + 1] = 1; // no such model
      },
      (n) => {
        n[row + 2] = 0; // first seq
      },
      (n) => {
        n[row + 3] = 1; // last seq before the first
      },
      (n) => {
        n[row + 5] = -1; // a negative count
      },
      (n) => {
        n[row + 14] = 0.5; // a count not whole
      },
      (n) => {
        n[20] = 2; // rows past their section
      },
      (n) => {
        n[WIDTH + 20] = 0; // rows ending before the previous file's
      },
    ];
    for (const edit of bad) {
      expect(
        decodeIndex(
          withBody(good, (_, n) => edit(n)),
          WS,
        ),
      ).toBeUndefined();
    }
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
