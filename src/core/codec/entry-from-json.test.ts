import {
  create,
  equals,
  fromJson,
  type JsonReadOptions,
  type JsonValue,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  checkEveryKind,
  MAX_SECONDS,
  MIN_SECONDS,
  timestamp,
} from "../../../test/support/entry-arbitrary.js";
import { expectIdentical } from "../../../test/support/identical.js";
import { decodeEntry, tryDecodeEntry } from "./entry-from-json.js";

/**
 * decodeEntry must be fromJson(EntrySchema, …) exactly: on our writer's
 * output it takes the fast path and builds the very same message; on
 * anything else it falls back and gives fromJson's result or error.
 */

/** What fromJson makes of `json`: the entry, or its error message. */
function viaFromJson(json: unknown, options?: Partial<JsonReadOptions>) {
  try {
    return { entry: fromJson(EntrySchema, json as JsonValue, options) };
  } catch (err) {
    return { error: String(err) };
  }
}

function viaDecodeEntry(json: unknown, options?: Partial<JsonReadOptions>) {
  try {
    return { entry: decodeEntry(json, options) };
  } catch (err) {
    return { error: String(err) };
  }
}

/** decodeEntry gives exactly what fromJson gives (result or error), with and without ignoreUnknownFields. */
function expectSameAsFromJson(json: unknown) {
  for (const options of [undefined, { ignoreUnknownFields: true }]) {
    const want = viaFromJson(json, options);
    const got = viaDecodeEntry(json, options);
    expectIdentical(got, want);
    if (got.entry !== undefined && want.entry !== undefined) {
      expect(toBinary(EntrySchema, got.entry)).toEqual(toBinary(EntrySchema, want.entry));
    }
  }
}

const parsed = (e: Entry) => JSON.parse(toJsonString(EntrySchema, e)) as Record<string, unknown>;

