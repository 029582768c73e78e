import { toJsonString } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { EntrySchema, WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { user } from "../../../test/support/fixtures.js";
import { withheldMarker } from "../../core/withheld.js";
import { newKey } from "../seal/aead.js";
import { SessionSealer } from "../seal/sealed-payload.js";
import { checkFrame, decodePayload, encodeRecord } from "./record.js";
import { ErasedKey } from "./session-keys.js";

/**
 * decodePayload on sealed records (seal/sealed-payload.ts): no key, a
 * clear part that is not the header's entry, an erased session's records,
 * a withheld entry's own marker kept through an erasure.
 */
const sealer = new SessionSealer("w", "s", newKey());
const erasedMark = withheldMarker(WithheldReason.ERASED, "ops", timestampNow(), "gdpr");
const redactedMark = withheldMarker(WithheldReason.REDACTED, "alice", timestampNow(), "pasted key");

/** The entry `id` at `seq`, with `withheld` when given. */
function entryAt(id: string, seq: number, withheld?: typeof redactedMark) {
  const e = user(id, `SECRET of ${id}`);
  e.seq = BigInt(seq);
  if (withheld !== undefined) e.withheld = withheld;
  return e;
}

/** The record line (no newline) of `e` stored as `payload`, and its frame. */
function record(e: ReturnType<typeof entryAt>, payload: string) {
  const buf = Buffer.from(encodeRecord(e, payload).trimEnd());
  const frame = checkFrame(buf, 0, buf.length);
  if (typeof frame === "string") throw new Error(frame);
  return { buf, frame };
}

const sealedRecord = (e: ReturnType<typeof entryAt>) =>
  record(e, sealer.sealPayload(toJsonString(EntrySchema, e)));

describe("decoding sealed records", () => {
  it("a sealed record read without any key: FAILED_PRECONDITION naming the entry, not a damaged record", () => {
    const { buf, frame } = sealedRecord(entryAt("u1", 2));
    expect(buf.includes("SECRET")).toBe(false);
    expect(() => decodePayload(buf, frame)).toThrow(
      expect.objectContaining({
        code: "FAILED_PRECONDITION",
        message: expect.stringContaining('"u1"'),
      }),
    );
    expect(decodePayload(buf, frame, sealer)).toMatchObject({ id: "u1", seq: 2n });
  });

  it("a sealed record whose clear part is not the header's entry is refused for that reason, before any opening", () => {
    // Sealed at seq 3, framed under seq 4 (a valid checksum over the moved bytes).
    const e = entryAt("u1", 3);
    const payload = sealer.sealPayload(toJsonString(EntrySchema, e));
    e.seq = 4n;
    const { buf, frame } = record(e, payload);
    let opened = 0;
    const counting = {
      open(...a: Parameters<SessionSealer["open"]>) {
        opened++;
        return sealer.open(...a);
      },
    };
    expect(decodePayload(buf, frame, counting)).toBe("header seq 4 but entry seq 3");
    expect(opened).toBe(0);
  });

  it("an erased session's sealed record reads with the erasure's marker; one withheld before keeps its own", () => {
    const erased = new ErasedKey(erasedMark);
    const plain = sealedRecord(entryAt("u1", 2));
    expect(decodePayload(plain.buf, plain.frame, erased)).toMatchObject({
      id: "u1",
      withheld: erasedMark,
    });
    const redacted = sealedRecord(entryAt("u2", 3, redactedMark));
    expect(decodePayload(redacted.buf, redacted.frame, erased)).toMatchObject({
      id: "u2",
      withheld: redactedMark,
    });
  });

  it("a clear record read with an erased session's opener is as stored: withheld or not", () => {
    const erased = new ErasedKey(erasedMark);
    const redacted = entryAt("u3", 4, redactedMark);
    const r = record(redacted, toJsonString(EntrySchema, redacted));
    expect(decodePayload(r.buf, r.frame, erased)).toMatchObject({
      id: "u3",
      withheld: redactedMark,
    });
    const clear = entryAt("u4", 5);
    const c = record(clear, toJsonString(EntrySchema, clear));
    const decoded = decodePayload(c.buf, c.frame, erased);
    expect(typeof decoded === "string" ? decoded : decoded.withheld).toBeUndefined();
  });

  it("a sealed record that does not open is a reason naming the entry (DATA_LOSS where reported)", () => {
    const { buf, frame } = sealedRecord(entryAt("u5", 6));
    const other = new SessionSealer("w", "s", newKey());
    expect(decodePayload(buf, frame, other)).toMatch(/"u5".*does not open/);
  });
});
