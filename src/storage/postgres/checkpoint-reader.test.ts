import { create, toJsonString } from "@bufbuild/protobuf";
import { describe, expect, it, vi } from "vitest";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { isSessiondError } from "../../core/errors.js";
import { newKey } from "../seal/aead.js";
import { checkOf, OpenedSegments } from "../seal/checkpoint-segments.js";
import { SessionSealer } from "../seal/sealed-payload.js";
import { checkpointSegments, type SegmentRow, type WholeRow } from "./checkpoint.js";
import { CheckpointReader, type ColdRow } from "./checkpoint-reader.js";

/**
 * The cold read's use of a checkpoint on PostgreSQL, without a database:
 * a short row (seq and xmin, no payload) is taken from the checkpoint
 * when its version is the entry's; any other is read whole and compared
 * byte for byte. checkpoint.test.ts runs the same against PostgreSQL.
 */
const KEY = { workspace: "w", sessionId: "s" };
const sealer = new SessionSealer(KEY.workspace, KEY.sessionId, newKey());
const keying = { sealer, opener: sealer };
const N = 6;

const canonical = (seq: number, text: string) =>
  toJsonString(
    EntrySchema,
    create(EntrySchema, {
      id: `m${seq}`,
      seq: BigInt(seq),
      kind: {
        case: "message",
        value: { role: 1, content: [{ part: { case: "text", value: text } }] },
      },
    }),
  );

/** A session of N sealed rows: each row's canonical JSON, stored payload and version. */
const texts = Array.from({ length: N }, (_, i) => canonical(i + 1, `secret ${i + 1}`));
const payloads = texts.map((t) => sealer.sealPayload(t));
const versions = texts.map((_, i) => String(1000 + i));

/** The checkpoint a first cold read (every row whole, opened one by one) writes. */
async function firstCheckpoint(): Promise<SegmentRow[]> {
  const reader = new CheckpointReader(KEY, keying, sealer, []);
  const rows: ColdRow[] = payloads.map((payload, i) => ({
    seq: i + 1,
    payload,
    version: versions[i],
  }));
  expect(await reader.texts(rows, async () => undefined)).toEqual(texts);
  expect(reader.uncovered).toBe(N);
  return asRows(await checkpointSegments(sealer, reader.kept()));
}

const asRows = (segments: Awaited<ReturnType<typeof checkpointSegments>>): SegmentRow[] =>
  segments.map((s) => ({ first_seq: s.first, last_seq: s.last, segment: s.sealed }));

/** Short rows (no payload) at `version(i)`. */
const shortRows = (version: (i: number) => string): ColdRow[] =>
  texts.map((_, i) => ({ seq: i + 1, payload: null, version: version(i) }));

/** The check of every entry of a checkpoint, by seq. */
function checks(rows: SegmentRow[]): number[] {
  const opened = new OpenedSegments(sealer);
  for (const r of rows) expect(opened.add(r.first_seq, r.last_seq, r.segment)).toBe(true);
  return texts.map((_, i) => {
    const seg = opened.segment(i + 1) as Buffer;
    return checkOf(seg, opened.offset(i + 1));
  });
}

