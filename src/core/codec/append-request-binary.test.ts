import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BlobPart,
  type Entry,
  EntrySchema,
  type ImagePart,
  type Message,
  Role,
} from "../../../gen/sessiond/v1/entry_pb.js";
import {
  type AppendRequest,
  AppendRequestSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import { entryArb } from "../../../test/support/entry-arbitrary.js";
import { expectIdentical } from "../../../test/support/identical.js";
import { decodeAppendRequest, tryDecodeAppendRequest } from "./append-request-binary.js";

/**
 * decodeAppendRequest must be fromBinary(AppendRequestSchema, …) exactly:
 * the very same objects on the fast path, and on anything it does not take
 * the fallback's result or error.
 */

/** What fromBinary makes of `bytes`: the request, or its error message. */
function viaFromBinary(bytes: Uint8Array) {
  try {
    return { request: fromBinary(AppendRequestSchema, bytes) };
  } catch (err) {
    return { error: String(err) };
  }
}

function viaDecode(bytes: Uint8Array) {
  try {
    return { request: decodeAppendRequest(bytes) };
  } catch (err) {
    return { error: String(err) };
  }
}

function expectSameAsFromBinary(bytes: Uint8Array) {
  expectIdentical(viaDecode(bytes), viaFromBinary(bytes));
}

/** A request as gRPC hands it to the server: a Buffer view into a larger frame. */
function framed(bytes: Uint8Array): Buffer {
  const frame = Buffer.alloc(bytes.length + 5);
  frame.set(bytes, 5);
  return frame.subarray(5);
}

const request = (
  entries: Entry[],
  more: Partial<MessageInitShape<typeof AppendRequestSchema>> = {},
): AppendRequest =>
  create(AppendRequestSchema, { workspace: "ws", session: "s1", entries, ...more });

const blobEntry = create(EntrySchema, {
  id: "b1",
  kind: {
    case: "message",
    value: {
      role: Role.USER,
      content: [
        {
          part: {
            case: "blob",
            value: {
              sha256: "ab".repeat(32),
              size: 123n,
              part: BlobPart.IMAGE,
              mediaType: "image/png",
              preview: "",
              signature: "sig",
            },
          },
        },
      ],
    },
  },
});

describe("decodeAppendRequest", () => {
  it("decodes random requests of every entry kind exactly as fromBinary", () => {
    fc.assert(
      fc.property(
        fc.array(entryArb, { maxLength: 4 }),
        fc.string(),
        fc.string(),
        fc.option(fc.string(), { nil: undefined }),
        fc.option(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), { nil: undefined }),
        (entries, workspace, session, expectedLeafId, expectedSeq) => {
          const bytes = toBinary(
            AppendRequestSchema,
            create(AppendRequestSchema, {
              workspace,
              session,
              entries,
              expectedLeafId,
              expectedSeq,
            }),
          );
          expectSameAsFromBinary(bytes);
          expectSameAsFromBinary(framed(bytes));
        },
      ),
      { numRuns: 2000 },
    );
  }, 120_000);

  it("takes the fast path for what clients send: integers below 2^49, times after 1970, blobs", () => {
    let fast = 0;
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 3 }), (entries) => {
        const small = entries.filter(inFastRange);
        const bytes = framed(toBinary(AppendRequestSchema, request([...small, blobEntry])));
        const got = tryDecodeAppendRequest(bytes);
        expect(got).toBeDefined();
        expectIdentical(got, fromBinary(AppendRequestSchema, bytes));
        fast++;
      }),
      { numRuns: 1000 },
    );
    expect(fast).toBe(1000);
  }, 120_000);

  it("the ~500 B message of an agent's turn, and a batch, on the fast path", () => {
    const text = "The quick brown fox jumps over the lazy dog. ".repeat(11);
    const e = create(EntrySchema, {
      kind: {
        case: "message",
        value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
      },
    });
    for (const entries of [[e], [e, e, e]]) {
      const bytes = toBinary(AppendRequestSchema, request(entries, { expectedSeq: 7n }));
      const got = tryDecodeAppendRequest(bytes);
      expectIdentical(got, fromBinary(AppendRequestSchema, bytes));
    }
  });

  it("leaves to fromBinary what it does not take, with its result or error", () => {
    const base = toBinary(AppendRequestSchema, request([blobEntry]));
    const cases: [string, Uint8Array][] = [
      ["an unknown field", Buffer.concat([base, Buffer.from([0x30, 0x01])])],
      ["a field twice", Buffer.concat([base, Buffer.from([0x0a, 0x01, 0x61])])],
      ["a truncated request", base.subarray(0, base.length - 3)],
      ["a bad length", Buffer.concat([base, Buffer.from([0x12, 0x7f, 0x61])])],
      ["invalid UTF-8", Buffer.from([0x0a, 0x02, 0xc3, 0x28])],
      ["a byte order mark", Buffer.from([0x0a, 0x04, 0xef, 0xbb, 0xbf, 0x61])],
      ["an over-long varint", Buffer.from([0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])],
      ["a group", Buffer.from([0x0b, 0x0c])],
      [
        "a __proto__ tag",
        toBinary(
          AppendRequestSchema,
          request([
            create(EntrySchema, {
              id: "s",
              kind: { case: "sessionInfo", value: { tags: { __proto__: "x" } as never } },
            }),
          ]),
        ),
      ],
      [
        "a negative role",
        toBinary(
          AppendRequestSchema,
          request([
            create(EntrySchema, { kind: { case: "message", value: { role: -1 as Role } } }),
          ]),
        ),
      ],
      [
        "a negative time",
        toBinary(
          AppendRequestSchema,
          request([create(EntrySchema, { timestamp: { seconds: -5n, nanos: 0 } })]),
        ),
      ],
      [
        "a huge seq",
        toBinary(AppendRequestSchema, request([create(EntrySchema, { seq: 2n ** 63n })])),
      ],
      [
        "NaN in tool arguments",
        toBinary(
          AppendRequestSchema,
          request([
            create(EntrySchema, {
              kind: {
                case: "message",
                value: {
                  role: Role.ASSISTANT,
                  content: [
                    {
                      part: {
                        case: "toolCall",
                        value: {
                          id: "c",
                          arguments: create(ValueSchema, {
                            kind: { case: "numberValue", value: Number.NaN },
                          }),
                        },
                      },
                    },
                  ],
                },
              },
            }),
          ]),
        ),
      ],
    ];
    for (const [what, bytes] of cases) {
      expect(() => expectSameAsFromBinary(bytes), what).not.toThrow();
    }
    // the fallback did decide those it does not take
    expect(tryDecodeAppendRequest(cases[0]?.[1] as Uint8Array)).toBeUndefined();
    expect(tryDecodeAppendRequest(cases[4]?.[1] as Uint8Array)).toBeUndefined();
  });

  it("bytes cut or changed anywhere: the same result or error as fromBinary", () => {
    fc.assert(
      fc.property(
        fc.array(entryArb, { minLength: 1, maxLength: 2 }),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.boolean(),
        (entries, at, byte, cut) => {
          const bytes = Buffer.from(toBinary(AppendRequestSchema, request(entries)));
          const i = at % bytes.length;
          if (cut) expectSameAsFromBinary(bytes.subarray(0, i));
          else {
            bytes[i] = byte;
            expectSameAsFromBinary(bytes);
          }
        },
      ),
      { numRuns: 2000 },
    );
  }, 120_000);
});

