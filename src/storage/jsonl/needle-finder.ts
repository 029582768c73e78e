/**
 * Finding a lower-case ASCII needle in raw bytes, ASCII case ignored,
 * without lower-casing the bytes: the pre-filter of a text search
 * (EntryScan.needles) runs over every byte of a workspace, and a copy
 * that lower-cases costs several times the search itself.
 *
 * Node's `Buffer.indexOf` is a native Boyer-Moore-Horspool, but exact.
 * So the finder picks a short anchor inside the needle, at most three
 * characters with the fewest letters (a letter has two cases, anything
 * else one), looks for each of its spellings (at most 8) natively, and
 * checks the whole needle, case ignored, only where an anchor was found.
 */

const MAX_ANCHOR = 3;

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

/**
 * Occurrences of one needle in one buffer at a time, asked for in
 * increasing order (`next`): each spelling of the anchor is searched once
 * over the buffer, whatever the number of calls.
 */
export class NeedleFinder {
  private readonly needle: Buffer;
  /** Where the anchor sits in the needle. */
  private readonly offset: number;
  private readonly anchors: Buffer[];
  private buf: Buffer = Buffer.alloc(0);
  private end = 0;
  /** Per spelling: its next occurrence at or after `from` of the last call, or -1. */
  private readonly next0: Int32Array;
  /** The answer of the last call and where it was asked from. */
  private lastFrom = -1;
  private lastAt = -1;

  constructor(needle: string) {
    this.needle = Buffer.from(needle, "latin1");
    const len = Math.min(MAX_ANCHOR, needle.length);
    let best = 0;
    let fewest = Number.POSITIVE_INFINITY;
    for (let at = 0; at + len <= needle.length; at++) {
      let letters = 0;
      for (let i = at; i < at + len; i++) if (isLetter(needle.charCodeAt(i))) letters++;
      if (letters < fewest) {
        fewest = letters;
        best = at;
      }
    }
    this.offset = best;
    this.anchors = spellings(needle.slice(best, best + len));
    this.next0 = new Int32Array(this.anchors.length);
  }

  /** Starts over on the bytes `buf[0, end)`. */
  reset(buf: Buffer, end: number): void {
    this.buf = buf;
    this.end = end;
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
          if (p + needle.length - offset > this.end) p = -1;
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
    if (start + needle.length > this.end) return false;
    for (let i = 0; i < needle.length; i++) {
      let c = buf[start + i] as number;
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      if (c !== needle[i]) return false;
    }
    return true;
  }
}
