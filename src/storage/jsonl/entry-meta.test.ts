import { create, type MessageInitShape, toJsonString } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { ts } from "../../../test/support/fixtures.js";
import type { EntryMeta } from "../../core/session-log.js";
import { clearMeta, metaOfJson, newMeta, scanMeta } from "./entry-meta.js";
import { checkFrame, encodeRecord } from "./record.js";

/**
 * The payload scan (scanMeta) is a fast path: whenever it gives up, the
 * reader falls back to JSON.parse and metaOfJson, with the same result. So
 * these tests ask the scan itself: for every entry our writer lays out
 * (a kind of its own, plain indexed strings, seq of at most 15 digits) it
 * must answer, and answer what JSON.parse reads; for a payload it must not
 * trust (another layout, invalid JSON around the indexed fields, a kind
 * whose fields are indexed) it must give up. metaOfJson, the slow path, is
 * held to the proto-JSON rules and to its error messages.
 */

type Kind = NonNullable<MessageInitShape<typeof EntrySchema>["kind"]>;

/** The kinds the scan resolves by their key alone. */
const SCANNED_KINDS = new Set([
  "message",
  "modelChange",
  "thinkingLevelChange",
  "compaction",
  "branchSummary",
  "custom",
]);
const MAX_SCANNED_SEQ = 10 ** 15 - 1;

/** A string JSON writes as its own bytes between quotes (no escape). */
const isPlain = (s: string) => JSON.stringify(s) === `"${s}"`;

/** What the scan must do with the canonical payload of `e`: answer (true) or give up. */
function scanAnswers(e: Entry): boolean {
  const seq = Number(e.seq);
  return (
    SCANNED_KINDS.has(e.kind.case ?? "") &&
    seq >= 1 &&
    seq <= MAX_SCANNED_SEQ &&
    isPlain(e.id) &&
    (e.parentId === undefined || isPlain(e.parentId))
  );
}

/** The payload bounds of `line` (a record as the writer frames it) in its own buffer. */
function framed(line: string): { buf: Buffer; start: number; end: number } {
  const buf = Buffer.from(line);
  const frame = checkFrame(buf, 0, buf.length - 1);
  if (typeof frame === "string") throw new Error(frame);
  return { buf, start: frame.start, end: frame.end };
}

/** The scan of a payload as it sits in a record line: the meta, or "gave up". */
function scanned(line: string): EntryMeta | "gave up" {
  const { buf, start, end } = framed(line);
  const meta = newMeta();
  return scanMeta(buf, start, end, meta) ? meta : "gave up";
}

/** The scan of a payload text framed by a record line (its header's seq is not the scan's business). */
function scanPayload(payload: string): EntryMeta | "gave up" {
  return scanned(encodeRecord(create(EntrySchema, { seq: 1n }), payload));
}

/** What JSON.parse and metaOfJson read from a payload text. */
function parsedMeta(payload: string): EntryMeta {
  const meta = newMeta();
  const bad = metaOfJson(JSON.parse(payload), meta);
  if (bad !== undefined) throw new Error(bad);
  return meta;
}

// Indexed strings: plain ones (which the scan reads) and ones JSON escapes.
const indexed = fc.oneof(
  { arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 12 }), weight: 4 },
  {
    arbitrary: fc.constantFrom("", " ", "a b", "é😀", "\u007f", "\u2028", "}", "{", ",", ":"),
    weight: 1,
  },
  {
    arbitrary: fc.string({
      unit: fc.constantFrom('"', "\\", "\n", "\t", "\u0001", "\u001f", "\ud800", "a"),
      minLength: 1,
      maxLength: 4,
    }),
    weight: 1,
  },
);

/**
 * Text inside a kind: after up to 40 plain bytes (the scan follows short
 * strings byte by byte and long ones with memchr), runs of quotes,
 * backslashes and brackets, which JSON escapes or the scan must skip.
 */
const text = fc
  .tuple(
    fc.nat({ max: 40 }),
    fc.string({
      unit: fc.constantFrom('"', "\\", "{", "}", "[", "]", "a", "é", "\n", "😀"),
      maxLength: 12,
    }),
  )
  .map(([n, tail]) => "x".repeat(n) + tail);

