import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { contextFor, nativeAead } from "./native-aead.js";

/**
 * AES-256-GCM as sessiond uses it at rest, for entry content and for data
 * keys alike: a 96-bit random nonce per seal (a session's data key seals a
 * few million payloads at most, far below the 2^32 random nonces NIST
 * allows one key), a 128-bit tag, and associated data that names the
 * place the bytes belong to, so that bytes copied to another place fail
 * the tag instead of opening there.
 *
 * The sealed form is one byte string: format byte (1), nonce (12),
 * ciphertext, tag (16); stored as base64.
 *
 * The cipher is the optional native addon's when it is loaded (native-aead.ts:
 * a key schedule per key instead of a cipher object per seal), else
 * node:crypto's; both make and open the same bytes.
 */

/** Bytes of a key: AES-256. */
export const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 1;

/**
 * Associated data for a tuple of strings: each one as its UTF-8 length
 * (4 bytes, big-endian) and its bytes, so that no two different tuples give
 * the same bytes ("ab","c" and "a","bc" differ). Laid out in `into` when
 * it is large enough (a buffer the caller reuses: setAAD reads it at once).
 */
export function associatedData(parts: readonly string[], prefix?: Buffer, into?: Buffer): Buffer {
  const start = prefix?.length ?? 0;
  // Most (an entry's id, seq and kind) are short ASCII: laid out by hand in
  // the caller's buffer, without a call into C++ per part (Buffer#write,
  // Buffer.byteLength), ~2-3 µs of a sealed append right after a flush.
  if (into !== undefined && start <= into.length) {
    const at = asciiInto(parts, into, start);
    if (at >= 0) {
      if (prefix !== undefined) prefix.copy(into, 0);
      return into.subarray(0, at);
    }
  }
  let size = start;
  for (const p of parts) size += 4 + Buffer.byteLength(p);
  const out =
    into !== undefined && into.length >= size ? into.subarray(0, size) : Buffer.allocUnsafe(size);
  let at = prefix === undefined ? 0 : prefix.copy(out, 0);
  for (const p of parts) {
    const n = out.write(p, at + 4);
    out.writeUInt32BE(n, at);
    at += 4 + n;
  }
  return out;
}

/**
 * Lays out `parts` (lengths and bytes) in `out` from `at` when every one is
 * ASCII and they fit; returns where they end, or -1 (nothing usable written).
 */
function asciiInto(parts: readonly string[], out: Buffer, at: number): number {
  for (const p of parts) {
    const n = p.length;
    if (at + 4 + n > out.length) return -1;
    out[at] = n >>> 24;
    out[at + 1] = (n >>> 16) & 0xff;
    out[at + 2] = (n >>> 8) & 0xff;
    out[at + 3] = n & 0xff;
    at += 4;
    for (let i = 0; i < n; i++) {
      const c = p.charCodeAt(i);
      if (c > 0x7f) return -1;
      out[at++] = c;
    }
  }
  return at;
}

/**
 * Random nonces are taken from a pool filled by one call for many: a
 * randomBytes call costs ~13 µs, more than sealing an entry. Each nonce is
 * 12 fresh bytes of the CSPRNG, used once.
 */
const POOL_NONCES = 1024;
let pool = Buffer.alloc(0);
let poolAt = 0;

function nextNonce(): Buffer {
  if (poolAt + NONCE_BYTES > pool.length) {
    pool = randomBytes(NONCE_BYTES * POOL_NONCES);
    poolAt = 0;
  }
  const nonce = pool.subarray(poolAt, poolAt + NONCE_BYTES);
  poolAt += NONCE_BYTES;
  return nonce;
}

/**
 * Where `seal` lays out format, nonce, ciphertext and tag before their
 * base64: one buffer for the process, reused (the work between filling it
 * and reading it back is synchronous; it holds no plaintext). Why: a
 * sealed entry is written on every append of an encrypted session, and
 * Buffer.of + Buffer.concat allocate twice more per seal; with the joins
 * the sealed append no longer makes (sealed-payload.ts `sealParts`,
 * jsonl/record.ts), encoding one sealed 700-byte message went from 22-27
 * to 18.5-23 µs (medians, both builds in one process). Larger payloads
 * take the two allocations.
 */
const SCRATCH_BYTES = 64 * 1024;
const scratch = Buffer.allocUnsafe(SCRATCH_BYTES);

/**
 * Where the native path lays out a string plaintext's UTF-8 for the addon:
 * reused, and zeroed after each seal (so that it holds no plaintext between
 * seals, as `scratch` holds none); a larger plaintext is encoded on its own.
 */
const plainScratch = Buffer.allocUnsafe(SCRATCH_BYTES);

