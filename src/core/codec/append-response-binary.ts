import { create } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  AppendedEntrySchema,
  type AppendResponse,
  AppendResponseSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";

/**
 * The binary encoding of an AppendResponse, written by hand into one
 * buffer: the same bytes as protobuf-es's `toBinary` (fields in number
 * order, proto3 defaults left out, `parent_id` and `timestamp` written
 * when present), checked against it by a property test.
 *
 * Why by hand: every durable Append answers one, and inside the server
 * `toBinary` took ~26 µs of a sequential Append's ~500 (timed stage by
 * stage; ~7 µs in a loop over this one type: reflection over many types is
 * slower), and protobuf-es's own BinaryWriter field by field hardly less
 * (a chunk and a TextEncoder call per string, a fork per sub-message).
 * Here the size is computed first, then one Buffer is filled.
 * Undefined for a message carrying unknown fields (never one the server
 * made): the caller encodes those with `toBinary`.
 */
export function encodeAppendResponse(m: AppendResponse): Uint8Array | undefined {
  if (hasUnknown(m)) return undefined;
  for (const e of m.entries) {
    if (hasUnknown(e) || (e.timestamp !== undefined && hasUnknown(e.timestamp))) return undefined;
  }
  return encode(m.entries, m.leafId, m.headSeq, m.deduplicated, 0);
}

/** The fields of an appended entry its AppendedEntry carries (an Entry has them all). */
export interface AppendedFields {
  readonly id: string;
  readonly parentId?: string | undefined;
  readonly seq: bigint;
  readonly timestamp?: Timestamp | undefined;
}

/** What an AppendResponse says of an append (the store's AppendResult has it). */
export interface AppendOutcome {
  readonly entries: readonly AppendedFields[];
  readonly leafId: string;
  readonly headSeq: number;
  readonly deduplicated: boolean;
}

/**
 * The AppendResponse of an append as a message: what the Connect handler
 * answers, and what the direct gRPC Append encodes with `toBinary` when
 * `appendResponseFrame` declines. One builder, so the two fronts cannot
 * answer differently.
 */
export function appendResponseOf(outcome: AppendOutcome): AppendResponse {
  return create(AppendResponseSchema, {
    entries: outcome.entries.map((e) =>
      create(AppendedEntrySchema, {
        id: e.id,
        parentId: e.parentId,
        seq: e.seq,
        timestamp: e.timestamp,
      }),
    ),
    leafId: outcome.leafId,
    headSeq: BigInt(outcome.headSeq),
    deduplicated: outcome.deduplicated,
  });
}

/**
 * The gRPC message of an append's answer, framed (a zero flag byte, the
 * length in 4 bytes big-endian, then the AppendResponse): the bytes of
 * `toBinary` of the response the handler makes of `outcome` (an
 * AppendedEntry of each entry's id, parent, seq and timestamp; the leaf,
 * the head seq, deduplicated), encoded straight from the outcome into the
 * buffer the stream sends. Undefined when a timestamp carries unknown
 * fields (a client's; `toBinary` writes them back): then the caller builds
 * the response and encodes it with `toBinary`.
 */
export function appendResponseFrame(outcome: AppendOutcome): Buffer | undefined {
  for (const e of outcome.entries) {
    if (e.timestamp !== undefined && hasUnknown(e.timestamp)) return undefined;
  }
  const headSeq = BigInt(outcome.headSeq);
  const buf = encode(outcome.entries, outcome.leafId, headSeq, outcome.deduplicated, FRAME_HEADER);
  buf[0] = 0;
  buf.writeUInt32BE(buf.length - FRAME_HEADER, 1);
  return buf;
}

/** A gRPC message's header: the compressed flag and the length. */
const FRAME_HEADER = 5;

/** The AppendResponse's bytes after `reserve` bytes left for the caller. */
function encode(
  entries: readonly AppendedFields[],
  leafId: string,
  headSeq: bigint,
  deduplicated: boolean,
  reserve: number,
): Buffer {
  // Stryker disable next-line ArrayDeclaration: the length only preallocates; every slot is set below
  const sizes: number[] = new Array(entries.length);
  let size = reserve;
  for (let i = 0; i < entries.length; i++) {
    const n = entrySize(entries[i] as AppendedFields);
    sizes[i] = n;
    size += 1 + uintSize(n) + n;
  }
  if (leafId !== "") size += 1 + stringSize(leafId);
  if (headSeq !== 0n) size += 1 + u64Size(headSeq);
  if (deduplicated) size += 2;
  const out: Out = { buf: Buffer.allocUnsafe(size), pos: reserve };
  for (let i = 0; i < entries.length; i++) {
    out.buf[out.pos++] = (1 << 3) | LEN;
    writeUint(out, sizes[i] as number);
    writeEntry(out, entries[i] as AppendedFields);
  }
  if (leafId !== "") writeString(out, 2, leafId);
  if (headSeq !== 0n) writeU64(out, 3, headSeq);
  // Stryker disable next-line ConditionalExpression: the buffer is sized exactly, and a typed array ignores writes past its end, so writing the field when false changes no byte
  if (deduplicated) {
    out.buf[out.pos++] = (4 << 3) | VARINT;
    // Stryker disable next-line UpdateOperator: the last write: pos is not read after it
    out.buf[out.pos++] = 1;
  }
  return out.buf;
}