const kindArb: fc.Arbitrary<Kind | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.array(text, { maxLength: 3 }).map((texts) => ({
    case: "message" as const,
    value: {
      role: Role.ASSISTANT,
      content: texts.map((t) => ({ part: { case: "text" as const, value: t } })),
    },
  })),
  fc.option(text, { nil: undefined }).map((t) => ({
    case: "modelChange" as const,
    value: { model: t ?? "", provider: t },
  })),
  text.map((t) => ({ case: "thinkingLevelChange" as const, value: { thinkingLevel: t } })),
  fc.array(text, { maxLength: 3 }).map((ids) => ({
    case: "compaction" as const,
    value: { summary: ids[0] ?? "", replacesEntryIds: ids },
  })),
  fc.tuple(text, text).map(([summary, fromId]) => ({
    case: "branchSummary" as const,
    value: { summary, fromId },
  })),
  fc.option(fc.tuple(text, text), { nil: undefined }).map((kv) => ({
    case: "custom" as const,
    value:
      kv === undefined
        ? { namespace: "" }
        : { namespace: kv[0], data: { [kv[0]]: [kv[1], { [kv[1]]: [] }] } },
  })),
  indexed.map((label) => ({ case: "label" as const, value: { label } })),
  indexed.map((leafId) => ({ case: "leaf" as const, value: { leafId } })),
  fc.option(indexed, { nil: undefined }).map((title) => ({
    case: "sessionInfo" as const,
    value: { sessionId: "s", title },
  })),
);

const seqArb = fc.oneof(
  fc.integer({ min: 0, max: 200 }),
  fc.constantFrom(9, 10, 19, 90, 99, 100, 109, 1_000_000, MAX_SCANNED_SEQ, MAX_SCANNED_SEQ + 1),
  fc.integer({ min: 1, max: MAX_SCANNED_SEQ }),
  fc.maxSafeNat(),
);

const entryArb: fc.Arbitrary<Entry> = fc
  .record({
    id: indexed,
    parentId: fc.option(indexed, { nil: undefined }),
    seq: seqArb,
    time: fc.option(fc.integer({ min: 0, max: 4_000_000_000 }), { nil: undefined }),
    kind: kindArb,
  })
  .map(({ id, parentId, seq, time, kind }) =>
    create(EntrySchema, {
      id,
      parentId,
      seq: BigInt(seq),
      timestamp: time === undefined ? undefined : ts(time),
      kind,
    }),
  );

describe("scanMeta on our writer's layout", () => {
  it("answers for every entry of a scanned kind with plain indexed strings, as JSON.parse reads it", () => {
    const seen = { answered: 0, gaveUp: 0, longSeq: 0, noId: 0 };
    fc.assert(
      fc.property(entryArb, (e) => {
        const payload = toJsonString(EntrySchema, e);
        const got = scanPayload(payload);
        if (scanAnswers(e)) {
          seen.answered++;
          if (e.id === "") seen.noId++;
          if (e.seq > 99_999n) seen.longSeq++;
          expect(got, payload).toStrictEqual(parsedMeta(payload));
        } else {
          seen.gaveUp++;
          expect(got, payload).toBe("gave up");
        }
      }),
      { seed: 20261201, numRuns: 1500 },
    );
    expect(seen.answered).toBeGreaterThan(300);
    expect(seen.gaveUp).toBeGreaterThan(300);
    expect(seen.noId).toBeGreaterThan(20);
    expect(seen.longSeq).toBeGreaterThan(50);
  });

  it("answers for an empty kind, shorter than the keys of the other kinds", () => {
    for (const kind of ["custom", "compaction", "message", "branchSummary"]) {
      const payload = `{"id":"a","seq":"1","${kind}":{}}`;
      expect(scanPayload(payload), payload).toStrictEqual(parsedMeta(payload));
    }
  });

  it("answers for a seq of 15 digits and gives up at 16", () => {
    const at15 = `{"id":"a","seq":"${MAX_SCANNED_SEQ}","message":{}}`;
    expect(scanPayload(at15)).toStrictEqual(parsedMeta(at15));
    const at16 = `{"id":"a","seq":"${MAX_SCANNED_SEQ + 1}","message":{}}`;
    expect(scanPayload(at16)).toBe("gave up");
  });

  it("reads the escapes of a long string to find where the kind ends", () => {
    // a backslash run before a quote: odd escapes the quote, even closes the string
    for (const tail of ['\\"', "\\\\", '\\\\\\"', '""', "\\"]) {
      const long = "x".repeat(23) + tail;
      for (const t of [long, `y${long}`, `yy${long}`, `${long}z`]) {
        const payload = `{"id":"a","seq":"1","thinkingLevelChange":{"thinkingLevel":${JSON.stringify(t)}}}`;
        expect(scanPayload(payload), payload).toStrictEqual(parsedMeta(payload));
      }
    }
  });
});

