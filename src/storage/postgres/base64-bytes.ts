/**
 * Base64 decoding of bytes as the driver hands them (`sql\`...\`.raw()`:
 * Buffers, no string made), for a checkpoint's segments (checkpoint.ts).
 *
 * Written by hand because Node has no Buffer-to-Buffer base64 decoder:
 * `Buffer.from(text, "base64")` wants a string, and the one string of a
 * 340 KB segment lands in V8's large-object space, where making it costs
 * as much as decoding it (a 10,000-entry session's 12 MB of segments:
 * 21-26 ms as strings, the driver's and then the decode; 4-7 ms in pieces).
 * Each piece is a short string of whole base64 quanta (a multiple of 4
 * characters), decoded into its place in one buffer.
 */

/** Characters decoded at a time: whole quanta, young-generation strings. */
const PIECE = 64 * 1024;

/**
 * The bytes whose base64 (standard alphabet, padded, no whitespace) are
 * `ascii`. What Buffer.from(ascii.toString("latin1"), "base64") returns,
 * without the long string.
 */
export function fromBase64Bytes(ascii: Buffer): Buffer {
  const out = Buffer.allocUnsafe(Math.ceil(ascii.length / 4) * 3);
  let written = 0;
  for (let at = 0; at < ascii.length; at += PIECE) {
    const piece = ascii.toString("latin1", at, Math.min(ascii.length, at + PIECE));
    written += out.write(piece, written, "base64");
  }
  return out.subarray(0, written);
}
