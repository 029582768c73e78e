import { crc32 } from "node:zlib";
import { toJsonString } from "@bufbuild/protobuf";
import { type Entry, EntrySchema, type Withheld } from "../../../gen/sessiond/v1/entry_pb.js";
import { decodeEntry } from "../../core/codec/entry-from-json.js";
import { failedPrecondition, isSessiondError } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { EntryMeta } from "../../core/session-log.js";
import {
  type ContentOpener,
  notOpened,
  SEALED_OPEN,
  type SealedBounds,
  type SessionSealer,
  sealedBounds,
} from "../seal/sealed-payload.js";
import { metaOfJson, newMeta, scanMeta } from "./entry-meta.js";

/**
 * One record is one line:
 *
 *   {"seq":12,"crc":"1a2b3c4d","entry":<payload>}\n              the last record of its write
 *   {"seq":12,"crc":"1a2b3c4d","more":true,"entry":<payload>}\n  more records of its write follow
 *
 * where <payload> is the canonical proto JSON of the Entry and crc is the
 * CRC-32 (8 lowercase hex digits) of the seq's decimal digits, then a "+"
 * for a record with the `more` marker, then the payload's UTF-8 bytes.
 * Covering the seq too means that any flipped byte of a line, header
 * included, makes it fail the check; covering the marker means that a
 * record cannot lose or gain it and still pass (a cut write never looks
 * complete). The header has a fixed shape (one of the two above) so that
 * the reader can find the payload by position and check the CRC on the
 * bytes as stored: a flipped digit that still parses is caught, and no
 * byte is ever re-serialised to be verified. The line is still plain JSON,
 * so `jq` and friends can read the files.
 *
 * The unit of atomicity is the write (an Append's batch, a group commit's
 * requests): every record of a write but its last carries the
 * marker, so a reader tells a write cut by a crash after some of its lines
 * from a complete one (reader.ts). Files written before the marker existed
 * have none: each of their lines is a write of its own, read as before.
 *
 * A sealed session's payloads are their sealed stored form
 * (seal/sealed-payload.ts: the structure in clear, the kind's content
 * sealed); the CRC covers the bytes as stored, like any payload.
 */

const PREFIX = Buffer.from('{"seq":');
const MIDDLE = Buffer.from(',"crc":"');
const SUFFIX = Buffer.from('","entry":');
/** The header's end for a record that is not the last of its write. */
const MORE_SUFFIX = Buffer.from('","more":true,"entry":');
/** What the marker adds to the CRC input, between the seq digits and the payload. */
const MORE_CRC = Buffer.from("+");
const CLOSE = 0x7d; // "}"
const MAX_SEQ_DIGITS = 16;

/**
 * The line of one entry, newline included (a string: batches are joined
 * before encoding). `payload` is the entry's canonical JSON when the planner
 * already made it (AppendPlan.json), so it is not serialised twice. `more`:
 * further records of the same write follow this one.
 */
export function encodeRecord(
  entry: Entry,
  canonical = toJsonString(EntrySchema, entry),
  more = false,
  sealer?: SessionSealer,
): string {
  const payload = sealer === undefined ? canonical : sealer.sealPayload(canonical);
  const seq = String(entry.seq);
  const crc = crc32(payload, crc32(more ? `${seq}+` : seq))
    .toString(16)
    .padStart(8, "0");
  const marker = more ? '"more":true,' : "";
  return `{"seq":${seq},"crc":"${crc}",${marker}"entry":${payload}}\n`;
}

/**
 * The bytes of several entries, ready for ONE write: one unit of
 * atomicity (every record but the last carries the `more` marker), read
 * all or nothing. The same bytes as the records of `encodeRecord` joined,
 * made in one buffer: each payload is encoded to UTF-8 once, where it is
 * stored, and its CRC is taken over those bytes. With a `sealer` each
 * payload is stored sealed, and `texts` gets the canonical JSON all the same.
 */