describe("CheckpointReader (PostgreSQL cold read)", () => {
  it("a first checkpoint stamps each entry with its row's version", async () => {
    expect(checks(await firstCheckpoint())).toEqual(versions.map(Number));
  });

  it("short rows at the entries' versions are taken from the checkpoint: nothing read again or opened", async () => {
    const ckpt = await firstCheckpoint();
    const reader = new CheckpointReader(KEY, keying, sealer, ckpt);
    const whole = vi.fn(async () => new Map<number, WholeRow>());
    const open = vi.spyOn(sealer, "open");
    expect(
      await reader.texts(
        shortRows((i) => versions[i] as string),
        whole,
      ),
    ).toEqual(texts);
    expect(whole).not.toHaveBeenCalled();
    expect(open).not.toHaveBeenCalled();
    expect([reader.uncovered, reader.restamped]).toEqual([0, 0]);
    open.mockRestore();
  });

  it("a row at another version is read whole; the same bytes are taken and restamped in the next checkpoint", async () => {
    const ckpt = await firstCheckpoint();
    const reader = new CheckpointReader(KEY, keying, sealer, ckpt);
    // Rows 2 and 5 written again as they were (an UPDATE, a restore): new xmins.
    const moved = new Set([2, 5]);
    const version = (i: number) => (moved.has(i + 1) ? String(5000 + i) : (versions[i] as string));
    const whole = vi.fn(async (seqs: number[]) => {
      return new Map(
        seqs.map((q) => [q, { payload: payloads[q - 1] as string, version: version(q - 1) }]),
      );
    });
    const open = vi.spyOn(sealer, "open");
    expect(await reader.texts(shortRows(version), whole)).toEqual(texts);
    expect(whole).toHaveBeenCalledWith([2, 5]);
    expect(open).not.toHaveBeenCalled();
    expect([reader.uncovered, reader.restamped]).toEqual([0, 2]);
    open.mockRestore();
    const next = asRows(await checkpointSegments(sealer, reader.kept()));
    expect(checks(next)).toEqual(texts.map((_, i) => Number(version(i))));
  });

  it("a checkpoint from before row versions (check 0) is used once by bytes and written again with them", async () => {
    // Entries with check 0, as schema 18 wrote them before row versions.
    const reader0 = new CheckpointReader(KEY, keying, sealer, []);
    await reader0.texts(
      payloads.map((payload, i) => ({ seq: i + 1, payload, version: "0" })),
      async () => undefined,
    );
    const old = asRows(await checkpointSegments(sealer, reader0.kept()));
    expect(checks(old)).toEqual(texts.map(() => 0));
    const reader = new CheckpointReader(KEY, keying, sealer, old);
    const whole = vi.fn(
      async (seqs: number[]) =>
        new Map(
          seqs.map((q) => [
            q,
            { payload: payloads[q - 1] as string, version: versions[q - 1] as string },
          ]),
        ),
    );
    expect(
      await reader.texts(
        shortRows((i) => versions[i] as string),
        whole,
      ),
    ).toEqual(texts);
    expect(whole).toHaveBeenCalledWith([1, 2, 3, 4, 5, 6]);
    expect([reader.uncovered, reader.restamped]).toEqual([0, N]);
    expect(checks(asRows(await checkpointSegments(sealer, reader.kept())))).toEqual(
      versions.map(Number),
    );
  });

  it("a row at another version holding another row's payload is opened and fails: DATA_LOSS naming it", async () => {
    const ckpt = await firstCheckpoint();
    const reader = new CheckpointReader(KEY, keying, sealer, ckpt);
    // Row 3 holds row 1's sealed content under its own clear part.
    const p1 = payloads[0] as string;
    const p3 = payloads[2] as string;
    const mark = '{"@sealed":"';
    const movedPayload = p3.slice(0, p3.indexOf(mark)) + p1.slice(p1.indexOf(mark));
    const whole = async (seqs: number[]) =>
      new Map(
        seqs.map((q) => [
          q,
          { payload: q === 3 ? movedPayload : (payloads[q - 1] as string), version: "7" },
        ]),
      );
    await expect(
      reader.texts(
        shortRows((i) => (i === 2 ? "7" : (versions[i] as string))),
        whole,
      ),
    ).rejects.toSatisfy((err) => isSessiondError(err, "DATA_LOSS") && String(err).includes('"m3"'));
  });

  it("short rows that cannot be read again (the session rewritten meanwhile): undefined, to read it all again", async () => {
    const reader = new CheckpointReader(KEY, keying, sealer, await firstCheckpoint());
    expect(
      await reader.texts(
        shortRows(() => "1"),
        async () => undefined,
      ),
    ).toBeUndefined();
  });
});
