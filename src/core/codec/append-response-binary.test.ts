import { create, equals, toBinary } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema, timestampFromMs } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AppendedEntry,
  AppendedEntrySchema,
  type AppendResponse,
  AppendResponseSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import {
  appendResponseFrame,
  appendResponseOf,
  encodeAppendResponse,
} from "./append-response-binary.js";
import { encodeResponse } from "./response-binary.js";

const MAX_U64 = 2n ** 64n - 1n;
/** Strings with the edge cases of the wire: empty, non-ASCII, astral. */
const text = fc.oneof(fc.constant(""), fc.string(), fc.string({ unit: "grapheme" }));
const u64 = fc.oneof(fc.constant(0n), fc.constant(MAX_U64), fc.bigInt({ min: 0n, max: MAX_U64 }));
const timestamp = fc.record({
  seconds: fc.oneof(
    fc.constant(0n),
    fc.constant(-62135596800n),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  ),
  nanos: fc.oneof(fc.constant(0), fc.integer({ min: -999_999_999, max: 999_999_999 })),
});
const appended = fc.record(
  {
    id: text,
    parentId: fc.option(text, { nil: undefined }),
    seq: u64,
    timestamp: fc.option(timestamp, { nil: undefined }),
  },
  { requiredKeys: ["id", "seq"] },
);
const response = fc.record({
  entries: fc.array(appended, { maxLength: 4 }),
  leafId: text,
  headSeq: u64,
  deduplicated: fc.boolean(),
});

describe("encodeAppendResponse", () => {
  it("writes the bytes toBinary writes, for any AppendResponse", () => {
    fc.assert(
      fc.property(response, (init) => {
        const m = create(AppendResponseSchema, init);
        const bytes = encodeAppendResponse(m);
        expect(bytes).toBeDefined();
        expect(Buffer.from(bytes as Uint8Array)).toEqual(
          Buffer.from(toBinary(AppendResponseSchema, m)),
        );
      }),
      { numRuns: 500 },
    );
  });

  it("declines a message with unknown fields, anywhere; encodeResponse then writes them too", () => {
    const unknown = [{ no: 99, wireType: 0, data: new Uint8Array([1]) }];
    /**
     * A response with one entry (its own: create keeps a message it is
     * given, so a shared one would carry every case's mark), unknown fields
     * set by `mark` on one of its parts.
     */
    const withUnknown = (mark: (m: AppendResponse) => { $unknown?: unknown[] }) => {
      const entry = create(AppendedEntrySchema, {
        id: "e1",
        seq: 1n,
        timestamp: timestampFromMs(1_700_000_000_000),
      });
      const m = create(AppendResponseSchema, { entries: [entry] });
      mark(m).$unknown = unknown;
      return m;
    };
    const cases = [
      withUnknown((m) => m),
      withUnknown((m) => m.entries[0] as AppendedEntry),
      withUnknown((m) => m.entries[0]?.timestamp as Timestamp),
    ];
    for (const m of cases) {
      expect(encodeAppendResponse(m)).toBeUndefined();
      expect(Buffer.from(encodeResponse(AppendResponseSchema, m))).toEqual(
        Buffer.from(toBinary(AppendResponseSchema, m)),
      );
    }
  });

  it("encodes a message whose unknown-field lists are there but empty", () => {
    const m = create(AppendResponseSchema, {
      entries: [create(AppendedEntrySchema, { id: "e1", seq: 1n, timestamp: timestampFromMs(1) })],
      leafId: "e1",
    });
    m.$unknown = [];
    (m.entries[0] as AppendedEntry).$unknown = [];
    ((m.entries[0] as AppendedEntry).timestamp as Timestamp).$unknown = [];
    const bytes = encodeAppendResponse(m);
    expect(bytes).toBeDefined();
    expect(Buffer.from(bytes as Uint8Array)).toEqual(
      Buffer.from(toBinary(AppendResponseSchema, m)),
    );
  });

  it("writes lengths and numbers at the varint's byte bounds as toBinary does", () => {
    // 127 / 128 and 16,383 / 16,384: one byte more at each bound.
    for (const n of [127, 128, 129, 16_383, 16_384]) {
      const id = "x".repeat(n);
      const m = create(AppendResponseSchema, {
        entries: [create(AppendedEntrySchema, { id, seq: BigInt(n) })],
        leafId: id,
        headSeq: BigInt(n),
      });
      expect(Buffer.from(encodeAppendResponse(m) as Uint8Array), `at ${n}`).toEqual(
        Buffer.from(toBinary(AppendResponseSchema, m)),
      );
    }
  });

  it("is what encodeResponse uses for an AppendResponse", () => {
    // Both write the same bytes, so the bytes cannot tell which one ran: the
    // hand-written encoder returns a Buffer, toBinary a plain Uint8Array.
    const m = create(AppendResponseSchema, { leafId: "x", headSeq: 3n });
    expect(Buffer.isBuffer(toBinary(AppendResponseSchema, m))).toBe(false);
    expect(Buffer.isBuffer(encodeResponse(AppendResponseSchema, m))).toBe(true);
  });

  it("frames an append's outcome for gRPC: the bytes toBinary writes of appendResponseOf's response", () => {
    const outcome = fc.record({
      entries: fc.array(appended, { maxLength: 4 }),
      leafId: text,
      headSeq: fc.nat(),
      deduplicated: fc.boolean(),
    });
    fc.assert(
      fc.property(outcome, (o) => {
        const withTimestamps = {
          ...o,
          entries: o.entries.map((e) => ({
            ...e,
            timestamp: e.timestamp && create(TimestampSchema, e.timestamp),
          })),
        };
        const frame = appendResponseFrame(withTimestamps);
        // The response an append's answer is, built field by field here.
        const response = create(AppendResponseSchema, {
          entries: o.entries.map((e) =>
            create(AppendedEntrySchema, {
              id: e.id,
              parentId: e.parentId,
              seq: e.seq,
              timestamp: e.timestamp,
            }),
          ),
          leafId: o.leafId,
          headSeq: BigInt(o.headSeq),
          deduplicated: o.deduplicated,
        });
        // appendResponseOf (what both fronts answer when no frame is made) builds it too.
        expect(equals(AppendResponseSchema, appendResponseOf(withTimestamps), response)).toBe(true);
        const bytes = Buffer.from(toBinary(AppendResponseSchema, response));
        expect(frame).toBeDefined();
        expect((frame as Buffer)[0]).toBe(0);
        expect((frame as Buffer).readUInt32BE(1)).toBe(bytes.length);
        expect((frame as Buffer).subarray(5)).toEqual(bytes);
      }),
      { numRuns: 500 },
    );
    const timestamp = timestampFromMs(1_700_000_000_000);
    timestamp.$unknown = [{ no: 99, wireType: 0, data: new Uint8Array([1]) }];
    const entry = { id: "e1", seq: 1n, timestamp };
    expect(
      appendResponseFrame({ entries: [entry], leafId: "e1", headSeq: 1, deduplicated: false }),
    ).toBeUndefined();
  });
});
