import { create, toJsonString } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { type Entry, EntrySchema, WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { entryArb } from "../../../test/support/entry-arbitrary.js";
import { user } from "../../../test/support/fixtures.js";
import { isSessiondError } from "../../core/errors.js";
import { withheldMarker } from "../../core/withheld.js";
import { checkFrame, decodePayload, encodeRecords } from "../jsonl/record.js";
import { newKey } from "./aead.js";
import {
  MissingKey,
  SEALED_KINDS,
  SessionSealer,
  sealedBounds,
  sealedTextBounds,
} from "./sealed-payload.js";

const idArb = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);

/** Random entries of every kind with what a log holds: valid ids and a seq from 1. */
const storedEntry: fc.Arbitrary<Entry> = fc
  .tuple(entryArb, idArb, fc.option(idArb, { nil: undefined }), fc.integer({ min: 1, max: 1e9 }))
  .map(([e, id, parentId, seq]) => {
    e.id = id;
    e.parentId = parentId;
    e.seq = BigInt(seq);
    return e;
  });

const sealer = new SessionSealer("ws", "s1", newKey());

function decode(payload: string, seq: number, opener = sealer as SessionSealer | MissingKey) {
  const buf = Buffer.from(payload);
  return decodePayload(buf, { seq, start: 0, end: buf.length }, opener);
}

