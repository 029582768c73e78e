import { BLOOM_BITS, BLOOM_BYTES } from "./search-bloom.js";

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
 * some filters again on each search, from the narrow index). A session
 * holds its filters in planes of at least a byte (SessionBlooms): 2 KB
 * for up to 8 rows, then about what the rows' filters take (256 bytes a
 * row, room doubling as rows are added).
 */

/** The filters kept in memory, at most this many bytes (least recently searched go first). */
const MAX_CACHED_BYTES = 64 * 1024 * 1024;

/**
 * One session's filters, for its rows up to `coveredSeq` in seq order, held
 * bit-sliced: plane p holds bit p of every row's filter, row r at bit r & 7
 * of the plane's byte r >> 3. A search tests a needle's ten-odd bits for
 * eight rows a byte, reading ten short runs of memory, where testing the
 * rows one by one read a byte of each row's 256 (a cache miss a row: ~45 ns
 * a row, 1.7 ms of a 12 ms search over 40,000 sealed rows).
 */
export interface SessionBlooms {
  readonly incarnation: string;
  coveredSeq: number;
  /** The seqs of its sealed messages (and of its rows without a filter): row r is seqs[r]. */
  seqs: number[];
  /** BLOOM_BITS planes of `stride` bytes each; a row without a filter has every bit set. */
  planes: Uint8Array;
  /** Bytes per plane: room for stride * 8 rows. */
  stride: number;
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
      this.bytes -= c.planes.length;
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
      this.bytes -= held.planes.length;
    }
    const s = c ?? { incarnation, coveredSeq: 0, seqs: [], planes: new Uint8Array(0), stride: 0 };
    const need = Math.ceil((s.seqs.length + rows.length) / 8);
    if (need > s.stride) grow(s, Math.max(need, s.stride * 2));
    const { planes, stride } = s;
    for (const r of rows) {
      const row = s.seqs.length;
      const at = row >>> 3;
      const bit = 1 << (row & 7);
      const f = r.bloom !== null && r.bloom.length === BLOOM_BYTES ? r.bloom : undefined;
      for (let j = 0; j < BLOOM_BYTES; j++) {
        const b = f === undefined ? 0xff : (f[j] as number);
        if (b === 0) continue;
        for (let k = 0; k < 8; k++) {
          if ((b & (1 << k)) !== 0) {
            const p = (j * 8 + k) * stride + at;
            planes[p] = (planes[p] as number) | bit;
          }
        }
      }
      s.seqs.push(r.seq);
    }
    s.coveredSeq = head;
    // Most recently searched last; the least recently searched go while over the bound.
    this.sessions.set(k, s);
    this.bytes += s.planes.length;
    for (const [key, old] of this.sessions) {
      if (this.bytes <= this.maxBytes || old === s) break;
      this.sessions.delete(key);
      this.bytes -= old.planes.length;
    }
    return s;
  }

  /** The seqs after `afterSeq` of `s`'s rows whose filter has every bit of `bits` set. */
  static candidates(s: SessionBlooms, bits: ArrayLike<number>, afterSeq: number): number[] {
    const out: number[] = [];
    const { planes, stride, seqs } = s;
    const used = Math.ceil(seqs.length / 8);
    for (let j = 0; j < used; j++) {
      let rows = 0xff;
      for (let i = 0; i < bits.length && rows !== 0; i++) {
        rows &= planes[(bits[i] as number) * stride + j] as number;
      }
      for (let k = 0; rows !== 0 && k < 8; k++) {
        if ((rows & (1 << k)) === 0) continue;
        rows &= ~(1 << k);
        const seq = seqs[j * 8 + k];
        if (seq !== undefined && seq > afterSeq) out.push(seq);
      }
    }
    return out;
  }
}

/** Makes room in `s`'s planes for `stride` * 8 rows, keeping the rows it holds. */
function grow(s: SessionBlooms, stride: number): void {
  const planes = new Uint8Array(BLOOM_BITS * stride);
  const used = Math.ceil(s.seqs.length / 8);
  for (let p = 0; p < BLOOM_BITS && used > 0; p++) {
    planes.set(s.planes.subarray(p * s.stride, p * s.stride + used), p * stride);
  }
  s.planes = planes;
  s.stride = stride;
}