/** Every 64-bit integer of `e` (seq, times, sizes, tokens) in 0 .. 2^49: what the fast path reads. */
function inFastRange(e: Entry): boolean {
  let ok = true;
  JSON.stringify(e, (_, v) => {
    if (typeof v !== "bigint") return v;
    if (v < 0n || v >= 2n ** 49n) ok = false;
    return 0;
  });
  return ok;
}

// ---------------------------------------------------------------------------
// Hand-made bytes: every message the fast path reads, as clients send it (it
// must take them, with fromBinary's very objects) and in each shape it leaves
// to fromBinary (it must decline them; decodeAppendRequest still gives
// fromBinary's result or error). toBinary never writes most of the latter.

type Bytes = number[];

function varint(v: number | bigint): Bytes {
  let n = BigInt(v);
  const out: Bytes = [];
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  out.push(Number(n));
  return out;
}
const WIRE = { varint: 0, i64: 1, len: 2 } as const;
const tagOf = (no: number, wire: number) => varint(no * 8 + wire);
/** A length-delimited field: a string, bytes or a message of the given fields. */
const ld = (no: number, ...body: Bytes[]): Bytes => {
  const b = body.flat();
  return [...tagOf(no, WIRE.len), ...varint(b.length), ...b];
};
const int = (no: number, v: number | bigint): Bytes => [...tagOf(no, WIRE.varint), ...varint(v)];
const str = (no: number, s: string): Bytes => ld(no, [...Buffer.from(s)]);
const f64 = (no: number, d: number): Bytes => [
  ...tagOf(no, WIRE.i64),
  ...Buffer.from(new Float64Array([d]).buffer),
];
const req = (...fields: Bytes[]) => Uint8Array.from(fields.flat());