const VARINT = 0;
const LEN = 2;

interface Out {
  readonly buf: Buffer;
  pos: number;
}

function hasUnknown(m: { $unknown?: unknown[] }): boolean {
  return m.$unknown !== undefined && m.$unknown.length > 0;
}

function entrySize(e: AppendedFields): number {
  let n = 0;
  if (e.id !== "") n += 1 + stringSize(e.id);
  if (e.parentId !== undefined) n += 1 + stringSize(e.parentId);
  if (e.seq !== 0n) n += 1 + u64Size(e.seq);
  if (e.timestamp !== undefined) {
    const t = timestampSize(e.timestamp);
    n += 1 + uintSize(t) + t;
  }
  return n;
}

function writeEntry(out: Out, e: AppendedFields): void {
  if (e.id !== "") writeString(out, 1, e.id);
  if (e.parentId !== undefined) writeString(out, 2, e.parentId);
  if (e.seq !== 0n) writeU64(out, 3, e.seq);
  const t = e.timestamp;
  if (t !== undefined) {
    out.buf[out.pos++] = (4 << 3) | LEN;
    writeUint(out, timestampSize(t));
    if (t.seconds !== 0n) writeU64(out, 1, twosComplement(t.seconds));
    if (t.nanos !== 0) {
      out.buf[out.pos++] = (2 << 3) | VARINT;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: a positive int32 through the 64-bit path is written as the same varint (writeVarint64 hands a safe value to writeUint); nanos is not 0 here
      if (t.nanos > 0) writeUint(out, t.nanos);
      else writeVarint64(out, twosComplement(BigInt(t.nanos)));
    }
  }
}

function timestampSize(t: Timestamp): number {
  let n = 0;
  if (t.seconds !== 0n) n += 1 + u64Size(twosComplement(t.seconds));
  // Stryker disable next-line EqualityOperator: nanos is not 0 here, so > and >= agree
  if (t.nanos !== 0) n += 1 + (t.nanos > 0 ? uintSize(t.nanos) : 10);
  return n;
}

/**
 * A signed 64-bit value as its varint carries it; an int32 is sign-extended
 * first, so a negative one of either takes ten bytes.
 */
function twosComplement(v: bigint): bigint {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: asUintN(64, v) of a v in [0, 2^63) is v itself: the test only skips the call
  return v < 0n ? BigInt.asUintN(64, v) : v;
}

function stringSize(s: string): number {
  const n = Buffer.byteLength(s);
  return uintSize(n) + n;
}

function writeString(out: Out, field: number, s: string): void {
  out.buf[out.pos++] = (field << 3) | LEN;
  writeUint(out, Buffer.byteLength(s));
  out.pos += out.buf.write(s, out.pos);
}

/** Bytes of the varint of a non-negative safe integer. */
function uintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function writeUint(out: Out, n: number): void {
  while (n >= 0x80) {
    out.buf[out.pos++] = (n % 128) | 0x80;
    n = Math.floor(n / 128);
  }
  out.buf[out.pos++] = n;
}

/** Bytes of the varint of an unsigned 64-bit value. */
function u64Size(v: bigint): number {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a shortcut: the bigint loop below counts a safe value's bytes alike
  if (v <= MAX_SAFE) return uintSize(Number(v));
  let size = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    size++;
  }
  return size;
}

function writeU64(out: Out, field: number, v: bigint): void {
  out.buf[out.pos++] = (field << 3) | VARINT;
  writeVarint64(out, v);
}

function writeVarint64(out: Out, v: bigint): void {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: a shortcut: the bigint loop below writes a safe value's bytes alike
  if (v <= MAX_SAFE) {
    writeUint(out, Number(v));
    return;
  }
  while (v >= 0x80n) {
    out.buf[out.pos++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  out.buf[out.pos++] = Number(v);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