/** Seals `plaintext` under `key` bound to `ad`; base64 of format, nonce, ciphertext, tag. */
export function seal(key: Uint8Array, plaintext: Uint8Array | string, ad: Uint8Array): string {
  const addon = nativeAead();
  if (addon !== undefined) {
    // An entry's content (a string that surely fits) goes through the two
    // scratch buffers; anything else is sealed on its own (sealBytes).
    if (typeof plaintext !== "string" || SEAL_OVERHEAD + plaintext.length * 3 > SCRATCH_BYTES) {
      return sealBytes(key, plaintext, ad).toString("base64");
    }
    const bytes = plainScratch.subarray(0, plainScratch.write(plaintext));
    scratch[0] = FORMAT;
    nextNonce().copy(scratch, 1);
    const n = addon.seal(
      contextFor(addon, key, true),
      scratch.subarray(1, 1 + NONCE_BYTES),
      ad,
      bytes,
      scratch.subarray(1 + NONCE_BYTES),
    );
    bytes.fill(0);
    return scratch.toString("base64", 0, 1 + NONCE_BYTES + n);
  }
  const s = encrypt(key, plaintext, ad);
  const size = SEAL_OVERHEAD + s.body.length;
  if (size > SCRATCH_BYTES || s.rest.length > 0) return joined(s).toString("base64");
  scratch[0] = FORMAT;
  s.nonce.copy(scratch, 1);
  s.body.copy(scratch, 1 + NONCE_BYTES);
  s.tag.copy(scratch, 1 + NONCE_BYTES + s.body.length);
  return scratch.toString("base64", 0, size);
}

/** Bytes `sealBytes` adds to its plaintext: format, nonce, tag. */
export const SEAL_OVERHEAD = 1 + NONCE_BYTES + TAG_BYTES;

/** `seal` as bytes (format, nonce, ciphertext, tag): for blobs, stored raw. */
export function sealBytes(key: Uint8Array, plaintext: Uint8Array | string, ad: Uint8Array): Buffer {
  const addon = nativeAead();
  if (addon === undefined) return joined(encrypt(key, plaintext, ad));
  const bytes = typeof plaintext === "string" ? Buffer.from(plaintext) : plaintext;
  const out = Buffer.allocUnsafe(SEAL_OVERHEAD + bytes.length);
  out[0] = FORMAT;
  nextNonce().copy(out, 1);
  const nonce = out.subarray(1, 1 + NONCE_BYTES);
  addon.seal(contextFor(addon, key, true), nonce, ad, bytes, out.subarray(1 + NONCE_BYTES));
  return out;
}

/** One AES-256-GCM seal's pieces (a fresh nonce, the ciphertext, what final gave, the tag). */
interface Pieces {
  readonly nonce: Buffer;
  readonly body: Buffer;
  /** GCM is a stream mode: final() gives no bytes, only the tag; kept all the same. */
  readonly rest: Buffer;
  readonly tag: Buffer;
}

function encrypt(key: Uint8Array, plaintext: Uint8Array | string, ad: Uint8Array): Pieces {
  const nonce = nextNonce();
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(ad);
  const body =
    typeof plaintext === "string" ? cipher.update(plaintext, "utf8") : cipher.update(plaintext);
  const rest = cipher.final();
  return { nonce, body, rest, tag: cipher.getAuthTag() };
}

/** The sealed form of `p` in one new buffer. */
function joined(p: Pieces): Buffer {
  return Buffer.concat([Buffer.of(FORMAT), p.nonce, p.body, p.rest, p.tag]);
}

/**
 * Opens what `seal` made, or undefined when it does not open: another key,
 * another place (`ad`), altered or cut bytes, an unknown format. Never
 * returns bytes that were not sealed under this key for this place.
 */
export function open(
  key: Uint8Array,
  sealed: string | Uint8Array,
  ad: Uint8Array,
): Buffer | undefined {
  const bytes =
    typeof sealed === "string"
      ? Buffer.from(sealed, "base64")
      : Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (bytes.length < 1 + NONCE_BYTES + TAG_BYTES || bytes[0] !== FORMAT) return undefined;
  const nonce = bytes.subarray(1, 1 + NONCE_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const body = bytes.subarray(1 + NONCE_BYTES, bytes.length - TAG_BYTES);
  const addon = nativeAead();
  if (addon !== undefined) {
    if (key.length !== KEY_BYTES) return undefined; // as createDecipheriv's refusal below
    const out = Buffer.allocUnsafe(body.length);
    const n = addon.open(contextFor(addon, key, false), nonce, ad, body, tag, out);
    return n < 0 ? undefined : out.subarray(0, n);
  }
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, nonce);
    decipher.setAAD(ad);
    decipher.setAuthTag(tag);
    const out = decipher.update(body);
    const rest = decipher.final();
    return rest.length === 0 ? out : Buffer.concat([out, rest]);
  } catch {
    return undefined;
  }
}

/** A new random key (a session's data key, a keyring's key version). */
export function newKey(): Buffer {
  return randomBytes(KEY_BYTES);
}