/** Must be the fast path's, and fromBinary's very result (also as a view into a frame). */
function expectFast(bytes: Uint8Array): void {
  for (const b of [bytes, framed(bytes)]) {
    const got = tryDecodeAppendRequest(b);
    expect(got, "taken on the fast path").toBeDefined();
    expectIdentical(got, fromBinary(AppendRequestSchema, b));
  }
}

/** Must be left to fromBinary, whose result or error decodeAppendRequest gives. */
function expectDeclined(bytes: Uint8Array): void {
  expect(tryDecodeAppendRequest(bytes), "declined by the fast path").toBeUndefined();
  expectSameAsFromBinary(bytes);
}

const entry = (...fields: Bytes[]) => req(ld(3, ...fields));
const sessionInfo = (...fields: Bytes[]) => entry(ld(10, ...fields));
const message = (...fields: Bytes[]) => entry(ld(11, ...fields));
const part = (...fields: Bytes[]) => message(ld(2, ...fields));
const toolCallArgs = (...value: Bytes[]) => part(ld(4, str(1, "c1"), ld(3, ...value)));
const customData = (...struct: Bytes[]) => entry(ld(18, str(1, "ns"), ld(2, ...struct)));
const structEntry = (key: string, ...value: Bytes[]): Bytes => ld(1, str(1, key), ld(2, ...value));

/**
 * Each message the fast path reads: where it sits in a request, and each of
 * its fields as a client encodes it ([number, encoding, repeated or a member
 * of the message's oneof]).
 */
