import { needleCodes, TrigramHasher, Trigrams } from "../seal/keyed-trigrams.js";
import type { SessionSealer } from "../seal/sealed-payload.js";
import { type Keying, sealed } from "./sealing.js";

/**
 * The search Bloom filter of a sealed message: how PostgreSQL rules out
 * sealed entries of a text search without holding their text (issue 41:
 * a search on a sealed workspace within 1.5 × the clear one, where
 * opening every sealed message cost ~100 ×).
 *
 * A sealed message row carries, in `search_bloom` (migration 17), a
 * 2,048-bit Bloom filter of the distinct trigrams of its canonical JSON,
 * lower-cased (seal/keyed-trigrams.ts: the rule by which an entry lacking
 * one of a needle's trigrams cannot hold it), each trigram setting
 * `PROBES` bits chosen by its keyed hash under a key derived from the
 * session's data key. A search computes, per sealed session and with its
 * key, the bits of the needles' trigrams and reads the payloads of the rows
 * whose filter has them all set (the filters read from a narrow covering
 * index and tested in the replica's memory: bloom-cache.ts, search.ts);
 * those rows are candidates only, opened and matched as before, so a false
 * positive costs an opening, never a hit.
 *
 * Why a fixed-size filter per row and not an index of keyed trigrams: a
 * GIN index of per-session keyed tokens takes ~500 keys no other session
 * shares for each message, which made a sealed append several times a
 * clear one and left each search to walk the index's pending list once
 * per session (measured: 34 × a clear search). A 256-byte filter is one
 * more index tuple per append.
 *
 * What a reader of the database learns: per row, roughly how many distinct
 * trigrams its content has (its ciphertext already tells its length), and
 * which rows of one session may share trigrams (the same bits); nothing
 * across sessions (another key), nothing that names a trigram without the
 * data key. Erasing the session destroys the key, and with it the meaning
 * of its filters; a redacted row gets the filter of its marker.
 *
 * NULL: a clear row, or a sealed one without a filter (written before
 * migration 17): the search opens those as before.
 */

/** Bits of a row's filter (a bytea of BLOOM_BYTES). */
export const BLOOM_BITS = 2048;
export const BLOOM_BYTES = BLOOM_BITS / 8;
/** Bits set per trigram. */
const PROBES = 2;
const PURPOSE = "sessiond/search-bloom/1";

/** Each sealer's hasher, made once (a derivation and a cipher context each). */
const hashers = new WeakMap<SessionSealer, TrigramHasher>();
const TRIGRAMS = new Trigrams();

function hasherOf(sealer: SessionSealer): TrigramHasher {
  let h = hashers.get(sealer);
  if (h === undefined) {
    h = new TrigramHasher(sealer.derive(PURPOSE, 32));
    hashers.set(sealer, h);
  }
  return h;
}

/** Bloom positions of the first `n` codes: probe i of code t at [i * n + t] (first probes first). */
function positions(sealer: SessionSealer, codes: Int32Array, n: number): Uint16Array {
  const words = hasherOf(sealer).words(codes, n);
  const out = new Uint16Array(n * PROBES);
  for (let t = 0; t < n; t++) {
    const h1 = words[2 * t] as number;
    const h2 = words[2 * t + 1] as number;
    for (let i = 0; i < PROBES; i++) out[i * n + t] = ((h1 + Math.imul(i, h2)) >>> 0) % BLOOM_BITS;
  }
  return out;
}

/** Bit p of a filter: byte p >> 3, bit p & 7 from the low end (PostgreSQL's get_bit on bytea). */
function bitMask(p: number): number {
  return 1 << (p & 7);
}

/** A filter with the bits `at` set, as bytea text ("\\x" and hex digits, for json_to_recordset). */
function byteaText(at: Uint16Array): string {
  const bits = Buffer.alloc(BLOOM_BYTES);
  for (const p of at) bits[p >>> 3] = (bits[p >>> 3] as number) | bitMask(p);
  return `\\x${bits.toString("hex")}`;
}

/**
 * The filter of an entry written as `stored`, from its canonical JSON, as
 * bytea text: null unless it is a message whose content is sealed.
 */
export function searchBloom(
  kind: string | null | undefined,
  canonical: string,
  stored: string,
  sealer: SessionSealer | undefined,
): string | null {
  if (sealer === undefined || kind !== "message" || stored === canonical) return null;
  TRIGRAMS.clear();
  TRIGRAMS.addText(canonical.toLowerCase());
  return byteaText(positions(sealer, TRIGRAMS.codes, TRIGRAMS.n));
}

/**
 * The trigram codes of the needles of at least three characters (computed
 * once per search); undefined when no needle has three (then nothing is
 * ruled out).
 */
export function needlesCodes(needles: readonly string[]): Int32Array | undefined {
  const codes = needles.filter((n) => n.length >= 3).flatMap((n) => [...needleCodes(n)]);
  return codes.length === 0 ? undefined : Int32Array.from(codes);
}

/**
 * The filter bits a row holding the needles whose codes are `codes` must
 * have set under `sealer`'s key, each trigram's first probe before any
 * second one (a row without the needle most likely fails at the first).
 */
export function needleBits(codes: Int32Array, sealer: SessionSealer): Uint16Array {
  const last = lastBits.get(sealer);
  if (last !== undefined && sameCodes(last.codes, codes)) return last.bits;
  const bits = positions(sealer, codes, codes.length);
  lastBits.set(sealer, { codes, bits });
  return bits;
}

/**
 * Each sealer's needle bits of the last search that asked: a search paged
 * on, or asked again, has the same needles and would hash them again under
 * every session's key (a cipher pass per session and search).
 */
const lastBits = new WeakMap<SessionSealer, { codes: Int32Array; bits: Uint16Array }>();

function sameCodes(a: Int32Array, b: Int32Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** What the rows of some entries store: each payload (sealed when the session is) and its filter. */
export interface StoredPayloads {
  readonly json: string[];
  readonly blooms: (string | null)[];
}

/** Adds to `out` the stored form of each entry of `kinds` with canonical JSON `canonical` (same order). */
export function storeAll(
  kinds: readonly (string | undefined)[],
  canonical: readonly string[],
  keying: Keying | undefined,
  out: StoredPayloads = { json: [], blooms: [] },
): StoredPayloads {
  for (let i = 0; i < canonical.length; i++) {
    const c = canonical[i] as string;
    const s = sealed(c, keying);
    out.json.push(s);
    out.blooms.push(searchBloom(kinds[i], c, s, keying?.sealer));
  }
  return out;
}
