/**
 * Finding a lower-case ASCII needle in raw bytes, ASCII case ignored,
 * without lower-casing the bytes: the pre-filter of a text search
 * (EntryScan.needles) runs over every byte of a workspace, and a copy
 * that lower-cases costs several times the search itself.
 *
 * Node's `Buffer.indexOf` is native, but exact. So the finder picks a
 * short anchor inside the needle (two or three characters), looks for
 * each of its spellings natively (a letter has two cases, anything else
 * one), and checks the whole needle, case ignored, only where an anchor
 * was found. Each spelling costs a pass over the bytes, and each place
 * an anchor is found costs a call: the anchor is the one with the least
 * of both, by the rough frequencies of characters in text below.
 */

/** Rough frequency of each lower-case letter in English text (a in 0, z in 25). */
const LETTER_FREQUENCY = [
  0.08, 0.015, 0.028, 0.043, 0.12, 0.022, 0.02, 0.06, 0.07, 0.0015, 0.008, 0.04, 0.024, 0.067,
  0.075, 0.019, 0.001, 0.06, 0.063, 0.09, 0.028, 0.01, 0.024, 0.0015, 0.02, 0.0007,
];
/** Of anything else: digits and punctuation, a guess. */
const OTHER_FREQUENCY = 0.01;
/** What a found anchor costs against a pass over the bytes (measured: ~120 ns vs ~0.22 ns a byte). */
const HIT_COST = 545;
const ANCHOR_LENGTHS = [2, 3];

function isLetter(code: number): boolean {
  return code >= 0x61 && code <= 0x7a;
}

/** Every spelling of a lower-case ASCII string, each letter in either case. */
function spellings(anchor: string): Buffer[] {
  let out = [""];
  for (const c of anchor) {
    const cases = isLetter(c.charCodeAt(0)) ? [c, c.toUpperCase()] : [c];
    out = out.flatMap((prefix) => cases.map((k) => prefix + k));
  }
  return out.map((s) => Buffer.from(s, "latin1"));
}

/** A needle made ready for searching: its bytes, its anchor and the anchor's spellings. */
interface Prepared {
  /** Records asked about and records that held the needle, over every scan: how selective it is. */
  asked: number;
  held: number;
  readonly bytes: Buffer;
  /** Where the anchor sits in the needle. */
  readonly offset: number;
  readonly anchors: readonly Buffer[];
}

/** Needles prepared lately: a search prepares its needles once, not once per session file. */
const prepared = new Map<string, Prepared>();
const MAX_PREPARED = 64;

/** The estimated cost of an anchor: its spellings (passes) and how often it is found. */
function anchorCost(anchor: string): number {
  let spellingCount = 1;
  let frequency = 1;
  for (let i = 0; i < anchor.length; i++) {
    const code = anchor.charCodeAt(i);
    if (isLetter(code)) spellingCount *= 2;
    frequency *= isLetter(code) ? (LETTER_FREQUENCY[code - 0x61] as number) : OTHER_FREQUENCY;
  }
  return spellingCount + HIT_COST * frequency;
}

function prepare(needle: string): Prepared {
  let p = prepared.get(needle);
  if (p !== undefined) return p;
  let best = { at: 0, len: needle.length, cost: Number.POSITIVE_INFINITY };
  for (const len of ANCHOR_LENGTHS) {
    for (let at = 0; at + len <= needle.length; at++) {
      const cost = anchorCost(needle.slice(at, at + len));
      if (cost < best.cost) best = { at, len, cost };
    }
  }
  p = {
    asked: 0,
    held: 0,
    bytes: Buffer.from(needle, "latin1"),
    offset: best.at,
    anchors: spellings(needle.slice(best.at, best.at + best.len)),
  };
  // Stryker disable next-line EqualityOperator,ConditionalExpression: a bound on memory only; a cleared cache prepares again
  if (prepared.size >= MAX_PREPARED) prepared.clear();
  prepared.set(needle, p);
  return p;
}

/**
 * Occurrences of one needle in one buffer at a time, asked for in
 * increasing order (`next`): each spelling of the anchor is searched once
 * over the buffer, whatever the number of calls.
 */
export class NeedleFinder {
  private readonly stats: Prepared;
  private readonly needle: Buffer;
  private readonly offset: number;
  private readonly anchors: readonly Buffer[];
  private buf: Buffer = Buffer.alloc(0);
  /** Per spelling: its next occurrence at or after `from` of the last call, or -1. */
  private readonly next0: Int32Array;
  /** The answer of the last call and where it was asked from. */
  private lastFrom = -1;
  private lastAt = -1;

  constructor(needle: string) {
    const p = prepare(needle);
    this.stats = p;
    this.needle = p.bytes;
    this.offset = p.offset;
    this.anchors = p.anchors;
    this.next0 = new Int32Array(this.anchors.length);
  }
  /**
   * The share of records that held the needle so far (over every scan):
   * a record must hold every needle, so asking about the most selective
   * one first spares the searches for the others.
   */
  get heldShare(): number {
    return (this.stats.held + 1) / (this.stats.asked + 2);
  }

  /** Whether the needle occurs inside `[start, end)` (a record's payload). */
  within(start: number, end: number): boolean {
    const at = this.next(start);
    const held = at !== -1 && at < end;
    this.stats.asked++;
    if (held) this.stats.held++;
    return held;
  }

  /** Starts over on the bytes of `buf`. */
  reset(buf: Buffer): void {
    this.buf = buf;
    this.next0.fill(-2);
    this.lastFrom = -1;
    this.lastAt = -1;
  }

  /** The first occurrence starting at or after `from`, or -1. `from` never decreases between resets. */
  next(from: number): number {
    if (this.lastFrom !== -1 && (this.lastAt === -1 || this.lastAt >= from)) return this.lastAt;
    this.lastFrom = from;
    this.lastAt = this.search(from);
    return this.lastAt;
  }

  private search(from: number): number {
    const { buf, needle, offset, next0 } = this;
    let at = from;
    for (;;) {
      let first = -1;
      for (let v = 0; v < next0.length; v++) {
        let p = next0[v] as number;
        if (p === -2 || (p !== -1 && p < at + offset)) {
          p = buf.indexOf(this.anchors[v] as Buffer, at + offset);
          if (p + needle.length - offset > buf.length) p = -1;
          next0[v] = p;
        }
        if (p !== -1 && (first === -1 || p < first)) first = p;
      }
      if (first === -1) return -1;
      const start = first - offset;
      if (start >= from && this.matchesAt(start)) return start;
      at = start + 1;
    }
  }

  private matchesAt(start: number): boolean {
    const { buf, needle } = this;
    if (start + needle.length > buf.length) return false;
    for (let i = 0; i < needle.length; i++) {
      let c = buf[start + i] as number;
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      if (c !== needle[i]) return false;
    }
    return true;
  }
}