const MESSAGES: {
  name: string;
  at: (...body: Bytes[]) => Uint8Array;
  fields: [number, Bytes, ("repeated" | "oneof")?][];
}[] = [
  {
    name: "AppendRequest",
    at: req,
    fields: [
      [1, str(1, "ws")],
      [2, str(2, "s1")],
      [3, ld(3, str(1, "e1")), "repeated"],
      [4, str(4, "leaf")],
      [5, int(5, 7)],
    ],
  },
  {
    name: "Entry",
    at: entry,
    fields: [
      [1, str(1, "e1")],
      [2, str(2, "p1")],
      [3, ld(3, int(1, 1_700_000_000), int(2, 5))],
      [4, int(4, 3)],
      [10, ld(10, str(1, "sid")), "oneof"],
      [11, ld(11, int(1, 1)), "oneof"],
      [12, ld(12, str(1, "m")), "oneof"],
      [13, ld(13, str(1, "high")), "oneof"],
      [14, ld(14, str(1, "sum")), "oneof"],
      [15, ld(15, str(1, "sum")), "oneof"],
      [16, ld(16, str(1, "l")), "oneof"],
      [17, ld(17, str(1, "x")), "oneof"],
      [18, ld(18, str(1, "ns")), "oneof"],
    ],
  },
  {
    name: "Timestamp",
    at: (...b) => entry(ld(3, ...b)),
    fields: [
      [1, int(1, 1_700_000_000)],
      [2, int(2, 123_456_789)],
    ],
  },
  {
    name: "SessionInfo",
    at: sessionInfo,
    fields: [
      [1, str(1, "sid")],
      [2, str(2, "title")],
      [3, str(3, "/home")],
      [4, ld(4, int(1, 1), int(2, 2))],
      [5, int(5, 1)],
      [6, str(6, "parent")],
      [7, str(7, "agent")],
      [8, int(8, 2)],
      [9, ld(9, str(1, "a"), str(2, "b"))],
      [10, ld(10, structEntry("k", str(3, "v")))],
      [11, ld(11, str(1, "tk"), str(2, "tv")), "repeated"],
    ],
  },
  {
    name: "ForkedFrom",
    at: (...b) => sessionInfo(ld(9, ...b)),
    fields: [
      [1, str(1, "a")],
      [2, str(2, "b")],
    ],
  },
  {
    name: "Message",
    at: message,
    fields: [
      [1, int(1, 2)],
      [2, ld(2, str(1, "hi")), "repeated"],
      [3, str(3, "tc")],
      [4, str(4, "tn")],
      [5, int(5, 1)],
      [6, str(6, "model")],
      [7, str(7, "provider")],
      [8, ld(8, int(1, 10), int(2, 20))],
      [9, str(9, "stop")],
      [10, ld(10, structEntry("k", int(4, 1)))],
    ],
  },
  {
    name: "ContentPart",
    at: part,
    fields: [
      [1, str(1, "text"), "oneof"],
      [2, ld(2, str(1, "hmm")), "oneof"],
      [3, ld(3, str(1, "image/png")), "oneof"],
      [4, ld(4, str(1, "c1")), "oneof"],
      [5, ld(5, str(1, "ab")), "oneof"],
    ],
  },
  {
    name: "ThinkingPart",
    at: (...b) => part(ld(2, ...b)),
    fields: [
      [1, str(1, "hmm")],
      [2, str(2, "sig")],
    ],
  },
  {
    name: "ImagePart",
    at: (...b) => part(ld(3, ...b)),
    fields: [
      [1, str(1, "image/png")],
      [2, ld(2, [0, 1, 0xff])],
    ],
  },
  {
    name: "ToolCall",
    at: (...b) => part(ld(4, ...b)),
    fields: [
      [1, str(1, "c1")],
      [2, str(2, "fn")],
      [3, ld(3, str(3, "arg"))],
    ],
  },
  {
    name: "BlobRef",
    at: (...b) => part(ld(5, ...b)),
    fields: [
      [1, str(1, "ab".repeat(32))],
      [2, int(2, 123)],
      [3, int(3, 1)],
      [4, str(4, "image/png")],
      [5, str(5, "preview")],
      [6, str(6, "sig")],
    ],
  },
  {
    name: "Usage",
    at: (...b) => message(ld(8, ...b)),
    fields: [
      [1, int(1, 11)],
      [2, int(2, 22)],
      [3, int(3, 33)],
      [4, int(4, 44)],
    ],
  },
  {
    name: "ModelChange",
    at: (...b) => entry(ld(12, ...b)),
    fields: [
      [1, str(1, "m")],
      [2, str(2, "p")],
    ],
  },
  {
    name: "ThinkingLevelChange",
    at: (...b) => entry(ld(13, ...b)),
    fields: [[1, str(1, "high")]],
  },
  {
    name: "Compaction",
    at: (...b) => entry(ld(14, ...b)),
    fields: [
      [1, str(1, "sum")],
      [2, str(2, "e1"), "repeated"],
      [3, int(3, 9)],
    ],
  },
  {
    name: "BranchSummary",
    at: (...b) => entry(ld(15, ...b)),
    fields: [
      [1, str(1, "sum")],
      [2, str(2, "from")],
    ],
  },
  { name: "Label", at: (...b) => entry(ld(16, ...b)), fields: [[1, str(1, "l")]] },
  { name: "Leaf", at: (...b) => entry(ld(17, ...b)), fields: [[1, str(1, "x")]] },
  {
    name: "Custom",
    at: (...b) => entry(ld(18, ...b)),
    fields: [
      [1, str(1, "ns")],
      [2, ld(2, structEntry("k", f64(2, 1.5)))],
    ],
  },
  {
    name: "Struct (a field of ours)",
    at: customData,
    fields: [[1, structEntry("k", str(3, "v")), "repeated"]],
  },
  {
    name: "Struct (in a Value)",
    at: (...b) => toolCallArgs(ld(5, ...b)),
    fields: [[1, structEntry("k", str(3, "v")), "repeated"]],
  },
  {
    name: "ListValue",
    at: (...b) => toolCallArgs(ld(6, ...b)),
    fields: [[1, ld(1, int(4, 1)), "repeated"]],
  },
  {
    name: "Value (tool arguments)",
    at: toolCallArgs,
    fields: [
      [1, int(1, 0), "oneof"],
      [2, f64(2, -2.5), "oneof"],
      [3, str(3, "s"), "oneof"],
      [4, int(4, 1), "oneof"],
      [5, ld(5, structEntry("k", int(4, 0))), "oneof"],
      [6, ld(6, ld(1, str(3, "x"))), "oneof"],
    ],
  },
  {
    name: "Value (in a Struct field of ours)",
    at: (...b) => customData(ld(1, str(1, "k"), ld(2, ...b))),
    fields: [
      [1, int(1, 0), "oneof"],
      [2, f64(2, -2.5), "oneof"],
      [3, str(3, "s"), "oneof"],
      [4, int(4, 1), "oneof"],
      [5, ld(5, structEntry("k", int(4, 0))), "oneof"],
      [6, ld(6, ld(1, str(3, "x"))), "oneof"],
    ],
  },
];

