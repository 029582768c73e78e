import type { SessionKey } from "../engine.js";
import {
  FIXED,
  HEAD_AT,
  HEAD_CHARS,
  OpenedSegments,
  prefixLength,
  sealedLength,
  TAIL_AT,
  TAIL_CHARS,
  textLength,
} from "../seal/checkpoint-segments.js";
import { type SessionSealer, sealedTextBounds } from "../seal/sealed-payload.js";
import type { KeptRow, SegmentRow } from "./checkpoint.js";
import { type Keying, openPayload } from "./sealing.js";

/** A row of a cold read: its payload, or (payload null) its short form (checkpoint.ts shortPayload). */
export interface ColdRow {
  seq: number;
  payload: string | null;
  short_head?: string | null;
  short_tail?: string | null;
  short_bytes?: number | null;
}

/** What a sealed payload's base64 is between: `{"@sealed":"` before, `"}}` after. */
const SEALED_KEY = '{"@sealed":"';
const SEALED_CLOSE = '"}}';

/**
 * A cold read's opener of a sealed session's rows (checkpoint.ts): each
 * row's canonical JSON from the checkpoint when the row is the one an
 * entry was made of, else opened one by one (openPayload). With `keep`,
 * keeps every sealed row for the next checkpoint.
 */
export class CheckpointReader {
  private readonly opened: OpenedSegments;
  /** Every sealed row read, in seq order (with `keep`). */
  readonly kept: KeptRow[] = [];
  /** Sealed rows opened one by one (the checkpoint did not hold them). */
  uncovered = 0;
  /** Whether the rows are kept (a new checkpoint may be written after the read). */
  readonly keep: boolean;

  constructor(
    private readonly key: SessionKey,
    private readonly keying: Keying,
    readonly sealer: SessionSealer,
    segments: readonly SegmentRow[],
    /** Decides, given the last seq the checkpoint covers, whether to keep the rows. */
    keepAfter: (covered: number) => boolean,
  ) {
    this.opened = new OpenedSegments(sealer);
    for (const s of segments) {
      this.opened.add(s.first_seq, s.last_seq, s.segment);
    }
    this.keep = keepAfter(this.opened.covered);
  }

  /**
   * The canonical JSON of every row, in order (DATA_LOSS when a sealed one
   * does not open). Short rows the checkpoint does not hold are read again
   * whole with `whole`; undefined when that fails (the session was
   * rewritten since: the caller reads it again).
   */
  async texts(
    rows: ColdRow[],
    whole: (seqs: number[]) => Promise<Map<number, string> | undefined>,
  ): Promise<string[] | undefined> {
    const out: string[] = new Array(rows.length);
    const entries: (Buffer | undefined)[] = new Array(rows.length);
    const missed: number[] = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i] as ColdRow;
      if (r.payload !== null) continue;
      const text = this.short(r);
      if (text === undefined) missed.push(i);
      else {
        out[i] = text;
        entries[i] = this.take(r.seq);
      }
    }
    if (missed.length > 0) {
      const found = await whole(missed.map((i) => (rows[i] as ColdRow).seq));
      for (const i of missed) {
        const r = rows[i] as ColdRow;
        r.payload = found?.get(r.seq) ?? null;
        if (r.payload === null) return undefined;
      }
    }
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i] as ColdRow;
      if (out[i] === undefined) {
        const payload = r.payload as string;
        const text = this.whole(r.seq, payload);
        if (text !== undefined) {
          out[i] = text;
          entries[i] = this.take(r.seq);
        } else if (sealedTextBounds(payload) === undefined) {
          out[i] = payload;
        } else {
          out[i] = openPayload(this.key, r.seq, payload, this.keying);
          this.uncovered++;
          if (this.keep) this.kept.push({ seq: r.seq, payload, text: out[i] as string });
        }
      }
      const entry = entries[i];
      if (this.keep && entry !== undefined) this.kept.push({ seq: r.seq, entry });
    }
    return out;
  }

  /** The entry of `seq` taken: its bytes with `keep` (for the next checkpoint). */
  private take(seq: number): Buffer | undefined {
    const seg = this.opened.segment(seq) as Buffer;
    const at = this.opened.offset(seq);
    this.opened.take(seq);
    return this.keep ? seg.subarray(at, at + FIXED + textLength(seg, at)) : undefined;
  }

  /**
   * The text of the entry of `seq`, when `payload` is the row it was made of:
   * the same clear part, then `{"@sealed":"`, base64 of the same length,
   * nonce and tag, and `"}}` (where the entry says the base64 is: no
   * search back through it).
   */
  private whole(seq: number, payload: string): string | undefined {
    const seg = this.opened.segment(seq);
    if (seg === undefined) return undefined;
    const at = this.opened.offset(seq);
    const sealedEnd = payload.length - SEALED_CLOSE.length;
    const sealedStart = sealedEnd - sealedLength(seg, at);
    const valueStart = sealedStart - SEALED_KEY.length;
    if (
      valueStart < 0 ||
      !payload.endsWith(SEALED_CLOSE) ||
      !payload.startsWith(SEALED_KEY, valueStart) ||
      !sameChars(payload, sealedStart, seg, at + HEAD_AT, HEAD_CHARS) ||
      !sameChars(payload, sealedEnd - TAIL_CHARS, seg, at + TAIL_AT, TAIL_CHARS)
    ) {
      return undefined;
    }
    return this.textIf(seg, at, payload, valueStart);
  }

  /**
   * `whole` for a short row: its length in bytes, its start (the clear
   * part, `{"@sealed":"` and the nonce) and its last 27 bytes (the tag
   * and `"}}`) are the entry's.
   */
  private short(r: ColdRow): string | undefined {
    const seg = this.opened.segment(r.seq);
    const head = r.short_head;
    const tail = r.short_tail;
    if (seg === undefined || head == null || tail == null) return undefined;
    const at = this.opened.offset(r.seq);
    const sealedLen = sealedLength(seg, at);
    const bytes = prefixLength(seg, at) + SEALED_KEY.length + sealedLen + SEALED_CLOSE.length;
    // The first mark is the kind's value: in a clear part, a quote is escaped.
    const valueStart = head.indexOf(SEALED_KEY);
    const sealedStart = valueStart + SEALED_KEY.length;
    if (
      r.short_bytes !== bytes ||
      valueStart < 0 ||
      head.length < sealedStart + HEAD_CHARS ||
      tail.length !== TAIL_CHARS + SEALED_CLOSE.length ||
      !tail.endsWith(SEALED_CLOSE) ||
      !sameChars(head, sealedStart, seg, at + HEAD_AT, HEAD_CHARS) ||
      !sameChars(tail, 0, seg, at + TAIL_AT, TAIL_CHARS)
    ) {
      return undefined;
    }
    return this.textIf(seg, at, head, valueStart);
  }

  /**
   * The entry's text when `row` starts with the entry's clear part: its
   * first `valueStart` characters, as many bytes as the entry's.
   */
  private textIf(seg: Buffer, at: number, row: string, valueStart: number): string | undefined {
    const clear = row.slice(0, valueStart);
    if (Buffer.byteLength(clear) !== prefixLength(seg, at)) return undefined;
    const text = seg.toString("utf8", at + FIXED, at + FIXED + textLength(seg, at));
    // String equality of two slices: startsWith cost 5 × more.
    return text.slice(0, valueStart) === clear ? text : undefined;
  }
}

/** True when `s[from, from + n)` are the bytes `b[at, at + n)` (ASCII). */
function sameChars(s: string, from: number, b: Buffer, at: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (s.charCodeAt(from + i) !== b[at + i]) return false;
  return true;
}
