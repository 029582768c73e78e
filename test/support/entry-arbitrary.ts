/**
 * Random entries of every kind, every field set or not, with hard strings,
 * Struct / Value data, 64-bit integers and timestamps at their edges: what
 * the JSON reader (core/codec/entry-from-json) and writer (entry-to-json) are checked on
 * against protobuf-es's reflective fromJson / toJson, and what the store,
 * server and viewer are given by the random-entry tests (appendStep).
 */
import {
  create,
  fromJson,
  type JsonObject,
  type JsonValue,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { expect } from "vitest";
import {
  type ContentPartSchema,
  type Entry,
  EntrySchema,
  Role,
} from "../../gen/sessiond/v1/entry_pb.js";

type Kind = NonNullable<MessageInitShape<typeof EntrySchema>["kind"]>;
type Part = MessageInitShape<typeof ContentPartSchema>["part"];

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

// Strings of string fields: well-formed UTF-16 (fromJson rejects lone surrogates).
const special = fc.constantFrom(
  "",
  '"',
  "\\",
  '\\"\\n',
  "\n\r\t\b\f",
  "\u0000\u0001\u001f\u007f",
  "\u2028\u2029",
  "é ü ß",
  "日本語のテキスト",
  "😀👍🏽‍",
  "\ud83d\ude00",
  "</script>",
  "\\u0041",
  "ROLE_USER",
  "x".repeat(600),
);
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ maxLength: 10 }),
  special,
);

// Strings inside Struct / Value data: anything, lone surrogates included (fromJson does not check them).
const anyUtf16 = fc.oneof(
  text,
  fc.string({
    unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    maxLength: 8,
  }),
);
const dataKey = fc
  .oneof(
    anyUtf16,
    fc.constantFrom("constructor", "toString", "hasOwnProperty", "0", "1", "-1", "a.b", ""),
  )
  .filter((k) => k !== "__proto__");
const dataNumber = fc
  .oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.constantFrom(
      0,
      1,
      -1,
      0.5,
      1e21,
      1e-7,
      2 ** 53 + 2,
      -(2 ** 60),
      Number.MAX_VALUE,
      Number.MIN_VALUE,
    ),
  )
  .map((d) => (Object.is(d, -0) ? 0 : d));

const data = fc.letrec<{ value: JsonValue; list: JsonValue[]; struct: JsonObject }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    dataNumber,
    anyUtf16,
    tie("list"),
    tie("struct"),
  ),
  list: fc.array(tie("value"), { maxLength: 4 }),
  struct: fc.dictionary(dataKey, tie("value"), { maxKeys: 4, noNullPrototype: true }),
}));

const UINT64_MAX = 2n ** 64n - 1n;
const u64 = fc.oneof(
  fc.bigInt({ min: 0n, max: UINT64_MAX }),
  fc.bigInt({ min: 0n, max: 100_000n }),
  fc.constantFrom(
    0n,
    1n,
    UINT64_MAX,
    UINT64_MAX - 1n,
    2n ** 53n,
    2n ** 53n + 1n,
    2n ** 63n,
    2n ** 63n - 1n,
  ),
);
const u32 = fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom(0, 1, 0xffffffff));

export const MIN_SECONDS = -62135596800n; // 0001-01-01T00:00:00Z
export const MAX_SECONDS = 253402300799n; // 9999-12-31T23:59:59Z
export const timestamp: fc.Arbitrary<Timestamp> = fc
  .tuple(
    fc.oneof(
      fc.bigInt({ min: MIN_SECONDS, max: MAX_SECONDS }),
      fc.bigInt({ min: -4_000_000_000n, max: 4_000_000_000n }),
      fc.constantFrom(
        MIN_SECONDS,
        MAX_SECONDS,
        -1n,
        0n,
        1n,
        951782400n, // 2000-02-29
        -2203891200n, // 1900-03-01
        -2208988801n, // 1899-12-31T23:59:59
        1709164800n, // 2024-02-29
        -62104060800n, // 0001-12-31
      ),
    ),
    fc.oneof(
      fc.constant(0),
      fc.integer({ min: 0, max: 999 }).map((ms) => ms * 1_000_000),
      fc.integer({ min: 0, max: 999_999 }).map((us) => us * 1_000),
      fc.integer({ min: 0, max: 999_999_999 }),
      fc.constantFrom(1, 999_999_999, 100_000_000, 10),
    ),
  )
  .map(([seconds, nanos]) => create(TimestampSchema, { seconds, nanos }));

const allBytes = new Uint8Array(256).map((_, i) => i);
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 40 }),
  fc.constant(allBytes),
  fc.constant(new Uint8Array(0)),
);

