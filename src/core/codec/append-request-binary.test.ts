import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BlobPart, type Entry, EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
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
