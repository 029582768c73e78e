import type { SessionKey } from "../engine.js";
import {
  checkOf,
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
import type { KeptRow, SegmentRow, WholeRow } from "./checkpoint.js";
import { type Keying, openPayload } from "./sealing.js";

/**
 * A row of a cold read: its payload, or (payload null) its short form
 * (checkpoint.ts shortPayload), and its version (xmin; null on a clear
 * session's rows).
 */
export interface ColdRow {
  seq: number;
  payload: string | null;
  version?: string | null;
}

/** What a sealed payload's base64 is between: `{"@sealed":"` before, `"}}` after. */
const SEALED_KEY = '{"@sealed":"';
const SEALED_CLOSE = '"}}';

/** Where a row's text came from (CheckpointReader.texts). */
const CLEAR = 0;
const FROM_CHECKPOINT = 1;
const OPENED = 2;

/**
 * A cold read's opener of a sealed session's rows (checkpoint.ts): each
 * row's canonical JSON from the checkpoint when the row is the one an
 * entry was made of, else opened one by one (openPayload). Afterwards
 * `kept()` gives every sealed row for the next checkpoint.
 */
export class CheckpointReader {
  private readonly opened: OpenedSegments;
  /** Sealed rows opened one by one (the checkpoint did not hold them). */
  uncovered = 0;
  /** Rows taken from the checkpoint at another version than its entry's (the same bytes). */
  restamped = 0;
  /** The last read's rows, and for each where its text came from (and the entry's segment and offset). */
  private rows: ColdRow[] = [];
  private out: string[] = [];
  private from: Uint8Array = new Uint8Array(0);
  private segs: (Buffer | undefined)[] = [];
  private ats: number[] = [];

  constructor(
    private readonly key: SessionKey,
    private readonly keying: Keying,
    readonly sealer: SessionSealer,
    segments: readonly SegmentRow[],
  ) {
    this.opened = new OpenedSegments(sealer);
    for (const s of segments) {
      this.opened.add(s.first_seq, s.last_seq, s.segment);
    }
  }

  /**
   * The canonical JSON of every row, in order (DATA_LOSS when a sealed one
   * does not open). Short rows the checkpoint does not hold at their
   * version are read again whole with `whole`; undefined when that fails
   * (the session was rewritten since: the caller reads it again).
   */
  async texts(
    rows: ColdRow[],
    whole: (seqs: number[]) => Promise<Map<number, WholeRow> | undefined>,
  ): Promise<string[] | undefined> {
    const n = rows.length;
    const out: string[] = new Array(n);
    this.rows = rows;
    this.out = out;
    this.from = new Uint8Array(n);
    this.segs = new Array(n);
    this.ats = new Array(n);
    const missed: number[] = [];
    for (let i = 0; i < n; i++) {
      const r = rows[i] as ColdRow;
      if (r.payload !== null) continue;
      const seg = this.opened.segment(r.seq);
      const at = seg === undefined ? 0 : this.opened.offset(r.seq);
      if (seg !== undefined && r.version != null && checkOf(seg, at) === Number(r.version)) {
        out[i] = seg.toString("utf8", at + FIXED, at + FIXED + textLength(seg, at));
        this.took(i, r.seq, seg, at);
      } else {
        missed.push(i);
      }
    }
    if (missed.length > 0) {
      const found = await whole(missed.map((i) => (rows[i] as ColdRow).seq));
      for (const i of missed) {
        const r = rows[i] as ColdRow;
        const w = found?.get(r.seq);
        if (w === undefined) return undefined;
        r.payload = w.payload;
        r.version = w.version;
      }
    }
    for (let i = 0; i < n; i++) {
      if (out[i] !== undefined) continue;
      const r = rows[i] as ColdRow;
      const payload = r.payload as string;
      const seg = this.opened.segment(r.seq);
      const at = seg === undefined ? 0 : this.opened.offset(r.seq);
      const text = seg === undefined ? undefined : this.whole(seg, at, payload);
      if (text !== undefined) {
        out[i] = text;
        this.took(i, r.seq, seg as Buffer, at);
        if (checkOf(seg as Buffer, at) !== Number(r.version)) this.restamped++;
      } else if (sealedTextBounds(payload) === undefined) {
        out[i] = payload;
      } else {
        out[i] = openPayload(this.key, r.seq, payload, this.keying);
        this.from[i] = OPENED;
        this.uncovered++;
      }
    }
    return out;
  }

  /**
   * Every sealed row of the last read with its version, in seq order, for
   * the next checkpoint: its entry as the checkpoint held it, or the row
   * and its text as opened. Made only when a checkpoint is to be written.
   */
  kept(): KeptRow[] {
    const kept: KeptRow[] = [];
    for (let i = 0; i < this.rows.length; i++) {
      const r = this.rows[i] as ColdRow;
      const from = this.from[i];
      if (from === CLEAR || r.version == null) continue;
      if (from === OPENED) {
        kept.push({
          seq: r.seq,
          version: r.version,
          payload: r.payload as string,
          text: this.out[i] as string,
        });
      } else {
        const seg = this.segs[i] as Buffer;
        const at = this.ats[i] as number;
        kept.push({
          seq: r.seq,
          version: r.version,
          entry: seg.subarray(at, at + FIXED + textLength(seg, at)),
        });
      }
    }
    return kept;
  }

  /** Row `i` (of `seq`) took its text from the entry at `at` of `seg`. */
  private took(i: number, seq: number, seg: Buffer, at: number): void {
    this.from[i] = FROM_CHECKPOINT;
    this.segs[i] = seg;
    this.ats[i] = at;
    this.opened.take(seq);
  }

  /**
   * The text of the entry at `at` of `seg`, when `payload` is the row it
   * was made of: the same clear part, then `{"@sealed":"`, base64 of the
   * same length, nonce and tag, and `"}}` (where the entry says the base64
   * is: no search back through it).
   */
  private whole(seg: Buffer, at: number, payload: string): string | undefined {
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
    const clear = payload.slice(0, valueStart);
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