describe("scanMeta gives up on what it must not trust", () => {
  const M = '"message":{"role":"ROLE_USER"}';
  const gaveUp: [string, string][] = [
    ["whitespace before the object", ` {"id":"a","seq":"1",${M}}`],
    ["no opening brace", `X"seq":"1",${M}}`],
    ["whitespace between fields", `{"id":"a", "seq":"1",${M}}`],
    ["an escape in the id", `{"id":"a\\"b","seq":"1",${M}}`],
    ["an escape in the parent id", `{"id":"a","parentId":"p\\\\","seq":"1",${M}}`],
    ["an escape in the timestamp", `{"id":"a","timestamp":"2025\\u002d01","seq":"1",${M}}`],
    ["a raw control character in the id (not JSON)", `{"id":"a\tb","seq":"1",${M}}`],
    ["the id not followed by a comma", `{"id":"a";"seq":"1",${M}}`],
    ["the parent id not followed by a comma", `{"id":"a","parentId":"p";"seq":"1",${M}}`],
    [
      "the timestamp not followed by a comma",
      `{"id":"a","timestamp":"2025-01-01T00:00:00Z";"seq":"1",${M}}`,
    ],
    ["an unknown key where seq belongs", `{"id":"a","abc":"1",${M}}`],
    ["seq as a JSON number", `{"id":"a","seq":1,${M}}`],
    ["seq empty", `{"id":"a","seq":"",${M}}`],
    ["seq with a leading zero", `{"id":"a","seq":"01",${M}}`],
    ["seq zero written out", `{"id":"a","seq":"0",${M}}`],
    ["seq with a letter", `{"id":"a","seq":"1a",${M}}`],
    ["seq with a letter before the comma (not JSON)", `{"id":"a","seq":"1a,${M}}`],
    ["seq not followed by a comma", `{"id":"a","seq":"1";${M}}`],
    ["no kind", `{"id":"a","seq":"1"}`],
    ["a SessionInfo (its title is indexed)", `{"id":"a","seq":"1","sessionInfo":{"title":"t"}}`],
    ["a Label (its text is indexed)", `{"id":"a","seq":"1","label":{"label":"l"}}`],
    ["a Leaf (its target is indexed)", `{"id":"a","seq":"1","leaf":{"leafId":"b"}}`],
    ["an unknown key before the kind", `{"id":"a","seq":"1","x":{},${M}}`],
    ["a key after the kind (it could repeat the id)", `{"id":"a","seq":"1",${M},"id":"b"}`],
    ["whitespace after the object", `{"id":"a","seq":"1",${M}} `],
    ["the object not closed after the kind (not JSON)", `{"id":"a","seq":"1",${M}]`],
    ["a kind that is not closed", `{"id":"a","seq":"1","message":{"content":[{}]}`],
    ["a kind whose nesting is not closed", `{"id":"a","seq":"1","message":{"a":{"b":{}}`],
    ["cut inside the id", '{"id":"abc'],
    ["cut inside a short string of the kind", `{"id":"a","seq":"1","message":{"role":"ROLE}`],
    [
      "cut inside a long string of the kind",
      `{"id":"a","seq":"1","message":{"role":"${"x".repeat(40)}}`,
    ],
    [
      "cut after an escaped quote of a long string",
      `{"id":"a","seq":"1","message":{"role":"${"x".repeat(40)}\\"}`,
    ],
  ];

  it.each(gaveUp)("%s", (_, payload) => {
    expect(scanPayload(payload)).toBe("gave up");
  });
});

describe("a meta to fill", () => {
  it("is an entry with nothing set, every field present as after clearMeta", () => {
    const used = newMeta();
    Object.assign(used, { id: "a", parentId: "p", seq: 3, kind: "leaf", leafId: "b" });
    clearMeta(used);
    expect(newMeta()).toStrictEqual(used);
    expect(used).toStrictEqual({
      id: "",
      parentId: undefined,
      seq: 0,
      kind: undefined,
      leafId: undefined,
      label: undefined,
      title: undefined,
    });
  });
});