const part: fc.Arbitrary<Part> = fc.oneof(
  text.map((value) => ({ case: "text" as const, value })),
  fc
    .record({ thinking: text, signature: opt(text) })
    .map((value) => ({ case: "thinking" as const, value })),
  fc.record({ mimeType: text, data: bytes }).map((value) => ({ case: "image" as const, value })),
  fc.record({ id: text, name: text, args: opt(data.value) }).map(({ id, name, args }) => ({
    case: "toolCall" as const,
    value: {
      id,
      name,
      arguments: args === undefined ? undefined : fromJson(ValueSchema, args),
    },
  })),
  // a ContentPart with no part set
  fc.constant(undefined),
);

const usage = fc.record({
  inputTokens: u64,
  outputTokens: u64,
  cacheReadTokens: u64,
  cacheWriteTokens: u64,
});

const kind: fc.Arbitrary<Kind | undefined> = fc.oneof(
  fc
    .record({
      sessionId: text,
      title: opt(text),
      cwd: opt(text),
      createdAt: opt(timestamp),
      formatVersion: u32,
      parentSessionId: opt(text),
      agentType: opt(text),
      spawnDepth: u32,
      forkedFrom: opt(fc.record({ sessionId: text, entryId: text })),
      metadata: opt(data.struct),
    })
    .map((value) => ({ case: "sessionInfo" as const, value })),
  fc
    .record({
      role: fc.constantFrom(Role.UNSPECIFIED, Role.USER, Role.ASSISTANT, Role.TOOL),
      content: fc.array(
        part.map((p) => ({ part: p })),
        { maxLength: 4 },
      ),
      toolCallId: opt(text),
      toolName: opt(text),
      isError: fc.boolean(),
      model: opt(text),
      provider: opt(text),
      usage: opt(usage),
      stopReason: opt(text),
      metadata: opt(data.struct),
    })
    .map((value) => ({ case: "message" as const, value })),
  fc
    .record({ model: text, provider: opt(text) })
    .map((value) => ({ case: "modelChange" as const, value })),
  fc
    .record({ thinkingLevel: text })
    .map((value) => ({ case: "thinkingLevelChange" as const, value })),
  fc
    .record({
      summary: text,
      replacesEntryIds: fc.array(text, { maxLength: 5 }),
      tokensBefore: opt(u64),
    })
    .map((value) => ({ case: "compaction" as const, value })),
  fc
    .record({ summary: text, fromId: text })
    .map((value) => ({ case: "branchSummary" as const, value })),
  fc.record({ label: text }).map((value) => ({ case: "label" as const, value })),
  fc.record({ leafId: text }).map((value) => ({ case: "leaf" as const, value })),
  fc
    .record({ namespace: text, data: opt(data.struct) })
    .map((value) => ({ case: "custom" as const, value })),
  fc.constant(undefined),
);

export const entryArb: fc.Arbitrary<Entry> = fc
  .record({ id: text, parentId: opt(text), timestamp: opt(timestamp), seq: u64, kind })
  .map((init) => create(EntrySchema, init));

/**
 * Runs `check` on `numRuns` random entries and asserts that every kind, and
 * the kindless entry, was among them more than `atLeast` times each.
 */
export function checkEveryKind(check: (e: Entry) => void, numRuns: number, atLeast = 50): void {
  const seen = new Map<string, number>();
  fc.assert(
    fc.property(entryArb, (e) => {
      const k = e.kind.case ?? "none";
      seen.set(k, (seen.get(k) ?? 0) + 1);
      check(e);
    }),
    { numRuns },
  );
  for (const k of [
    "sessionInfo",
    "message",
    "modelChange",
    "thinkingLevelChange",
    "compaction",
    "branchSummary",
    "label",
    "leaf",
    "custom",
    "none",
  ]) {
    expect(seen.get(k) ?? 0, k).toBeGreaterThan(atLeast);
  }
}

/** The ids random appends (`appendStep`) give their entries, so that they collide. */
export const STEP_IDS = ["a1", "b2", "c3", "d4"];

/**
 * One random append: an entry of any kind, its id one of STEP_IDS or left
 * for the store to assign, its parent mostly the current leaf (so that most
 * appends have somewhere to go) and now and then one of STEP_IDS.
 */
export const appendStep = fc.record({
  entry: entryArb,
  id: fc.oneof(fc.constant(undefined), fc.constantFrom(...STEP_IDS)),
  parent: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 3 },
    { arbitrary: fc.constantFrom(...STEP_IDS), weight: 1 },
  ),
});
