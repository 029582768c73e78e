import { crc32 } from "node:zlib";
import { fromJson, toJsonString } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";

/**
 * One record is one line:
 *
 *   {"seq":12,"crc":"1a2b3c4d","entry":<payload>}\n
 *
 * where <payload> is the canonical proto JSON of the Entry and crc is the
 * CRC-32 (8 lowercase hex digits) of the seq's decimal digits followed by
 * the payload's UTF-8 bytes. Covering the seq too means that any flipped
 * byte of a line, header included, makes it fail the check. The header
 * has a fixed shape so that the reader can find the payload by position and
 * check the CRC on the bytes as stored: a flipped digit that still parses
 * is caught, and no byte is ever re-serialised to be verified. The line is
 * still plain JSON, so `jq` and friends can read the files.
 */

const PREFIX = Buffer.from('{"seq":');
const MIDDLE = Buffer.from(',"crc":"');
const SUFFIX = Buffer.from('","entry":');
const CLOSE = 0x7d; // "}"
const MAX_SEQ_DIGITS = 16;

/** The line of one entry, newline included (a string: batches are joined before encoding). */
export function encodeRecord(entry: Entry): string {
  const payload = toJsonString(EntrySchema, entry);
  const seq = String(entry.seq);
  const crc = crc32(payload, crc32(seq)).toString(16).padStart(8, "0");
  return `{"seq":${seq},"crc":"${crc}","entry":${payload}}\n`;
}

/** The bytes of several entries, ready for one write. */
export function encodeRecords(entries: readonly Entry[]): Buffer {
  let text = "";
  for (const e of entries) text += encodeRecord(e);
  return Buffer.from(text);
}

/** A line whose framing and checksum are right: it was written whole by a writer. */
export interface IntactRecord {
  readonly seq: number;
  /** Payload bounds inside the buffer. */
  readonly start: number;
  readonly end: number;
}

function matchAt(buf: Buffer, at: number, token: Buffer): boolean {
  return (
    buf.length - at >= token.length &&
    buf.compare(token, 0, token.length, at, at + token.length) === 0
  );
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}

/**
 * Checks the framing and the CRC of the line `buf[start, end)` (newline
 * excluded). Returns the seq and payload bounds, or a reason it is not intact.
 */
export function checkFrame(buf: Buffer, start: number, end: number): IntactRecord | string {
  const line = buf.subarray(start, end);
  if (!matchAt(line, 0, PREFIX)) return "not a record (bad header)";
  let at = PREFIX.length;
  let seq = 0;
  const digits = at;
  while (at < line.length && at - digits < MAX_SEQ_DIGITS) {
    const d = line[at] as number;
    if (d < 0x30 || d > 0x39) break;
    seq = seq * 10 + (d - 0x30);
    at++;
  }
  if (at === digits || line[digits] === 0x30) return "bad seq in header";
  const seqDigits = line.subarray(digits, at);
  if (!matchAt(line, at, MIDDLE)) return "bad header after seq";
  at += MIDDLE.length;
  let crc = 0;
  for (let i = 0; i < 8; i++) {
    const v = hexValue(line[at + i] ?? -1);
    if (v < 0) return "bad checksum field";
    crc = crc * 16 + v;
  }
  at += 8;
  if (!matchAt(line, at, SUFFIX)) return "bad header after checksum";
  at += SUFFIX.length;
  if (line.length - at < 2 || line[line.length - 1] !== CLOSE) return "record is not closed";
  if (crc32(line.subarray(at, line.length - 1), crc32(seqDigits)) !== crc) {
    return "checksum mismatch";
  }
  return { seq, start: start + at, end: end - 1 };
}

/**
 * Parses the payload of an intact record into an Entry and checks that it
 * carries the header's seq. Unknown fields are ignored: a record with a
 * valid checksum was written by some sessiond, maybe a newer one.
 */
export function decodePayload(buf: Buffer, frame: IntactRecord): Entry | string {
  let entry: Entry;
  try {
    const json = JSON.parse(buf.toString("utf8", frame.start, frame.end));
    entry = fromJson(EntrySchema, json, { ignoreUnknownFields: true });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return `payload is not a valid entry (${why.slice(0, 120)})`;
  }
  if (Number(entry.seq) !== frame.seq) return `header seq ${frame.seq} but entry seq ${entry.seq}`;
  return entry;
}