describe("metaOfJson (the fields after JSON.parse)", () => {
  const none = newMeta();
  const read = (json: unknown): EntryMeta | string => {
    const meta = newMeta();
    return metaOfJson(json, meta) ?? meta;
  };

  it("reads JSON and proto field names, and a seq as a string or a number", () => {
    expect(read({ id: "a", parentId: "p", seq: "7", modelChange: {} })).toStrictEqual({
      ...none,
      id: "a",
      parentId: "p",
      seq: 7,
      kind: "modelChange",
    });
    expect(read({ id: "a", parent_id: "p", seq: 7, model_change: {} })).toStrictEqual({
      ...none,
      id: "a",
      parentId: "p",
      seq: 7,
      kind: "modelChange",
    });
    expect(read({ id: "a", seq: 0 })).toStrictEqual({ ...none, id: "a" });
    expect(read({ id: "a", seq: "9999999999999999" })).toMatchObject({ seq: 1e16 - 1 });
  });

  it("reads the leaf target, label text and title of the kinds that have one", () => {
    expect(read({ id: "a", seq: "1", leaf: { leaf_id: "b" } })).toMatchObject({
      kind: "leaf",
      leafId: "b",
    });
    expect(read({ id: "a", seq: "1", leaf: {} })).toMatchObject({ kind: "leaf", leafId: "" });
    expect(read({ id: "a", seq: "1", label: { label: "l" } })).toMatchObject({
      kind: "label",
      label: "l",
    });
    expect(read({ id: "a", seq: "1", label: {} })).toMatchObject({ kind: "label", label: "" });
    expect(read({ id: "a", seq: "1", session_info: { title: "t" } })).toMatchObject({
      kind: "sessionInfo",
      title: "t",
    });
  });

  it("reads no title, label or target from a kind that has none", () => {
    const odd = { title: 5, label: 5, leafId: 5 };
    for (const kind of ["message", "modelChange", "compaction", "custom"]) {
      expect(read({ id: "a", seq: "1", [kind]: odd })).toStrictEqual({
        ...none,
        id: "a",
        seq: 1,
        kind,
      });
    }
  });

  it("takes a null field, kind included, as unset", () => {
    expect(read({ id: null, parentId: null, seq: null, leaf: null })).toStrictEqual(none);
    expect(read({ id: "a", seq: "1", message: null })).toStrictEqual({
      ...none,
      id: "a",
      seq: 1,
    });
  });

  it("ignores unknown keys, the empty key included", () => {
    for (const kind of ["message", "compaction", "label", "leaf", "custom"]) {
      expect(read({ "": {}, id: "a", seq: "1", [kind]: {}, future: 1 })).toMatchObject({
        id: "a",
        seq: 1,
        kind,
      });
    }
  });

  const refused: [string, unknown, string][] = [
    ["a string", "x", "payload is not a JSON object"],
    ["null", null, "payload is not a JSON object"],
    ["an array", [{ id: "a" }], "payload is not a JSON object"],
    ["a number", 3, "payload is not a JSON object"],
    ["an id that is a number", { id: 3 }, "payload is not a valid entry (id is not a string)"],
    [
      "a parent id under both names",
      { id: "a", parentId: "p", parent_id: "p" },
      "payload is not a valid entry (parentId set twice)",
    ],
    [
      "a parent id that is not a string",
      { id: "a", parent_id: 1 },
      "payload is not a valid entry (parentId is not a string)",
    ],
    ...[-1, 1.5, 2 ** 53, "", "-1", "1.5", "x1", "1x", " 1", "12345678901234567", true].map(
      (seq): [string, unknown, string] => [
        `seq ${JSON.stringify(seq)}`,
        { id: "a", seq },
        "payload is not a valid entry (seq is not an unsigned integer)",
      ],
    ),
    [
      "two kinds",
      { id: "a", message: {}, leaf: {} },
      "payload is not a valid entry (kind set twice (message and leaf))",
    ],
    [
      "a kind under both names",
      { id: "a", modelChange: {}, model_change: {} },
      "payload is not a valid entry (modelChange set twice)",
    ],
    [
      "a kind that is a number",
      { id: "a", message: 5 },
      "payload is not a valid entry (message is not an object)",
    ],
    [
      "a kind that is a string",
      { id: "a", label: "l" },
      "payload is not a valid entry (label is not an object)",
    ],
    [
      "a kind that is an array",
      { id: "a", branch_summary: [] },
      "payload is not a valid entry (branch_summary is not an object)",
    ],
    [
      "a leaf target that is not a string",
      { id: "a", leaf: { leafId: 7 } },
      "payload is not a valid entry (leafId is not a string)",
    ],
  ];

  it.each(refused)("refuses %s", (_, json, why) => {
    expect(read(json)).toBe(why);
  });
});