/** The field's number with each wire type it does not have (a one-byte payload where it takes one). */
function wrongWireTypes(no: number, field: Bytes): Bytes[] {
  const wire = (field[0] as number) & 7;
  const all: Bytes[] = [int(no, 1), f64(no, 1), ld(no, [0x61])];
  return all.filter((_, w) => w !== wire);
}

/**
 * Unknown fields of each wire type, numbers one and two bytes long (15 is an
 * Entry's branchSummary, 99 nobody's), an empty one (it would read as an
 * empty message) and a tag with nothing after it.
 */
const UNKNOWN: Bytes[] = [
  int(15, 1),
  f64(15, 1),
  ld(15, [0x61]),
  int(99, 1),
  ld(99, [0x08, 0x01]),
  ld(99, []),
  tagOf(99, WIRE.varint),
];

describe("decodeAppendRequest on hand-made bytes", () => {
  for (const { name, at, fields } of MESSAGES) {
    const oneof = fields.filter(([, , k]) => k === "oneof").map(([, f]) => f);
    // every field a client may send together: of the oneof, its first member
    const every = fields.filter(([, f, k]) => k !== "oneof" || f === oneof[0]).map(([, f]) => f);
    it(`${name}: every field, each field alone and none, on the fast path`, () => {
      expectFast(at(...every));
      expectFast(at(...every.slice().reverse()));
      for (const f of every) expectFast(at(f));
      expectFast(at());
    });

    it(`${name}: a repeated field several times on the fast path, a singular one twice declined`, () => {
      for (const [, f, kind] of fields) {
        if (kind === "repeated") expectFast(at(f, f, f));
        else expectDeclined(at(f, f));
      }
    });

    if (oneof.length > 0) {
      it(`${name}: a second member of the oneof declined`, () => {
        for (const a of oneof) for (const b of oneof) if (a !== b) expectDeclined(at(a, b));
      });
    }

    it(`${name}: an unknown field number declined, alone, first or last`, () => {
      for (const u of UNKNOWN) {
        expectDeclined(at(u));
        expectDeclined(at(u, ...every));
        expectDeclined(at(...every, u));
      }
    });

    it(`${name}: a known field number with another wire type declined`, () => {
      for (const [no, f] of fields) {
        for (const w of wrongWireTypes(no, f)) {
          expectDeclined(at(w));
          expectDeclined(at(...every.filter((g) => g !== f), w));
        }
      }
    });
  }
});

