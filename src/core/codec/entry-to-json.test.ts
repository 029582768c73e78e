import {
  create,
  fromJson,
  type JsonObject,
  type JsonValue,
  toJsonString,
} from "@bufbuild/protobuf";
import { TimestampSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import {
  type Entry,
  EntrySchema,
  Role,
  SessionInfoSchema,
} from "../../../gen/sessiond/v1/entry_pb.js";
import { checkEveryKind } from "../../../test/support/entry-arbitrary.js";
import {
  entryJson,
  entryJsonOfParts,
  entryJsonWithKind,
  tryEntryJson,
  tryEntryJsonParts,
} from "./entry-to-json.js";

/**
 * entryJson must be toJsonString(EntrySchema, …) exactly: on well-formed
 * entries it takes the fast path and writes the very same string; on
 * anything else it falls back and gives toJsonString's result or error.
 */

/** What toJsonString makes of `e`: the JSON, or its error message. */
function reflective(e: Entry) {
  try {
    return { json: toJsonString(EntrySchema, e) };
  } catch (err) {
    return { error: String(err) };
  }
}

function viaEntryJson(e: Entry) {
  try {
    return { json: entryJson(e) };
  } catch (err) {
    return { error: String(err) };
  }
}

const message = (value: Record<string, unknown>): Entry =>
  create(EntrySchema, {
    id: "e1",
    kind: { case: "message", value: { role: Role.USER, ...value } },
  } as never);

const custom = (data: unknown): Entry =>
  create(EntrySchema, {
    id: "e1",
    kind: { case: "custom", value: { namespace: "ns", data } },
  } as never);

const toolArgs = (args: unknown): Entry =>
  message({
    role: Role.ASSISTANT,
    content: [{ part: { case: "toolCall", value: { id: "k", name: "n", arguments: args } } }],
  });

/** Falls back (the fast path declines), and answers what toJsonString answers, result or error. */
function expectFallback(e: Entry) {
  expect(tryEntryJson(e)).toBeUndefined();
  expect(tryEntryJsonParts(e)).toBeUndefined();
  expect(viaEntryJson(e)).toEqual(reflective(e));
}

/** Takes the fast path and writes what toJsonString writes. */
function expectFast(e: Entry) {
  const fast = tryEntryJson(e);
  expect(fast).toBeDefined();
  expect(fast).toBe(toJsonString(EntrySchema, e));
  expect(entryJson(e)).toBe(fast);
  // In two pieces: the same JSON, and the kind's alone, which writes the
  // entry again with another head (what planning sets) exactly.
  const parts = tryEntryJsonParts(e);
  expect(entryJsonOfParts(parts?.head as string, e.kind.case, parts?.kind)).toBe(fast);
  if (e.kind.case === undefined) {
    expect(parts?.kind).toBeUndefined();
    return;
  }
  expect(parts?.kind).toBe(JSON.stringify(JSON.parse(fast as string)[e.kind.case]));
  for (const head of [
    { id: "p9", parentId: "p8", seq: 7n, timestamp: create(TimestampSchema, { seconds: 5n }) },
    { id: "", parentId: undefined, seq: 0n, timestamp: undefined },
  ]) {
    const other = { ...e, ...head };
    expect(entryJsonWithKind(other, parts?.kind as string)).toBe(toJsonString(EntrySchema, other));
  }
}

/** A message entry with this timestamp. */
function stamped(seconds: bigint, nanos: number): Entry {
  const e = message({});
  e.timestamp = create(TimestampSchema, { seconds, nanos });
  return e;
}

const deep = (n: number): JsonObject => {
  let o: JsonObject = { leaf: 1 };
  for (let i = 0; i < n; i++) o = { d: o };
  return o;
};

describe("entryJson", () => {
  it("writes every well-formed entry exactly as toJsonString, on the fast path", () => {
    checkEveryKind(expectFast, 2000);
  });

  it("writes a plain message as stored (field order, names, 64-bit integers, timestamps)", () => {
    const e = create(EntrySchema, {
      id: "u2",
      parentId: "u1",
      seq: 12n,
      timestamp: create(TimestampSchema, { seconds: 1_700_000_000n, nanos: 120_000_000 }),
      kind: {
        case: "message",
        value: {
          role: Role.ASSISTANT,
          content: [{ part: { case: "text", value: 'a "quoted"\n\u2028 text' } }],
          isError: true,
          usage: { inputTokens: 5n, outputTokens: 0n },
        },
      },
    });
    expect(entryJson(e)).toBe(
      '{"id":"u2","parentId":"u1","timestamp":"2023-11-14T22:13:20.120Z","seq":"12","message":{"role":"ROLE_ASSISTANT","content":[{"text":"a \\"quoted\\"\\n\u2028 text"}],"isError":true,"usage":{"inputTokens":"5"}}}',
    );
    expectFast(e);
  });

  it("writes an unknown role as its number, as toJson does", () => {
    expectFast(message({ role: 7 }));
  });

  it("writes timestamps with 0, 3, 6 and 9 fraction digits, and the edges of the range", () => {
    for (const [seconds, nanos] of [
      [0n, 0],
      [1n, 5_000_000],
      [1n, 5_000],
      [1n, 5],
      [-62135596800n, 0],
      [253402300799n, 999_999_999],
    ] as const) {
      expectFast(stamped(seconds, nanos));
    }
  });

  it("keeps the order of Struct keys, integer-like ones first, as toJson does", () => {
    expectFast(custom(JSON.parse('{"b":1,"2":2,"a":[true,null,"x",{"1":0,"z":-0}],"1":3}')));
  });

  it("takes data nested 32 deep on the fast path, and leaves deeper data to toJsonString", () => {
    const nestedList = (n: number): JsonValue => {
      let v: JsonValue = 1;
      for (let i = 0; i < n; i++) v = [v];
      return v;
    };
    // a Struct field holding 32 levels of objects or lists, then 33
    expectFast(custom(deep(32)));
    expectFallback(custom(deep(33)));
    expectFast(custom({ l: nestedList(32) }));
    expectFallback(custom({ l: nestedList(33) }));
    // a Value of 32 levels of Struct or ListValue, then 33
    expectFast(toolArgs(fromJson(ValueSchema, deep(31))));
    expectFallback(toolArgs(fromJson(ValueSchema, deep(32))));
    expectFast(toolArgs(fromJson(ValueSchema, nestedList(32))));
    expectFallback(toolArgs(fromJson(ValueSchema, nestedList(33))));
  });

  it("writes timestamps of the same second and of the next one alike (the second is cached)", () => {
    for (const [seconds, nanos] of [
      [1_700_000_000n, 1],
      [1_700_000_000n, 2_000],
      [1_700_000_001n, 0],
      [1_700_000_000n, 0],
    ] as const) {
      expectFast(stamped(seconds, nanos));
    }
  });

  it("writes __proto__ keys of tags and of a Value's Struct as toJson does (it drops them)", () => {
    const e = create(EntrySchema, { kind: { case: "sessionInfo", value: { tags: { a: "1" } } } });
    Object.defineProperty((e.kind.value as { tags: object }).tags, "__proto__", {
      value: "x",
      enumerable: true,
    });
    expectFast(e);
    const args = fromJson(ValueSchema, { a: 1 });
    const fields = (args.kind.value as { fields: object }).fields;
    Object.defineProperty(fields, "__proto__", {
      value: fromJson(ValueSchema, { b: 2 }),
      enumerable: true,
    });
    expectFast(toolArgs(args));
  });

  describe("anything else falls back to toJsonString, with its result or its error", () => {
    it("a timestamp out of range, with a negative, too large or non-number nanos, or number seconds", () => {
      for (const t of [
        { seconds: -62135596801n, nanos: 0 },
        { seconds: 253402300800n, nanos: 0 },
        { seconds: 1n, nanos: -1 },
        { seconds: 1n, nanos: 1_000_000_000 },
        { seconds: 1n, nanos: Number.NaN },
        { seconds: 1n, nanos: "1" },
        { seconds: 1, nanos: 0 },
      ]) {
        const e = message({});
        e.timestamp = { $typeName: "google.protobuf.Timestamp", ...t } as never;
        expectFallback(e);
      }
    });

    it("Struct data that toJson would change or refuse", () => {
      const hole: unknown[] = [1];
      hole[2] = 3;
      for (const data of [
        { n: Number.NaN },
        { n: Number.POSITIVE_INFINITY },
        { u: undefined },
        { f: () => 1 },
        { b: 1n },
        { d: new Date(0) },
        { m: new Map() },
        { h: hole },
        { l: [Number.NEGATIVE_INFINITY] },
        { a: Object.setPrototypeOf([1], null) },
        JSON.parse('{"__proto__":{"x":1}}'),
        Object.create({ inherited: 1 }),
        deep(40),
      ]) {
        expectFallback(custom(data));
      }
    });

    it("metadata of a message or a SessionInfo that is not a plain JSON object", () => {
      expectFallback(message({ metadata: [1, 2] }));
      const info = create(EntrySchema, { kind: { case: "sessionInfo", value: {} } });
      (info.kind.value as { metadata?: unknown }).metadata = { x: Number.NaN };
      expectFallback(info);
    });

    it("a Value with no kind, not finite, or nested too deep", () => {
      expectFallback(toolArgs(create(ValueSchema)));
      expectFallback(
        toolArgs(create(ValueSchema, { kind: { case: "numberValue", value: Number.NaN } })),
      );
      const kindless = create(ValueSchema);
      expectFallback(
        toolArgs(
          create(ValueSchema, { kind: { case: "listValue", value: { values: [kindless] } } }),
        ),
      );
      expectFallback(toolArgs(fromJson(ValueSchema, deep(40))));
    });

    it("a field of the wrong type, anywhere", () => {
      const wrong: [string, (e: Entry) => void][] = [
        ["id", (e) => Object.assign(e, { id: 5 })],
        ["parentId", (e) => Object.assign(e, { parentId: 5 })],
        ["seq", (e) => Object.assign(e, { seq: 5 })],
        ["role", (e) => Object.assign(e.kind.value as object, { role: "ROLE_USER" })],
        ["isError", (e) => Object.assign(e.kind.value as object, { isError: 1 })],
        ["content", (e) => Object.assign(e.kind.value as object, { content: "x" })],
        ["kind", (e) => Object.assign(e, { kind: { case: "bogus", value: {} } })],
        ["seq, a fraction", (e) => Object.assign(e, { seq: 1.5 })],
        [
          "a part's case",
          (e) =>
            Object.assign(e.kind.value as object, {
              content: [{ part: { case: "bogus", value: "x" } }],
            }),
        ],
        [
          "image data",
          (e) =>
            Object.assign(e.kind.value as object, {
              content: [{ part: { case: "image", value: { mimeType: "a/b", data: "AAAA" } } }],
            }),
        ],
        [
          "formatVersion",
          (e) =>
            Object.assign(e, {
              kind: {
                case: "sessionInfo",
                value: { ...create(SessionInfoSchema), formatVersion: "1" },
              },
            }),
        ],
      ];
      for (const [, spoil] of wrong) {
        const e = message({});
        spoil(e);
        expectFallback(e);
      }
    });

    it("a message object that inherits a field (toJson reads own fields only)", () => {
      const e = Object.create({ parentId: "inherited" }) as Entry;
      Object.assign(e, message({}));
      expectFallback(e);
    });

    it("a tag map with a non-string value, or that is not a plain object", () => {
      for (const tags of [{ a: 1 }, "ab", Object.create({ inherited: "x" })]) {
        const e = create(EntrySchema, { kind: { case: "sessionInfo", value: {} } });
        (e.kind.value as { tags: unknown }).tags = tags;
        expectFallback(e);
      }
    });
  });
});

describe("entryJsonOfParts and entryJsonWithKind without a kind on one side", () => {
  it("an entry without a kind has no JSON with a given kind", () => {
    const e = create(EntrySchema, { id: "a1" });
    expect(entryJsonWithKind(e, '{"role":"ROLE_USER"}')).toBeUndefined();
  });

  it("the head alone when the kind's case or its JSON is missing", () => {
    const head = '{"id":"a1"}';
    expect(entryJsonOfParts(head, undefined, '{"role":"ROLE_USER"}')).toBe(head);
    expect(entryJsonOfParts(head, "message", undefined)).toBe(head);
    expect(entryJsonOfParts(head, "message", "{}")).toBe('{"id":"a1","message":{}}');
  });
});
