/**
 * Keyed trigrams: what lets a text search rule sealed entries out without
 * opening them, on both engines (the JSONL search filter,
 * jsonl/search-filter.ts; PostgreSQL's search tokens,
 * postgres/search-tokens.ts).
 *
 * The rule both follow is the sealed scan's: a search's needles are
 * lower-case ASCII strings (EntryScan.needles) that a matching entry's
 * canonical JSON, lower-cased (`toLowerCase`), holds. So every window of
 * three characters of a needle is a window of three ASCII characters of
 * that text: an entry whose set of windows lacks one cannot hold the
 * needle. Needles shorter than three characters rule nothing out.
 *
 * A window's code is its three characters, seven bits each; its hash is
 * AES-256 of the code (one ECB block each: a pseudo-random permutation, so
 * distinct codes never collide) under a key derived from the session's
 * data key. Without that key a hash is a pseudo-random function of an
 * unknown trigram; erasing the session destroys the key and with it the
 * meaning of every hash.
 */

import { type Cipher, createCipheriv } from "node:crypto";
import { endianness } from "node:os";

/**
 * Typed arrays are in the platform's byte order; hash inputs and outputs
 * are little-endian, so that a hash means the same everywhere: typed-array
 * views where that is the platform's order, byte by byte elsewhere.
 */
const LITTLE = endianness() === "LE";
/** The AES input of a hashing, reused (hashing is synchronous). */
let blocks = Buffer.alloc(16 * 1024);

/** A trigram's code: three ASCII characters, seven bits each. */
export function trigramCode(a: number, b: number, c: number): number {
  return (a << 14) | (b << 7) | c;
}

/** The codes of the windows of three characters of `needle` (lower-case ASCII), in order. */
export function needleCodes(needle: string): Int32Array {
  const codes = new Int32Array(Math.max(0, needle.length - 2));
  for (let i = 0; i + 2 < needle.length; i++) {
    codes[i] = trigramCode(
      needle.charCodeAt(i),
      needle.charCodeAt(i + 1),
      needle.charCodeAt(i + 2),
    );
  }
  return codes;
}

/** The distinct trigram codes of one text at a time (`clear` between texts). */
export class Trigrams {
  private readonly seen = new Uint32Array(1 << 16);
  codes = new Int32Array(1024);
  n = 0;

  private add(c: number): void {
    const word = c >>> 5;
    const bit = 1 << (c & 31);
    const w = this.seen[word] as number;
    if ((w & bit) !== 0) return;
    this.seen[word] = w | bit;
    if (this.n === this.codes.length) {
      const bigger = new Int32Array(this.codes.length * 2);
      bigger.set(this.codes);
      this.codes = bigger;
    }
    this.codes[this.n++] = c;
  }

  /** Windows of three ASCII characters of `lower` (lower-cased already). */
  addText(lower: string): void {
    let a = 0x80;
    let b = 0x80;
    for (let i = 0; i < lower.length; i++) {
      const c = lower.charCodeAt(i);
      if (a < 0x80 && b < 0x80 && c < 0x80) this.add(trigramCode(a, b, c));
      a = b;
      b = c;
    }
  }

  /** Windows of three ASCII bytes of `buf[start, end)`, letters folded to lower case. */
  addBytes(buf: Buffer, start: number, end: number): void {
    let a = 0x80;
    let b = 0x80;
    for (let i = start; i < end; i++) {
      let c = buf[i] as number;
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      if (a < 0x80 && b < 0x80 && c < 0x80) this.add(trigramCode(a, b, c));
      a = b;
      b = c;
    }
  }

  clear(): void {
    for (let i = 0; i < this.n; i++) this.seen[(this.codes[i] as number) >>> 5] = 0;
    this.n = 0;
  }
}

/** Hashes trigram codes under one key (AES-256-ECB, a block per code). */
export class TrigramHasher {
  private readonly cipher: Cipher;

  /** `key`: 32 bytes, derived from a session's data key for one purpose. */
  constructor(key: Uint8Array) {
    this.cipher = createCipheriv("aes-256-ecb", key, null);
    this.cipher.setAutoPadding(false);
  }

  /** The AES blocks of the first `n` codes (valid until the next call: a shared buffer may back it). */
  private encrypt(codes: Int32Array, n: number): Buffer {
    if (blocks.length < n * 16) blocks = Buffer.alloc(n * 32);
    const input = blocks.subarray(0, n * 16);
    if (LITTLE) {
      const lanes = new Int32Array(input.buffer, input.byteOffset, n * 4);
      for (let i = 0; i < n; i++) lanes[4 * i] = codes[i] as number;
    } else {
      for (let i = 0; i < n; i++) input.writeInt32LE(codes[i] as number, i * 16);
    }
    return this.cipher.update(input);
  }

  /**
   * Two 32-bit words per code (the first two little-endian words of its
   * block; the second made odd): the two hashes of a Bloom filter's probes.
   */
  words(codes: Int32Array, n: number): Uint32Array {
    const out = this.encrypt(codes, n);
    const words = new Uint32Array(n * 2);
    if (LITTLE && out.byteOffset % 4 === 0) {
      const lanes = new Uint32Array(out.buffer, out.byteOffset, n * 4);
      for (let i = 0; i < n; i++) {
        words[2 * i] = lanes[4 * i] as number;
        words[2 * i + 1] = (lanes[4 * i + 1] as number) | 1;
      }
    } else {
      for (let i = 0; i < n; i++) {
        words[2 * i] = out.readUInt32LE(i * 16);
        words[2 * i + 1] = out.readUInt32LE(i * 16 + 4) | 1;
      }
    }
    return words;
  }

  /** One signed 32-bit token per code (its block's first little-endian word), for SQL integers. */
  tokens(codes: Int32Array, n: number): Int32Array {
    const out = this.encrypt(codes, n);
    const tokens = new Int32Array(n);
    for (let i = 0; i < n; i++) tokens[i] = out.readInt32LE(i * 16);
    return tokens;
  }
}