describe("decodeAppendRequest on hand-made bytes: map entries", () => {
  const tags = (...entry: Bytes[]) => sessionInfo(str(1, "sid"), ld(11, ...entry));
  const metadata = (...entry: Bytes[]) => customData(ld(1, ...entry));
  const inValue = (...entry: Bytes[]) => toolCallArgs(ld(5, ld(1, ...entry)));

  it("a tags entry of key and value on the fast path, an empty value too", () => {
    expectFast(tags(str(1, "k"), str(2, "v")));
    expectFast(tags(str(1, "k"), str(2, "")));
    expectFast(tags(str(1, ""), str(2, "v")));
  });

  it("a tags entry not of key then value declined: either alone, none, swapped, a key twice, an extra field", () => {
    expectDeclined(tags(str(1, "k")));
    expectDeclined(tags(str(2, "v")));
    expectDeclined(tags());
    expectDeclined(tags(str(2, "v"), str(1, "k")));
    expectDeclined(tags(str(1, "k"), str(1, "k2"), str(2, "v")));
    expectDeclined(tags(str(1, "k"), str(2, "v"), int(3, 1)));
    // bytes after the value that would read as the SessionInfo's own sessionId (not set before)
    expectDeclined(sessionInfo(ld(11, str(1, "k"), str(2, "v"), str(1, "x"))));
    expectDeclined(tags(str(1, "k"), str(2, "v"), str(1, "x")));
    expectDeclined(tags(str(1, "k"), int(2, 1)));
  });

  it("a __proto__ key declined, in tags and in Struct data (an object would not keep it)", () => {
    expectDeclined(tags(str(1, "__proto__"), str(2, "v")));
    expectDeclined(metadata(str(1, "__proto__"), ld(2, ld(5, structEntry("a", int(4, 1))))));
    expectDeclined(metadata(str(1, "__proto__"), ld(2, str(3, "s"))));
    expectDeclined(inValue(str(1, "__proto__"), ld(2, ld(5, structEntry("a", int(4, 1))))));
  });

  for (const [where, at] of [
    ["a Struct field of ours", metadata],
    ["a Struct in a Value", inValue],
  ] as const) {
    it(`${where}: an entry of key and value on the fast path, an empty Value too`, () => {
      expectFast(at(str(1, "k"), ld(2, int(4, 1))));
      expectFast(at(str(1, "k"), ld(2)));
      expectFast(at(str(1, ""), ld(2, str(3, ""))));
    });

    it(`${where}: an entry not of key then value declined`, () => {
      expectDeclined(at(str(1, "k")));
      expectDeclined(at(ld(2, int(4, 1))));
      expectDeclined(at());
      expectDeclined(at(ld(2, int(4, 1)), str(1, "k")));
      expectDeclined(at(str(1, "k"), str(1, "k2"), ld(2, int(4, 1))));
      expectDeclined(at(str(1, "k"), ld(2, int(4, 1)), int(3, 1)));
      // bytes after the value that would read as a second entry of the Struct
      expectDeclined(at(str(1, "a"), ld(2, int(4, 1)), structEntry("b", int(4, 1))));
    });
  }
});