describe("decodeEntry", () => {
  it("decodes every entry our writer produces like fromJson, on the fast path", () => {
    checkEveryKind((e) => {
      const fast = tryDecodeEntry(parsed(e));
      expect(fast).toBeDefined();
      const decoded = decodeEntry(parsed(e));
      const reflective = fromJson(EntrySchema, parsed(e) as JsonValue);
      expect(equals(EntrySchema, decoded, e)).toBe(true);
      expect(toBinary(EntrySchema, decoded)).toEqual(toBinary(EntrySchema, reflective));
      // same objects, field for field: defaults present, unset optionals absent, same types
      expectIdentical(decoded, reflective);
      // the result owns its data: nothing is shared with the parsed JSON
      const json = parsed(e);
      const again = decodeEntry(json);
      if (again.kind.case === "custom" && again.kind.value.data !== undefined) {
        expect(again.kind.value.data).not.toBe((json.custom as Record<string, unknown>).data);
      }
    }, 3000);
  }, 120_000);

  it("timestamps: every second of the range, 0/3/6/9 fraction digits, as fromJson", () => {
    fc.assert(
      fc.property(timestamp, (t) => {
        const e = create(EntrySchema, { id: "t", seq: 1n, timestamp: t });
        const json = parsed(e);
        expectIdentical(
          tryDecodeEntry(json)?.timestamp,
          fromJson(EntrySchema, json as JsonValue).timestamp,
        );
      }),
      { numRuns: 5000 },
    );
    // runs of close timestamps, as in a session (the decoder caches the last minute it read)
    fc.assert(
      fc.property(
        fc.bigInt({ min: MIN_SECONDS, max: MAX_SECONDS - 10_000n }),
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 999_999_999 })),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        (start, steps) => {
          let seconds = start;
          for (const [delta, nanos] of steps) {
            seconds += BigInt(delta);
            const json = parsed(create(EntrySchema, { id: "t", timestamp: { seconds, nanos } }));
            expectIdentical(
              tryDecodeEntry(json)?.timestamp,
              fromJson(EntrySchema, json as JsonValue).timestamp,
            );
          }
        },
      ),
      { numRuns: 500 },
    );
    for (const s of [
      "2024-02-29T12:00:00Z",
      "2000-01-01T00:00:00.1Z",
      "1970-01-01T00:00:00.12345678Z",
    ]) {
      const json = { id: "t", timestamp: s };
      expectIdentical(tryDecodeEntry(json), fromJson(EntrySchema, json as JsonValue));
    }
  });

  it("a usage cost with only its amount, only its currency or neither is read on the fast path, as fromJson reads it", () => {
    for (const cost of [
      { amount: "0.0125" },
      { currency: "USD" },
      {},
      { amount: "3", currency: "EUR" },
    ]) {
      const json = {
        id: "x",
        message: { role: "ROLE_ASSISTANT", usage: { inputTokens: "5", cost } },
      };
      const fast = tryDecodeEntry(json);
      expect(fast).toBeDefined();
      expectIdentical(fast, fromJson(EntrySchema, json as JsonValue));
    }
  });

  it("a Value argument of null is a null Value, on the fast path", () => {
    const json = {
      id: "x",
      message: { content: [{ toolCall: { id: "c", name: "n", arguments: null } }] },
    };
    expectIdentical(tryDecodeEntry(json), fromJson(EntrySchema, json as JsonValue));
  });

  // Not what our writer emits, but read the same way fromJson reads it.
  const handled: [string, unknown][] = [
    ["seq with leading zeros", { id: "x", seq: "0002" }],
    ["bytes url-safe base64", { id: "x", message: { content: [{ image: { data: "-_-_" } }] } }],
    ["bytes unpadded base64", { id: "x", message: { content: [{ image: { data: "AQI" } }] } }],
    [
      "default values written out",
      { id: "", seq: "0", message: { role: "ROLE_UNSPECIFIED", isError: false, content: [] } },
    ],
    ["empty usage, empty Struct", { id: "x", message: { usage: {}, metadata: {} } }],
    ["timestamp with 1 fraction digit", { id: "x", timestamp: "1969-07-20T20:17:40.5Z" }],
    [
      "uint32 zero written out",
      { id: "r", sessionInfo: { sessionId: "s", formatVersion: 0, spawnDepth: 0 } },
    ],
    [
      "session info with tags",
      { id: "r", sessionInfo: { sessionId: "s", tags: { user: "ana", "team/x": "é", e: "" } } },
    ],
    ["session info with no tags", { id: "r", sessionInfo: { sessionId: "s", tags: {} } }],
  ];

  it.each(handled)("fast path, same as fromJson: %s", (_, json) => {
    expect(tryDecodeEntry(json)).toBeDefined();
    expectSameAsFromJson(json);
  });

  const base = (): Record<string, unknown> => ({
    id: "e2",
    parentId: "e1",
    timestamp: "2025-01-15T09:30:00.123Z",
    seq: "2",
    message: {
      role: "ROLE_ASSISTANT",
      content: [
        { text: "hi" },
        { toolCall: { id: "c1", name: "read", arguments: { path: "a.ts", lines: [1, 2] } } },
      ],
      usage: { inputTokens: "10", outputTokens: "2" },
      model: "m",
    },
  });
  const withMessage = (patch: Record<string, unknown>) => {
    const j = base();
    j.message = { ...(j.message as object), ...patch };
    return j;
  };
  const deep = (depth: number): unknown => {
    let v: unknown = "leaf";
    for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { k: v } : [v];
    return v;
  };

  const fallbacks: [string, unknown][] = [
    ["unknown top-level key", { ...base(), extra: 1 }],
    ["unknown nested key", withMessage({ extra: "x" })],
    ["unknown key in a content part", withMessage({ content: [{ text: "a", extra: 1 }] })],
    ["number where a string belongs", { ...base(), id: 5 }],
    ["number where a string belongs, nested", withMessage({ model: 5 })],
    ["number where a string belongs, in a kind", { id: "x", leaf: { leafId: 3 } }],
    ["seq as a JSON number", { ...base(), seq: 2 }],
    ["seq with an exponent", { ...base(), seq: "1e3" }],
    ["seq negative", { ...base(), seq: "-1" }],
    ["seq above 2^64-1", { ...base(), seq: "18446744073709551616" }],
    ["seq empty", { ...base(), seq: "" }],
    ["seq with spaces", { ...base(), seq: " 2" }],
    ["seq of 20 digits above 2^64-1", { ...base(), seq: "20000000000000000000" }],
    ["proto field name", { id: "x", parent_id: "p", seq: "1" }],
    ["proto and JSON name both", { id: "x", parent_id: "p", parentId: "p", seq: "1" }],
    ["null optional field", { ...base(), parentId: null }],
    ["null message field", { ...base(), timestamp: null }],
    ["null oneof", { id: "x", leaf: null }],
    ["null text part", withMessage({ content: [{ text: null }] })],
    ["null list", withMessage({ content: null })],
    ["null list item", { id: "x", compaction: { replacesEntryIds: ["a", null] } }],
    ["two kinds", { ...base(), leaf: { leafId: "x" } }],
    [
      "two parts in one content part",
      withMessage({ content: [{ text: "a", thinking: { thinking: "b" } }] }),
    ],
    ["lone surrogate in a string field", withMessage({ content: [{ text: "a\ud800b" }] })],
    ["lone surrogate in an id", { ...base(), id: "\udc00" }],
    ["unknown enum name", withMessage({ role: "ROLE_SYSTEM" })],
    ["enum as a number", withMessage({ role: 2 })],
    ["enum out of range", withMessage({ role: 7 })],
    ["timestamp with an offset", { ...base(), timestamp: "2025-01-15T10:30:00+01:00" }],
    ["timestamp lowercase", { ...base(), timestamp: "2025-01-15t09:30:00z" }],
    ["timestamp February 30", { ...base(), timestamp: "2021-02-30T00:00:00Z" }],
    ["timestamp February 29 of a non-leap year", { ...base(), timestamp: "2100-02-29T00:00:00Z" }],
    ["timestamp hour 24", { ...base(), timestamp: "2021-02-28T24:00:00Z" }],
    ["timestamp leap second", { ...base(), timestamp: "2016-12-31T23:59:60Z" }],
    ["timestamp year 0", { ...base(), timestamp: "0000-12-31T00:00:00Z" }],
    ["timestamp 10 fraction digits", { ...base(), timestamp: "2025-01-15T09:30:00.1234567891Z" }],
    ["timestamp empty fraction", { ...base(), timestamp: "2025-01-15T09:30:00.Z" }],
    ["timestamp as a number", { ...base(), timestamp: 1700000000 }],
    ["timestamp as an object", { ...base(), timestamp: { seconds: "1" } }],
    [
      "timestamp February 29 of a year not divisible by 4",
      { ...base(), timestamp: "2021-02-29T00:00:00Z" },
    ],
    ["timestamp April 31", { ...base(), timestamp: "2021-04-31T00:00:00Z" }],
    ["timestamp June 31", { ...base(), timestamp: "2021-06-31T00:00:00Z" }],
    ["timestamp September 31", { ...base(), timestamp: "2021-09-31T00:00:00Z" }],
    ["timestamp November 31", { ...base(), timestamp: "2021-11-31T00:00:00Z" }],
    ["timestamp month 0", { ...base(), timestamp: "2021-00-10T00:00:00Z" }],
    ["timestamp month 13", { ...base(), timestamp: "2021-13-10T00:00:00Z" }],
    ["timestamp day 0", { ...base(), timestamp: "2021-03-00T00:00:00Z" }],
    ["timestamp minute 60", { ...base(), timestamp: "2021-03-10T10:60:00Z" }],
    ["timestamp with a slash for the first dash", { ...base(), timestamp: "2021/03-10T10:20:00Z" }],
    [
      "timestamp with a slash for the second dash",
      { ...base(), timestamp: "2021-03/10T10:20:00Z" },
    ],
    ["timestamp with a space for the T", { ...base(), timestamp: "2021-03-10 10:20:00Z" }],
    ["timestamp with a dash for the first colon", { ...base(), timestamp: "2021-03-10T10-20:00Z" }],
    [
      "timestamp with a space for the second colon",
      { ...base(), timestamp: "2021-03-10T10:20 00Z" },
    ],
    ["timestamp with a lowercase z", { ...base(), timestamp: "2021-03-10T10:20:00z" }],
    [
      "timestamp with a fraction and a lowercase z",
      { ...base(), timestamp: "2021-03-10T10:20:00.5z" },
    ],
    [
      "timestamp with a comma before the fraction",
      { ...base(), timestamp: "2021-03-10T10:20:00,5Z" },
    ],
    [
      "timestamp with a character below 0 in a digit",
      { ...base(), timestamp: "2021-03-10T10:20:0/Z" },
    ],
    [
      "timestamp with a character above 9 in a digit",
      { ...base(), timestamp: "2021-03-10T10:20:0:Z" },
    ],
    ["uint32 as a string", { id: "r", sessionInfo: { sessionId: "s", formatVersion: "1" } }],
    ["uint32 negative", { id: "r", sessionInfo: { sessionId: "s", formatVersion: -1 } }],
    ["uint32 too big", { id: "r", sessionInfo: { sessionId: "s", spawnDepth: 2 ** 32 } }],
    ["uint32 fractional", { id: "r", sessionInfo: { sessionId: "s", spawnDepth: 1.5 } }],
    ["bool as a string", withMessage({ isError: "true" })],
    ["usage as a number", withMessage({ usage: { inputTokens: 10 } })],
    ["bytes not base64", withMessage({ content: [{ image: { mimeType: "x", data: "!!!" } }] })],
    [
      "__proto__ key in Struct data",
      JSON.parse('{"id":"c","custom":{"namespace":"n","data":{"__proto__":{"a":1},"b":2}}}'),
    ],
    [
      "__proto__ key in Value data",
      JSON.parse('{"id":"c","message":{"content":[{"toolCall":{"arguments":{"__proto__":1}}}]}}'),
    ],
    ["Struct field as an array", { id: "c", custom: { namespace: "n", data: [1] } }],
    ["Struct field as a string", { id: "c", custom: { namespace: "n", data: "x" } }],
    ["data nested 40 deep", { id: "c", custom: { namespace: "n", data: { d: deep(40) } } }],
    [
      "data nested 200 deep (fromJson's recursion limit)",
      { id: "c", custom: { namespace: "n", data: { d: deep(200) } } },
    ],
    [
      "arguments nested 200 deep",
      withMessage({ content: [{ toolCall: { arguments: deep(200) } }] }),
    ],
    ["content not an array", withMessage({ content: { text: "a" } })],
    ["message not an object", { id: "x", message: "hello" }],
    ["entry is null", null],
    ["entry is an array", [{ id: "x" }]],
    ["entry is a string", "x"],
    ["entry is a number", 3],
    ["entry is undefined", undefined],
  ];

  it.each(fallbacks)("falls back to fromJson: %s", (_, json) => {
    expect(tryDecodeEntry(json)).toBeUndefined();
    expectSameAsFromJson(json);
  });

  // Struct and Value data: the fast path takes nesting up to MAX_DATA_DEPTH (32)
  // containers below the field, and leaves anything deeper to fromJson.
  const nested = (depth: number, wrap: (v: unknown) => unknown, inner: unknown): unknown => {
    let v = inner;
    for (let i = 0; i < depth; i++) v = wrap(v);
    return v;
  };
  const inObjects = (depth: number) => nested(depth, (v) => ({ d: v }), {});
  const inArrays = (depth: number) => nested(depth, (v) => [v], []);
  const deepData: [string, (extra: number) => unknown][] = [
    ["Struct data, objects", (extra) => ({ id: "c", custom: { data: inObjects(32 + extra) } })],
    [
      "Struct data, arrays",
      (extra) => ({ id: "c", custom: { data: { d: inArrays(31 + extra) } } }),
    ],
    [
      "tool call arguments, objects",
      (extra) => withMessage({ content: [{ toolCall: { arguments: inObjects(32 + extra) } }] }),
    ],
    [
      "tool call arguments, arrays",
      (extra) => withMessage({ content: [{ toolCall: { arguments: inArrays(32 + extra) } }] }),
    ],
  ];

  it.each(deepData)("%s nested 32 deep: fast path, same as fromJson", (_, json) => {
    expect(tryDecodeEntry(json(0))).toBeDefined();
    expectSameAsFromJson(json(0));
  });

  it.each(deepData)("%s nested 33 deep: falls back to fromJson", (_, json) => {
    expect(tryDecodeEntry(json(1))).toBeUndefined();
    expectSameAsFromJson(json(1));
  });

  it("objects that are not plain JSON objects fall back", () => {
    const proto = { id: "inherited" };
    const json = Object.create(proto) as Record<string, unknown>;
    json.seq = "1";
    expect(tryDecodeEntry(json)).toBeUndefined();
    expectIdentical(decodeEntry(json), fromJson(EntrySchema, json as JsonValue));
    const bare = Object.assign(Object.create(null), { id: "x" });
    expect(tryDecodeEntry(bare)).toBeUndefined();
    expectIdentical(decodeEntry(bare), fromJson(EntrySchema, bare as JsonValue));
  });

  it("errors are fromJson's own (the caller reports them as DATA_LOSS)", () => {
    expect(() => decodeEntry({ id: 5 })).toThrow(
      /cannot decode field sessiond\.v1\.Entry\.id from JSON/,
    );
    expect(() => decodeEntry({ id: "x", extra: 1 })).toThrow(/key "extra" is unknown/);
    expectIdentical(
      decodeEntry({ id: "x", extra: 1 }, { ignoreUnknownFields: true }),
      create(EntrySchema, { id: "x" }),
    );
  });
});
