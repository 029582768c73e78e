import type { SessionSealer } from "./sealed-payload.js";

/**
 * The engine-neutral part of a sealed session's checkpoint (the JSONL
 * engine's `.ckpt` file, jsonl/checkpoint.ts; PostgreSQL's
 * sessiond_checkpoints rows, postgres/checkpoint.ts): a cache of the
 * session's opened payloads, in segments sealed by
 * SessionSealer.sealSegment under the session's data key, each bound to
 * (workspace, session, first seq, last seq). Opening a sealed payload
 * costs ~4-8 µs of cipher setup per entry; AES-GCM over 256 KiB segments
 * costs the bytes, not the setups.
 *
 * A segment opens to the entries it covers, in seq order, each:
 *
 *   seq (u32 BE), check (u32: the JSONL record's header CRC, the
 *   PostgreSQL row's xmin), length of the stored base64 (u32), length in bytes
 *   of the clear part of the stored payload, before the sealed kind value
 *   (u32), length in bytes of the text (u32), the first 20 characters of
 *   the stored base64 (format byte and nonce), its last 24 (the GCM tag),
 *   then the text: the entry's canonical JSON with its content opened.
 *
 * An engine takes an entry from a checkpoint only when its stored record
 * is the very one the entry was made of (same seq, same clear part byte
 * for byte, same base64 length, same nonce and tag, and the engine's own
 * check); otherwise it opens the record as without a checkpoint, so a
 * payload moved to another place still fails to open there.
 */

/**
 * Plaintext bytes per segment (one AES-GCM seal each): the cipher's setup
 * is paid once per segment, and damage costs one segment of a long session.
 */
export const SEGMENT_BYTES = 256 * 1024;
/** Characters of the stored base64 kept from its start (format byte, nonce) and end (tag). */
export const HEAD_CHARS = 20;
export const TAIL_CHARS = 24;
/** Where an entry's base64 head and tail are, from its start. */
export const HEAD_AT = 20;
export const TAIL_AT = HEAD_AT + HEAD_CHARS;
/** Bytes of an entry's fixed part: 5 × u32, head, tail; its text follows. */
export const FIXED = TAIL_AT + TAIL_CHARS;

/** Where a sealed payload's base64 is in `stored`, and how long its clear part is (bytes). */
export interface StoredSealed {
  readonly stored: Buffer;
  readonly sealedStart: number;
  readonly sealedEnd: number;
  readonly prefix: number;
}

/**
 * The checkpoint entry of `seq` whose stored payload is `s` and whose
 * opened canonical JSON is `text`; undefined when the base64 is too short
 * to hold a nonce and a tag.
 */
export function checkpointEntry(seq: number, check: number, s: StoredSealed, text: Buffer) {
  const sealedLen = s.sealedEnd - s.sealedStart;
  if (sealedLen < HEAD_CHARS + TAIL_CHARS) return undefined;
  const out = Buffer.allocUnsafe(FIXED + text.length);
  out.writeUInt32BE(seq, 0);
  out.writeUInt32BE(check >>> 0, 4);
  out.writeUInt32BE(sealedLen, 8);
  out.writeUInt32BE(s.prefix, 12);
  out.writeUInt32BE(text.length, 16);
  s.stored.copy(out, HEAD_AT, s.sealedStart, s.sealedStart + HEAD_CHARS);
  s.stored.copy(out, TAIL_AT, s.sealedEnd - TAIL_CHARS, s.sealedEnd);
  text.copy(out, FIXED);
  return out;
}

/** One sealed segment: the seqs it covers and its bytes (sealSegment's form). */
export interface SealedSegment {
  readonly first: number;
  readonly last: number;
  readonly sealed: Buffer;
}

/** Packs checkpoint entries, in seq order, into sealed segments of about `segmentBytes`. */
export class SegmentPacker {
  readonly segments: SealedSegment[] = [];
  /** The last seq added (0: none). */
  covered = 0;
  private entries: Buffer[] = [];
  private bytes = 0;
  private first = 0;

  constructor(
    private readonly sealer: SessionSealer,
    private readonly segmentBytes = SEGMENT_BYTES,
  ) {}

  add(seq: number, entry: Buffer): void {
    if (this.entries.length === 0) this.first = seq;
    this.entries.push(entry);
    this.bytes += entry.length;
    this.covered = seq;
    if (this.bytes >= this.segmentBytes) this.flush();
  }

  /** Seals the entries added since the last segment, if any. */
  flush(): void {
    if (this.entries.length === 0) return;
    const plain = Buffer.concat(this.entries, this.bytes);
    const sealed = this.sealer.sealSegment(this.first, this.covered, plain);
    this.segments.push({ first: this.first, last: this.covered, sealed });
    this.entries = [];
    this.bytes = 0;
  }
}

/**
 * The opened segments of a checkpoint, indexed by seq: where each entry
 * is, until it is taken (a segment is let go once every entry of it was).
 * A segment that does not open (another key, session or range; altered
 * or cut bytes) is skipped.
 */
export class OpenedSegments {
  /** Opened segments, by index; dropped once every entry of one was taken. */
  private readonly segments: (Buffer | undefined)[] = [];
  /** Entries of each segment not taken yet. */
  private readonly left: number[] = [];
  /** By seq: the segment holding it (-1: taken), and where its entry starts there. */
  private readonly segOf: number[] = [];
  private readonly offOf: number[] = [];
  /** The last seq covered (0: none). */
  covered = 0;

  constructor(private readonly sealer: SessionSealer) {}

  /** Opens the segment for seqs `first`..`last` and indexes its entries; false when it does not open. */
  add(first: number, last: number, sealed: Uint8Array): boolean {
    if (last < first) return false;
    const plain = this.sealer.openSegment(first, last, sealed);
    if (plain === undefined) return false;
    const si = this.segments.length;
    let count = 0;
    let at = 0;
    while (at + FIXED <= plain.length) {
      const seq = plain.readUInt32BE(at);
      const next = at + FIXED + plain.readUInt32BE(at + 16);
      if (next > plain.length || seq < first || seq > last) break;
      this.segOf[seq] = si;
      this.offOf[seq] = at;
      if (seq > this.covered) this.covered = seq;
      count++;
      at = next;
    }
    this.segments.push(plain);
    this.left.push(count);
    return true;
  }

  /** The segment holding the entry of `seq` (not taken yet), or undefined. */
  segment(seq: number): Buffer | undefined {
    const si = this.segOf[seq];
    return si === undefined || si < 0 ? undefined : this.segments[si];
  }

  /** Where the entry of `seq` starts in `segment(seq)`. */
  offset(seq: number): number {
    return this.offOf[seq] as number;
  }

  /** Lets go of the entry of `seq` (its segment too, once every entry of it was taken). */
  take(seq: number): void {
    const si = this.segOf[seq] as number;
    this.segOf[seq] = -1;
    const left = (this.left[si] as number) - 1;
    this.left[si] = left;
    if (left === 0) this.segments[si] = undefined;
  }
}

/** The fields of the entry at `at` in an opened segment. */
export function sealedLength(seg: Buffer, at: number): number {
  return seg.readUInt32BE(at + 8);
}
export function checkOf(seg: Buffer, at: number): number {
  return seg.readUInt32BE(at + 4);
}
export function setCheck(seg: Buffer, at: number, check: number): void {
  seg.writeUInt32BE(check >>> 0, at + 4);
}
export function prefixLength(seg: Buffer, at: number): number {
  return seg.readUInt32BE(at + 12);
}
export function textLength(seg: Buffer, at: number): number {
  return seg.readUInt32BE(at + 16);
}