describe("decodeAppendRequest on hand-made bytes: lengths and nesting", () => {
  /** Tool arguments of lists in lists, the deepest message `depth` levels below the request. */
  function nestedTo(depth: number): Uint8Array {
    // request > entry 1 > message 2 > part 3 > tool call 4 > Value 5 > ListValue 6 > Value 7 ...
    let body: Bytes = [];
    for (let d = depth; d > 5; d--) body = ld(d % 2 === 0 ? 6 : 1, body);
    return toolCallArgs(body);
  }

  it(`data nested ${32} messages deep on the fast path, one deeper declined`, () => {
    expectFast(nestedTo(31));
    expectFast(nestedTo(32));
    expectDeclined(nestedTo(33));
    expectDeclined(nestedTo(34));
  });

  it("nesting counts depth, not messages: 40 entries of deep data on the fast path", () => {
    const one = [...nestedTo(30)].slice(0);
    expectFast(Uint8Array.from(Array.from({ length: 40 }, () => one).flat()));
  });

  it("a message whose last field runs past its length declined", () => {
    // the Entry's length takes the seq's tag and first byte; its second byte lies after it
    expectDeclined(req([0x1a, 0x02, 0x20, 0x81, 0x01]));
    expectDeclined(req([0x1a, 0x02, 0x20, 0x81, 0x01], str(1, "ws")));
    // a Timestamp's nanos the same way, inside an Entry that goes on
    expectDeclined(entry([0x1a, 0x02, 0x10, 0x81, 0x01], str(1, "e1")));
  });

  it("a length past the end of its message or of the request declined", () => {
    expectDeclined(entry([0x0a, 0x05, 0x61]));
    expectDeclined(req([0x0a, 0x05, 0x61]));
    expectDeclined(entry(ld(3, [0x08, 0x01]), [0x12, 0x7f]));
  });

  it("a number Value whose eight bytes do not fit in it declined", () => {
    // Value of length 5 holding a double's tag and 4 bytes, more bytes after it
    expectDeclined(toolCallArgs([0x11, 0, 0, 0, 0x40]).slice(0));
    const cut = [...toolCallArgs(f64(2, 1.5))];
    const at = cut.indexOf(0x11);
    expect(at).toBeGreaterThan(0);
    // the Value's length one byte short: the double spills out of it
    cut[at - 1] = (cut[at - 1] as number) - 1;
    expectDeclined(Uint8Array.from(cut));
  });

  it("a tool call followed by more parts and fields on the fast path", () => {
    const call = ld(2, ld(4, str(1, "c1"), str(2, "fn")));
    expectFast(message(call, ld(2, str(1, "after")), str(3, "tc")));
    expectFast(message(call, call, int(5, 1)));
    expectFast(message(ld(2, ld(4, str(1, "c1"), ld(3, int(4, 1)))), str(9, "stop")));
  });
});

