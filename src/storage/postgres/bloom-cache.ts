import { BLOOM_BYTES, holdsAll } from "./search-bloom.js";

/**
 * The search filters (search-bloom.ts) of sealed sessions as this replica
 * last read them, so that a search tests them here instead of reading
 * them again: a warm search of a sealed workspace reads the sessions' rows
 * (order, key, incarnation, head) and then only the payloads of the
 * candidates, as the clear search reads only the index's hits.
 *
 * What a cached session holds is valid while the session keeps its
 * incarnation: the filters of stored rows change only by a redaction, an
 * erasure or `sessiond seal`, and each gives the session a new
 * incarnation (any replica's); deletion and re-creation do too. Appends
 * only add rows past the covered head, read by the next search. So a
 * session whose incarnation differs is read again from the start.
 *
 * Bounded: at most `MAX_CACHED_BYTES` of filters, the least recently
 * searched sessions dropped first (a workspace larger than that reads
 * some filters again on each search, from the narrow index).
 */

/** The filters kept in memory, at most this many bytes (least recently searched go first). */
const MAX_CACHED_BYTES = 64 * 1024 * 1024;

/** One session's filters, for its rows up to `coveredSeq` in seq order. */
export interface SessionBlooms {
  readonly incarnation: string;
  coveredSeq: number;
  /** The seqs of its sealed messages (and of its rows without a filter). */
  seqs: number[];
  /** Their filters, BLOOM_BYTES each, in `seqs`' order (the rest unused); a row without one is all ones. */
  blooms: Buffer;
}

/** A row's filter as read: undefined when it has none (written before migration 17). */
export interface BloomRow {
  seq: number;
  bloom: Buffer | null;
}

export class BloomCache {
  private readonly sessions = new Map<string, SessionBlooms>();
  private bytes = 0;

  /** `maxBytes`: the bound on the filters held (the tests use a small one). */
  constructor(private readonly maxBytes = MAX_CACHED_BYTES) {}

  /** Bytes of filters held. */
  get size(): number {
    return this.bytes;
  }

  /** The session's cached filters if they are of `incarnation` (else they are dropped). */
  get(workspace: string, sessionId: string, incarnation: string): SessionBlooms | undefined {
    const k = `${workspace}\n${sessionId}`;
    const c = this.sessions.get(k);
    if (c === undefined) return undefined;
    this.sessions.delete(k);
    if (c.incarnation !== incarnation) {
      this.bytes -= c.blooms.length;
      return undefined;
    }
    // Most recently searched last.
    this.sessions.set(k, c);
    return c;
  }

  /**
   * Adds a session's rows after what `c` covers (`c` undefined: from the
   * start), covering up to `head`; returns the session's entry.
   */
  extend(
    workspace: string,
    sessionId: string,
    incarnation: string,
    c: SessionBlooms | undefined,
    rows: readonly BloomRow[],
    head: number,
  ): SessionBlooms {
    const k = `${workspace}\n${sessionId}`;
    const held = this.sessions.get(k);
    if (held !== undefined) {
      this.sessions.delete(k);
      this.bytes -= held.blooms.length;
    }
    const s = c ?? { incarnation, coveredSeq: 0, seqs: [], blooms: Buffer.alloc(0) };
    const used = s.seqs.length * BLOOM_BYTES;
    const need = used + rows.length * BLOOM_BYTES;
    if (need > s.blooms.length) {
      const bigger = Buffer.alloc(Math.max(need, s.blooms.length * 2));
      s.blooms.copy(bigger, 0, 0, used);
      s.blooms = bigger;
    }
    for (const r of rows) {
      const at = s.seqs.length * BLOOM_BYTES;
      if (r.bloom !== null && r.bloom.length === BLOOM_BYTES) r.bloom.copy(s.blooms, at);
      else s.blooms.fill(0xff, at, at + BLOOM_BYTES);
      s.seqs.push(r.seq);
    }
    s.coveredSeq = head;
    // Most recently searched last; the least recently searched go while over the bound.
    this.sessions.set(k, s);
    this.bytes += s.blooms.length;
    for (const [key, old] of this.sessions) {
      if (this.bytes <= this.maxBytes || old === s) break;
      this.sessions.delete(key);
      this.bytes -= old.blooms.length;
    }
    return s;
  }

  /** The seqs after `afterSeq` of `s`'s rows whose filter has every bit of `bits` set. */
  static candidates(s: SessionBlooms, bits: ArrayLike<number>, afterSeq: number): number[] {
    const out: number[] = [];
    for (let r = 0; r < s.seqs.length; r++) {
      const seq = s.seqs[r] as number;
      if (seq > afterSeq && holdsAll(s.blooms, r * BLOOM_BYTES, bits)) out.push(seq);
    }
    return out;
  }
}