export function encodeRecords(
  entries: readonly Entry[],
  payloads: readonly (string | undefined)[] = [],
  /** Filled with each entry's canonical JSON (given or encoded here), as the log keeps it. */
  // Stryker disable next-line ArrayDeclaration: a preallocated array and an empty one hold the same once filled below
  texts: string[] = new Array(entries.length),
  sealer?: SessionSealer,
): Buffer {
  const n = entries.length;
  // Stryker disable next-line ArrayDeclaration: preallocated or not, every slot is set in the loop below
  const seqs: string[] = new Array(n);
  // The stored form: the text itself (clear), or its sealed pieces (SessionSealer.sealParts).
  // Stryker disable next-line ArrayDeclaration,ConditionalExpression: preallocated or not, every slot is set below; a clear batch's array would hold only undefined, read as clear (the test spares the allocation)
  const sealed = sealer === undefined ? undefined : new Array<SealedParts | undefined>(n);
  let size = 0;
  for (let i = 0; i < n; i++) {
    const e = entries[i] as Entry;
    const text = payloads[i] ?? toJsonString(EntrySchema, e);
    const seq = String(e.seq);
    texts[i] = text;
    const parts = sealer?.sealParts(text);
    if (sealed !== undefined) sealed[i] = parts;
    seqs[i] = seq;
    // Header (its `more` variant but for the last), payload, "}\n".
    size += PREFIX.length + seq.length + MIDDLE.length + 8;
    size += i < n - 1 ? MORE_SUFFIX.length : SUFFIX.length;
    size +=
      parts === undefined
        ? Buffer.byteLength(text)
        : Buffer.byteLength(parts.head) +
          SEALED_OPEN.length +
          parts.sealed.length +
          SEALED_CLOSE.length;
    size += 2;
  }
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const more = i < n - 1;
    const seq = seqs[i] as string;
    const suffix = more ? MORE_SUFFIX : SUFFIX;
    const headerEnd = at + PREFIX.length + seq.length + MIDDLE.length + 8 + suffix.length;
    const parts = sealed?.[i];
    const payloadEnd =
      parts === undefined
        ? // Stryker disable next-line StringLiteral: Buffer#write's default encoding ("" included) is UTF-8
          headerEnd + buf.write(texts[i] as string, headerEnd, "utf8")
        : writeSealed(buf, headerEnd, parts);
    let crc = crc32(buf.subarray(headerEnd, payloadEnd), crc32(more ? `${seq}+` : seq));
    at += PREFIX.copy(buf, at);
    // Stryker disable next-line StringLiteral: a seq is ASCII digits, the same bytes in UTF-8
    at += buf.write(seq, at, "latin1");
    at += MIDDLE.copy(buf, at);
    for (let d = 7; d >= 0; d--) {
      buf[at + d] = HEX[crc & 0xf] as number;
      crc >>>= 4;
    }
    at += 8;
    suffix.copy(buf, at);
    at = payloadEnd;
    buf[at++] = CLOSE;
    buf[at++] = NEWLINE;
  }
  return buf;
}

type SealedParts = { readonly head: string; readonly sealed: string };
/** What ends a sealed payload: the base64's closing quote, then the kind's value's and the entry's braces. */
const SEALED_CLOSE = Buffer.from('"}}');

/**
 * A sealed payload's bytes at `at` (the stored form of sealParts: head,
 * `{"@sealed":"`, base64, `"}}`); returns where they end. The base64 is
 * ASCII: written as latin1, without UTF-8's scan.
 */
function writeSealed(buf: Buffer, at: number, parts: SealedParts): number {
  // Stryker disable next-line StringLiteral: Buffer#write's default encoding ("" included) is UTF-8
  let end = at + buf.write(parts.head, at, "utf8");
  end += SEALED_OPEN.copy(buf, end);
  // Stryker disable next-line StringLiteral: base64 is ASCII, the same bytes in UTF-8 (only slower to write)
  end += buf.write(parts.sealed, end, "latin1");
  return end + SEALED_CLOSE.copy(buf, end);
}

/** Lowercase hex digits, by value. */
const HEX = Buffer.from("0123456789abcdef");
const NEWLINE = 0x0a;

/**
 * The content of a new file (create, fork, copy): no `more` markers, every
 * record a unit of its own, like a file written before the marker existed.
 * A new file is made visible whole (temp file, fsync, `link`: never cut),
 * so the marker would add nothing, and a copied session keeps the bytes
 * of a file whose appends wrote one entry each.
 */