describe("decodeAppendRequest on hand-made bytes: integers and strings", () => {
  const overLong = (v: number, n: number): Bytes => {
    const b = varint(v);
    while (b.length < n) {
      b[b.length - 1] = (b[b.length - 1] as number) | 0x80;
      b.push(0);
    }
    return b;
  };

  it("uint32 up to 2^32 - 1 on the fast path; 2^32 and over-long varints declined", () => {
    expectFast(sessionInfo(int(5, 2 ** 32 - 1)));
    expectFast(sessionInfo(int(8, 2 ** 32 - 1)));
    expectFast(sessionInfo([0x28, ...overLong(1, 5)]));
    expectDeclined(sessionInfo(int(5, 2 ** 32)));
    expectDeclined(sessionInfo(int(8, 2 ** 35 + 1)));
    expectDeclined(sessionInfo([0x28, ...overLong(1, 6)]));
    expectDeclined(sessionInfo([0x28, ...overLong(0, 10)]));
    // a tag and a length over-long
    expectDeclined(req([...overLong(0x0a, 6), 0x01, 0x61]));
    expectDeclined(req([0x0a, ...overLong(1, 6), 0x61]));
  });

  it("int32 and enums up to 2^31 - 1 on the fast path; 2^31 and negatives declined", () => {
    expectFast(message(int(1, 2 ** 31 - 1)));
    expectFast(part(ld(5, int(3, 2 ** 31 - 1))));
    expectFast(entry(ld(3, int(2, 2 ** 31 - 1))));
    expectDeclined(message(int(1, 2 ** 31)));
    expectDeclined(part(ld(5, int(3, 2 ** 31))));
    expectDeclined(entry(ld(3, int(2, 2 ** 31))));
    expectDeclined(entry(ld(3, int(2, 2n ** 64n - 1n))));
    expectDeclined(toolCallArgs(int(1, 2 ** 31)));
  });

  it("bool 0 and 1 on the fast path; 2 and more declined", () => {
    expectFast(message(int(5, 0)));
    expectFast(message(int(5, 1)));
    expectFast(toolCallArgs(int(4, 0)));
    expectDeclined(message(int(5, 2)));
    expectDeclined(message(int(5, 2 ** 31)));
    expectDeclined(toolCallArgs(int(4, 2)));
  });

  it("64-bit integers below 2^49 on the fast path; 2^49 and more declined", () => {
    for (const v of [0, 1, 127, 128, 2 ** 32, 2 ** 49 - 1]) {
      expectFast(req(int(5, v)));
      expectFast(entry(int(4, v)));
      expectFast(entry(ld(3, int(1, v))));
      expectFast(message(ld(8, int(1, v), int(4, v))));
    }
    for (const v of [2n ** 49n, 2n ** 63n, 2n ** 64n - 1n]) {
      expectDeclined(req(int(5, v)));
      expectDeclined(entry(ld(3, int(1, v))));
      expectDeclined(entry(ld(14, int(3, v))));
    }
  });

  it("a varint cut by the end of the request declined", () => {
    expectDeclined(req([0x28, 0x81]));
    expectDeclined(req([0x28, 0x81, 0x81, 0x81, 0x81, 0x81]));
    expectDeclined(req([0x8a]));
    expectDeclined(entry([0x20, 0x80]).slice(0, 4));
  });

  it("ASCII (0x7f included) and well-formed UTF-8 on the fast path; a lone 0x80 or any bad byte declined", () => {
    expectFast(req(ld(1, [0x7f, 0x61])));
    expectFast(req(str(1, "é"), str(2, "日本 😀")));
    expectFast(req(ld(1, [0x61, 0xc3, 0xa9])));
    expectDeclined(req(ld(1, [0x80])));
    expectDeclined(req(ld(1, [0x61, 0x80])));
    expectDeclined(req(ld(1, [0xff])));
    expectDeclined(req(ld(1, [0xed, 0xa0, 0x80])));
  });

  it("checks UTF-8 strictly from the first non-ASCII string a fresh module meets", async () => {
    // The decoder is made on first use and kept: a fresh copy of this module (its own
    // module id, the rest of the module graph shared) makes it again.
    const freshId = "./append-request-binary.js?fresh-utf8-decoder";
    const fresh = (await import(freshId)) as typeof import("./append-request-binary.js");
    expect(fresh.tryDecodeAppendRequest(req(ld(1, [0xc3, 0x28])))).toBeUndefined();
    expect(fresh.tryDecodeAppendRequest(req(str(1, "é")))?.workspace).toBe("é");
    expect(fresh.tryDecodeAppendRequest(req(ld(1, [0x80])))).toBeUndefined();
  });

  it("an image part without data has an empty array of its own, as fromBinary gives it", () => {
    const image = ld(2, ld(3, str(1, "image/png")));
    const bytes = message(image, image);
    const dataOf = (r: AppendRequest | undefined) =>
      ((r?.entries[0]?.kind.value as Message | undefined)?.content ?? []).map(
        (p) => (p.part.value as ImagePart).data,
      );
    const got = dataOf(tryDecodeAppendRequest(bytes));
    const want = dataOf(fromBinary(AppendRequestSchema, bytes));
    expect(got).toHaveLength(2);
    expect(got[0] === got[1]).toBe(want[0] === want[1]);
    expect(got[0] === dataOf(tryDecodeAppendRequest(bytes))[0]).toBe(false);
  });
});