describe("sealed payloads", () => {
  it("a sealed payload opens to the entry it was sealed from, for every kind", () => {
    fc.assert(
      fc.property(storedEntry, (e) => {
        const canonical = toJsonString(EntrySchema, e);
        const stored = sealer.sealPayload(canonical);
        const back = decode(stored, Number(e.seq));
        expect(typeof back).not.toBe("string");
        expect(toJsonString(EntrySchema, back as Entry)).toBe(canonical);
      }),
      { numRuns: 400 },
    );
  });

  it("a batch's records (encodeRecords, which lays the sealed pieces out itself) store what sealPayload stores: every frame checks and opens to its entry", () => {
    // Some with a withheld marker whose `why` is any text: the clear head before the kind is not always ASCII.
    const withWhy = fc.tuple(
      storedEntry,
      fc.option(fc.string({ unit: "grapheme" }), { nil: undefined }),
    );
    const batchArb = fc.array(withWhy, { minLength: 1, maxLength: 5 }).map((es) =>
      es.map(([e, why], i) => {
        e.seq = BigInt(100 + i);
        if (why !== undefined)
          e.withheld = withheldMarker(WithheldReason.REDACTED, "ops", timestampNow(), why);
        return e;
      }),
    );
    fc.assert(
      fc.property(batchArb, (batch) => {
        const texts: string[] = [];
        const bytes = encodeRecords(batch, [], texts, sealer);
        let start = 0;
        for (const [i, e] of batch.entries()) {
          const end = bytes.indexOf(0x0a, start);
          const frame = checkFrame(bytes, start, end);
          if (typeof frame === "string") throw new Error(frame);
          expect(frame.seq).toBe(100 + i);
          const canonical = toJsonString(EntrySchema, e);
          expect(texts[i]).toBe(canonical);
          const stored = bytes.toString("utf8", frame.start, frame.end);
          // The same layout as sealPayload's (its seal differs: a fresh nonce).
          const bounds = sealedTextBounds(stored);
          const again = sealer.sealPayload(canonical);
          expect(bounds === undefined ? stored : stored.slice(0, bounds.sealedStart)).toBe(
            bounds === undefined ? again : again.slice(0, bounds.sealedStart),
          );
          const back = decodePayload(bytes, frame, sealer);
          expect(typeof back).not.toBe("string");
          expect(toJsonString(EntrySchema, back as Entry)).toBe(canonical);
          start = end + 1;
        }
        expect(start).toBe(bytes.length);
      }),
      { numRuns: 200 },
    );
  });

  it("only the content is sealed: the structure is in clear, the clear kinds unchanged", () => {
    fc.assert(
      fc.property(storedEntry, (e) => {
        const canonical = toJsonString(EntrySchema, e);
        const stored = sealer.sealPayload(canonical);
        const kind = e.kind.case;
        const sealedKind = kind !== undefined && SEALED_KINDS.has(kind);
        const bounds = sealedBounds(Buffer.from(stored), 0, Buffer.byteLength(stored));
        expect(bounds !== undefined).toBe(sealedKind);
        if (!sealedKind) {
          expect(stored).toBe(canonical);
          return;
        }
        const prefix = canonical.slice(0, canonical.indexOf(`"${kind}":`) + kind.length + 3);
        expect(stored.startsWith(prefix)).toBe(true);
        expect(stored.startsWith(`${prefix}{"@sealed":"`)).toBe(true);
        // A clear payload is never taken for a sealed one.
        expect(sealedBounds(Buffer.from(canonical), 0, Buffer.byteLength(canonical))).toBe(
          undefined,
        );
      }),
      { numRuns: 400 },
    );
  });

  it("a sealed content moved to another entry, seq, session, workspace or kind does not open", () => {
    const message = (id: string, seq: number, text: string) =>
      toJsonString(
        EntrySchema,
        create(EntrySchema, {
          id,
          seq: BigInt(seq),
          kind: {
            case: "message",
            value: { role: 1, content: [{ part: { case: "text", value: text } }] },
          },
        }),
      );
    const a = sealer.sealPayload(message("a", 2, "secret-a"));
    const b = message("b", 3, "other");
    const moved = (to: string, from: string) =>
      to.slice(0, to.indexOf('{"@sealed"')) + from.slice(from.indexOf('{"@sealed"'));
    // Another entry (and seq) of the same session.
    expect(decode(moved(sealer.sealPayload(b), a), 3)).toMatch(
      /entry "b" \(seq 3\) does not open: its sealed content fails authentication/,
    );
    // Same entry id at another seq.
    expect(decode(moved(sealer.sealPayload(message("a", 5, "x")), a), 5)).toMatch(/does not open/);
    // Another session, another workspace, the same data key.
    const key = newKey();
    const here = new SessionSealer("ws", "s1", key);
    const sealedHere = here.sealPayload(message("a", 2, "secret-a"));
    for (const there of [new SessionSealer("ws", "s2", key), new SessionSealer("ws2", "s1", key)]) {
      expect(decode(sealedHere, 2, there)).toMatch(/entry "a" \(seq 2\) does not open/);
    }
    // Another kind's name in clear.
    expect(decode(sealedHere.replace('"message":', '"custom":'), 2, here)).toMatch(/does not open/);
    // Another data key.
    expect(decode(sealedHere, 2, new SessionSealer("ws", "s1", newKey()))).toMatch(/does not open/);
    // A flipped byte of the sealed content.
    const at = sealedHere.indexOf('{"@sealed":"') + 20;
    const flipped =
      sealedHere.slice(0, at) + (sealedHere[at] === "A" ? "B" : "A") + sealedHere.slice(at + 1);
    expect(decode(flipped, 2, here)).toMatch(/does not open/);
    // And it still opens where it belongs.
    expect(typeof decode(sealedHere, 2, here)).not.toBe("string");
  });

  it("without a key a sealed payload is FAILED_PRECONDITION naming workspace, session and entry", () => {
    const stored = sealer.sealPayload(
      toJsonString(
        EntrySchema,
        create(EntrySchema, {
          id: "e7",
          seq: 7n,
          kind: { case: "custom", value: { namespace: "n" } },
        }),
      ),
    );
    let caught: unknown;
    try {
      decode(stored, 7, new MissingKey("ws", "s1", "no keyring is configured"));
    } catch (err) {
      caught = err;
    }
    expect(isSessiondError(caught, "FAILED_PRECONDITION")).toBe(true);
    expect((caught as Error).message).toBe(
      'session "s1" in workspace "ws" is encrypted (entry "e7", seq 7) but no keyring is configured',
    );
  });

  it("sealedTextBounds (a payload as a string) finds what sealedBounds finds in its bytes, on sealed, clear and hostile payloads", () => {
    // Clear payloads that hold the mark inside a Struct, an escaped one in a
    // text, or end like a sealed one without being it.
    const hostile = fc
      .tuple(fc.string(), fc.constantFrom("", "x", '"', "\\", "}"))
      .map(
        ([t, tail]) =>
          `{"id":"a","seq":"2","message":{"metadata":{"@sealed":"${t}${tail}"},"toolCallId":"t"}}`,
      );
    const payload = fc.oneof(
      storedEntry.map((e) => sealer.sealPayload(toJsonString(EntrySchema, e))),
      storedEntry.map((e) => toJsonString(EntrySchema, e)),
      hostile,
      fc.string().map((t) => `{"id":"b","message":{"@sealed":"${t}"}}`),
      fc
        .array(fc.constantFrom('{"@sealed":"', '"', "}", "a", "Zm9v", '\\"', "é"), {
          maxLength: 12,
        })
        .map((parts) => `{"id":"c",${parts.join("")}"}}`),
    );
    // The definition (the last `{"@sealed":"` with no quote after it until
    // the closing one), searched for the whole mark as the first version did.
    const reference = (buf: Buffer) => {
      const end = buf.length;
      if (end < 16 || !buf.subarray(end - 3).equals(Buffer.from('"}}'))) return undefined;
      const at = buf.subarray(0, end - 3).lastIndexOf('{"@sealed":"');
      if (at < 0 || buf.indexOf('"', at + 12) !== end - 3) return undefined;
      return { valueStart: at, sealedStart: at + 12, sealedEnd: end - 3 };
    };
    fc.assert(
      fc.property(payload, (p) => {
        const buf = Buffer.from(p);
        const bytes = sealedBounds(buf, 0, buf.length);
        expect(bytes).toEqual(reference(buf));
        const text = sealedTextBounds(p);
        expect(text !== undefined).toBe(bytes !== undefined);
        if (text === undefined || bytes === undefined) return;
        expect(p.slice(0, text.valueStart)).toBe(buf.toString("utf8", 0, bytes.valueStart));
        expect(p.slice(text.sealedStart, text.sealedEnd)).toBe(
          buf.toString("utf8", bytes.sealedStart, bytes.sealedEnd),
        );
      }),
      { numRuns: 600 },
    );
  });

  it("sealedBounds reads only the payload's bytes, not the file around it (a search back to the file's start made every decode of a clear record cost the file before it)", () => {
    const clear = toJsonString(
      EntrySchema,
      create(EntrySchema, {
        id: "m",
        seq: 9n,
        kind: { case: "message", value: { role: 2, stopReason: "stop" } },
      }),
    );
    expect(clear.endsWith('"}}')).toBe(true);
    const before = Buffer.alloc(100_000, 0x20);
    const buf = Buffer.concat([before, Buffer.from(clear), before]);
    const start = before.length;
    const end = start + Buffer.byteLength(clear);
    const spy = vi.spyOn(Buffer.prototype, "lastIndexOf");
    const indexOf = vi.spyOn(Buffer.prototype, "indexOf");
    try {
      expect(sealedBounds(buf, start, end)).toBe(undefined);
      const searched = [...spy.mock.contexts, ...indexOf.mock.contexts] as Buffer[];
      for (const b of searched) expect(b === buf).toBe(false);
    } finally {
      spy.mockRestore();
      indexOf.mockRestore();
    }
  });

  it("a content larger than seal's reused buffer (64 KiB) seals and opens whole", () => {
    const e = user("big", "é".repeat(70_000));
    e.seq = 7n;
    const canonical = toJsonString(EntrySchema, e);
    const back = decode(sealer.sealPayload(canonical), 7);
    expect(toJsonString(EntrySchema, back as Entry)).toBe(canonical);
  });

  it("two seals of the same content differ (random nonce)", () => {
    const c = toJsonString(
      EntrySchema,
      create(EntrySchema, {
        id: "x",
        seq: 1n,
        kind: { case: "custom", value: { namespace: "n" } },
      }),
    );
    expect(sealer.sealPayload(c)).not.toBe(sealer.sealPayload(c));
  });
});