export function encodeFileContent(entries: readonly Entry[], sealer?: SessionSealer): Buffer {
  let text = "";
  for (const e of entries) text += encodeRecord(e, undefined, false, sealer);
  return Buffer.from(text);
}

/** A line whose framing and checksum are right: it was written whole by a writer. */
export interface IntactRecord {
  readonly seq: number;
  /** Payload bounds inside the buffer (the line's newline is at `end + 1`). */
  readonly start: number;
  readonly end: number;
  /** The `more` marker: not the last record of its write. */
  readonly more: boolean;
}

/** Where a payload is stored (what decoding needs of a frame). */
export type PayloadBounds = Pick<IntactRecord, "seq" | "start" | "end">;

/** True when `token` is at `buf[at]` (a byte loop: cheaper than `compare` on a few bytes). */
function matchAt(buf: Buffer, at: number, end: number, token: Buffer): boolean {
  if (end - at < token.length) return false;
  for (let i = 0; i < token.length; i++) if (buf[at + i] !== token[i]) return false;
  return true;
}

/** The value of a lowercase hex digit, or a negative number (below "0" too). */
function hexValue(byte: number): number {
  if (byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}

/**
 * Checks the framing and the CRC of the line `buf[start, end)` (newline
 * excluded). Returns the seq and payload bounds, or a reason it is not intact.
 * Runs once per line of every file loaded: it allocates nothing but the
 * two views the CRC needs.
 */
export function checkFrame(buf: Buffer, start: number, end: number): IntactRecord | string {
  if (!matchAt(buf, start, end, PREFIX)) return "not a record (bad header)";
  let at = start + PREFIX.length;
  let seq = 0;
  const digits = at;
  while (at < end && at - digits < MAX_SEQ_DIGITS) {
    const d = buf[at] as number;
    if (d < 0x30 || d > 0x39) break;
    seq = seq * 10 + (d - 0x30);
    at++;
  }
  if (at === digits || buf[digits] === 0x30) return "bad seq in header";
  const digitsEnd = at;
  if (!matchAt(buf, at, end, MIDDLE)) return "bad header after seq";
  at += MIDDLE.length;
  let crc = 0;
  for (let i = 0; i < 8; i++) {
    const v = at + i < end ? hexValue(buf[at + i] as number) : -1;
    if (v < 0) return "bad checksum field";
    crc = crc * 16 + v;
  }
  at += 8;
  let more = false;
  if (matchAt(buf, at, end, SUFFIX)) {
    at += SUFFIX.length;
  } else if (matchAt(buf, at, end, MORE_SUFFIX)) {
    at += MORE_SUFFIX.length;
    more = true;
  } else {
    return "bad header after checksum";
  }
  if (end - at < 2 || buf[end - 1] !== CLOSE) return "record is not closed";
  let seqCrc = crc32(buf.subarray(digits, digitsEnd));
  if (more) seqCrc = crc32(MORE_CRC, seqCrc);
  if (crc32(buf.subarray(at, end - 1), seqCrc) !== crc) return "checksum mismatch";
  return { seq, start: at, end: end - 1, more };
}

function notAnEntry(err: unknown): string {
  const why = err instanceof Error ? err.message : String(err);
  return `payload is not a valid entry (${why.slice(0, 120)})`;
}

/**
 * Reads the indexed fields of an intact record's payload into `meta`
 * (entry-meta.ts: a scan of the first bytes, else JSON.parse) and checks
 * that it carries the header's seq. Returns undefined, or why the record
 * is not a valid entry. The rest of the payload is checked when the entry
 * is decoded (`decodePayload`).
 */
export function readMeta(buf: Buffer, frame: PayloadBounds, meta: EntryMeta): string | undefined {
  // Stryker disable next-line ConditionalExpression: always taking the JSON.parse fallback reads the same fields as the scan (lazy-load.test.ts checks they agree)
  if (!scanMeta(buf, frame.start, frame.end, meta)) {
    let json: unknown;
    try {
      json = JSON.parse(buf.toString("utf8", frame.start, frame.end));
    } catch (err) {
      return notAnEntry(err);
    }
    const bad = metaOfJson(json, meta);
    if (bad !== undefined) return bad;
  }
  if (meta.seq !== frame.seq) return `header seq ${frame.seq} but entry seq ${meta.seq}`;
  return undefined;
}

/**
 * Parses the payload of an intact record into an Entry and checks that it
 * carries the header's seq. Unknown fields are ignored: a record with a
 * valid checksum was written by some sessiond, maybe a newer one.
 * `decodeEntry` is `fromJson` with a fast path for our writer's layout
 * (core/codec/entry-from-json.ts).
 *
 * A sealed payload (seal/sealed-payload.ts) is opened with `opener`: one
 * that does not open is a reason naming the entry (DATA_LOSS where the
 * caller reports it), never an entry without content; without a key
 * (`opener` absent or a MissingKey) FAILED_PRECONDITION is thrown.
 */
export function decodePayload(
  buf: Buffer,
  frame: PayloadBounds,
  opener?: ContentOpener,
): Entry | string {
  let entry: Entry;
  try {
    let text: string;
    const sealed = sealedBounds(buf, frame.start, frame.end);
    if (sealed === undefined) text = buf.toString("utf8", frame.start, frame.end);
    else {
      const opened = openedText(buf, frame, sealed, opener ?? NO_KEY);
      if (opened.bad !== undefined) return opened.bad;
      text = opened.text;
    }
    entry = decodeEntry(JSON.parse(text), { ignoreUnknownFields: true });
    // An erased session's sealed record (session-keys.ts ErasedKey): its
    // content is gone with the key; the entry reads with the erasure's marker.
    const erased =
      // Stryker disable next-line OptionalChaining: a sealed record got here opened, so with an opener (none: NO_KEY threw)
      sealed === undefined ? undefined : (opener as { erased?: Withheld } | undefined)?.erased;
    // A redacted entry keeps its own marker.
    // Stryker disable next-line ConditionalExpression: without the test a clear entry gets withheld ??= undefined, the value it had (the test spares the hot path the assignment)
    if (erased !== undefined) entry.withheld ??= erased;
  } catch (err) {
    if (isSessiondError(err)) throw err;
    return notAnEntry(err);
  }
  if (Number(entry.seq) !== frame.seq) return `header seq ${frame.seq} but entry seq ${entry.seq}`;
  return entry;
}

/** One meta for the openings of this module (synchronous: never shared across a turn). */
const OPEN_META = newMeta();

/**
 * The canonical JSON of a sealed payload, its content opened in place (the
 * clear part as stored, the content, the closing brace), or why not: the
 * id and kind the content is bound to are read from the clear part.
 */
function openedText(
  buf: Buffer,
  frame: PayloadBounds,
  sealed: SealedBounds,
  opener: ContentOpener,
): { text: string; bad?: undefined } | { text?: undefined; bad: string } {
  const bad = readMeta(buf, frame, OPEN_META);
  if (bad !== undefined) return { bad };
  const id = OPEN_META.id;
  const content = opener.open(
    id,
    frame.seq,
    // Stryker disable next-line StringLiteral: no sealer binds content to a kind of any other name: it fails to open either way
    OPEN_META.kind ?? "",
    buf.toString("latin1", sealed.sealedStart, sealed.sealedEnd),
  );
  if (content === undefined) return { bad: notOpened(id, frame.seq) };
  return { text: `${buf.toString("utf8", frame.start, sealed.valueStart)}${content}}` };
}

/** The opener of a reader given no key (callers that know the session pass a MissingKey). */
const NO_KEY: ContentOpener = {
  open(entryId, seq) {
    throw failedPrecondition(
      `entry ${quote(entryId)} (seq ${seq}) is encrypted and this reader has no key for it`,
    );
  },
};

/**
 * The canonical JSON of a sealed record's payload (its content opened in
 * place), for a search to look through; undefined when the payload is not
 * sealed; `bad` when it does not open.
 */
export function openedPayload(
  buf: Buffer,
  frame: PayloadBounds,
  opener: ContentOpener,
): { text: string; bad?: undefined } | { text?: undefined; bad: string } | undefined {
  const sealed = sealedBounds(buf, frame.start, frame.end);
  return sealed === undefined ? undefined : openedText(buf, frame, sealed, opener);
}
