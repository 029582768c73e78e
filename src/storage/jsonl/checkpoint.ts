import { rename as fsRename } from "node:fs/promises";
import * as path from "node:path";
import type { SessionKey } from "../engine.js";
import {
  checkOf,
  checkpointEntry,
  FIXED,
  HEAD_AT,
  HEAD_CHARS,
  OpenedSegments,
  prefixLength,
  SegmentPacker,
  sealedLength,
  TAIL_AT,
  TAIL_CHARS,
  textLength,
} from "../seal/checkpoint-segments.js";
import type { ContentOpener, SessionSealer } from "../seal/sealed-payload.js";
import { sealedBounds } from "../seal/sealed-payload.js";
import {
  closeQuietly,
  errnoCode,
  type FsOps,
  fsyncDir,
  readWholeBytes,
  writeAll,
} from "./fs-ops.js";
import { tempName } from "./paths.js";
import { checkFrame, openedPayload } from "./record.js";

/**
 * The checkpoint of a sealed session: a cache of its opened payloads, so
 * that a cold read (a fresh engine's first open + state) opens a few large
 * sealed segments instead of every entry one by one. Opening a sealed
 * payload costs ~4 µs of cipher setup per entry (createDecipheriv, AAD,
 * tag, final) against ~1.6 µs to JSON.parse it: 10,000 entries opened one
 * by one cost more than the rest of a cold read. AES-GCM over 256 KiB
 * segments costs the bytes, not the setups (~4 ms for 10,000 entries).
 *
 *   <dataDir>/<workspace>/sessions/<id>.ckpt        (subagents/<id>.ckpt)
 *
 *   {"format":"sessiond-checkpoint","version":1,"workspace":"w","sessionId":"s"}\n
 *   then segments, each: first seq (u32 BE), last seq (u32), length (u32),
 *   and that many bytes sealed by SessionSealer.sealSegment: the segments
 *   and their entries of seal/checkpoint-segments.ts, whose check field is
 *   the record's CRC (its header's).
 *
 * It is never trusted as the log: the log is read and checked as always
 * (frames, CRCs, seqs, the tree), and an entry is taken from the
 * checkpoint only when its record is the very one the checkpoint was made
 * of: same seq, same header CRC, the same clear part byte for byte (id,
 * parent, timestamp, seq, kind), the same base64 length and the same nonce
 * and tag. Anything else (a record written since, rewritten by a
 * redaction, moved from another entry or session, a checkpoint of another
 * session or key, damaged, cut, stale) is opened from the record as
 * before: a payload moved to another place still fails to open there. A
 * segment that does not open (another key, another session, altered or
 * cut bytes) is skipped. A reader compares each record while it scans the
 * log (`match`: its bytes were just read for their CRC, the checkpoint's
 * entries come in seq order), and takes the entry of a record found equal
 * when it decodes it, from the same bytes, without comparing again.
 *
 * Written (temp file, rename; no fsync: a checkpoint lost or cut by a
 * power cut is only a slower read) when a session is closed or evicted and
 * enough of its entries are not covered yet, under the session's turn and
 * lease; deleted (durably) before a redaction rewrites the log and before
 * an erasure destroys the key, and with the session. It holds no clear
 * content: every byte of content in it is sealed.
 */

const FORMAT = "sessiond-checkpoint";
const FRAME = 12;
const SEALED_OPEN = Buffer.from('{"@sealed":"');
/** The closing `"}}` after the base64 of a sealed payload. */
const SEALED_CLOSE = 3;
const QUOTE = 0x22;

/** The checkpoint file of the session whose log is `logFile`. */
export function checkpointPath(logFile: string): string {
  return logFile.replace(/\.jsonl$/, ".ckpt");
}

/**
 * The temp file of a checkpoint write: one name per session (writes run
 * under the session's lease, one at a time), so that a crashed write's
 * leftover is found without reading the directory.
 */
function tempPath(logFile: string, sessionId: string): string {
  return path.join(path.dirname(logFile), tempName(sessionId, "ckpt"));
}

function headerOf(key: SessionKey): Buffer {
  return Buffer.from(
    `${JSON.stringify({ format: FORMAT, version: 1, workspace: key.workspace, sessionId: key.sessionId })}\n`,
  );
}

/** The record CRC in the header of the record whose payload starts at `start` (-1 when not found). */
function headerCrc(buf: Buffer, start: number): number {
  // `..,"crc":"XXXXXXXX","entry":` or `..,"crc":"XXXXXXXX","more":true,"entry":`
  const at = buf[start - 10] === QUOTE ? start - 18 : start - 30;
  if (at < 0) return -1;
  let crc = 0;
  for (let i = 0; i < 8; i++) {
    const b = buf[at + i] as number;
    const v = b <= 0x39 ? b - 0x30 : b - 0x61 + 10;
    if (v < 0 || v > 15) return -1;
    crc = crc * 16 + v;
  }
  return crc;
}

/**
 * True when `a[aStart, aStart + n)` equals `b[bStart, bStart + n)` (both in
 * bounds). A byte loop: for a few dozen bytes it costs less than the
 * native call of `Buffer.compare`, which the longer clear part uses.
 */
function same(a: Buffer, aStart: number, b: Buffer, bStart: number, n: number): boolean {
  if (aStart + n > a.length || bStart + n > b.length) return false;
  for (let i = 0; i < n; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
}

/**
 * A session's sealer, with its checkpoint: reads open from the checkpoint
 * what it holds of a record (`textOf`), the rest one by one (`open`).
 * Starts reading the checkpoint when made; `ready` settles (never rejects)
 * when it is read, or found missing or unusable.
 */
export class CheckpointOpener implements ContentOpener {
  readonly ready: Promise<void>;
  private readonly opened: OpenedSegments;
  /**
   * By seq: the record found to be the very one checkpointed while the
   * log was scanned (`match`): its buffer and payload bounds.
   */
  private matchedIn: (Buffer | undefined)[] = [];
  private matchedStart: number[] = [];
  private matchedEnd: number[] = [];

  constructor(
    readonly sealer: SessionSealer,
    private readonly ops: FsOps,
    readonly file: string,
    private readonly key: SessionKey,
  ) {
    this.opened = new OpenedSegments(sealer);
    this.ready = this.load().catch(() => undefined);
  }

  /** The last seq the checkpoint covers (0: none). */
  get covered(): number {
    return this.opened.covered;
  }

  open(entryId: string, seq: number, kind: string, sealed: string): string | undefined {
    return this.sealer.open(entryId, seq, kind, sealed);
  }

  /**
   * The text (canonical JSON, content opened) of the sealed record of `seq`
   * whose payload is `buf[start, end)`, when the checkpoint holds that very
   * record; undefined otherwise (the caller opens the record). Taken once:
   * the checkpoint lets go of it.
   */
  textOf(buf: Buffer, seq: number, start: number, end: number): string | undefined {
    const at = this.isMatched(buf, seq, start, end)
      ? this.opened.offset(seq)
      : this.find(buf, seq, start, end);
    if (at === undefined) return undefined;
    const seg = this.opened.segment(seq) as Buffer;
    const text = seg.toString("utf8", at + FIXED, at + FIXED + textLength(seg, at));
    this.matchedIn[seq] = undefined;
    this.opened.take(seq);
    return text;
  }

  /** `textOf`'s bytes, without taking them (a checkpoint write reuses them). */
  bytesOf(buf: Buffer, seq: number, start: number, end: number): Buffer | undefined {
    const at = this.find(buf, seq, start, end);
    if (at === undefined) return undefined;
    const seg = this.opened.segment(seq) as Buffer;
    return seg.subarray(at + FIXED, at + FIXED + textLength(seg, at));
  }

  /**
   * Compares the intact record of `seq` at `buf[start, end)` with the
   * entry the checkpoint holds for it, as `textOf` would, while the scan
   * of the log has its bytes at hand (reader.ts): when it is the very
   * record checkpointed, `textOf` of that record (same buffer, same
   * bounds) takes the entry without comparing it again. Nothing when the
   * checkpoint is not read yet (`textOf` compares then).
   */
  match(buf: Buffer, seq: number, start: number, end: number): void {
    if (this.find(buf, seq, start, end) === undefined) return;
    this.matchedIn[seq] = buf;
    this.matchedStart[seq] = start;
    this.matchedEnd[seq] = end;
  }

  /** True when `match` found the record of `seq` at `buf[start, end)` to be the one checkpointed (and it is not taken: `textOf` forgets it). */
  private isMatched(buf: Buffer, seq: number, start: number, end: number): boolean {
    return (
      this.matchedIn[seq] === buf &&
      this.matchedStart[seq] === start &&
      this.matchedEnd[seq] === end
    );
  }

  /** Where the entry of `seq` starts in its segment, when it is the record `buf[start, end)`. */
  private find(buf: Buffer, seq: number, start: number, end: number): number | undefined {
    const seg = this.opened.segment(seq);
    if (seg === undefined) return undefined;
    const at = this.opened.offset(seq);
    const sealedLen = sealedLength(seg, at);
    const prefix = prefixLength(seg, at);
    if (end - start !== prefix + SEALED_OPEN.length + sealedLen + SEALED_CLOSE) return undefined;
    // The clear part lies within the entry's text (else the compare below
    // would read past the segment and throw, inside the scan of the log).
    if (prefix > textLength(seg, at)) return undefined;
    if (checkOf(seg, at) !== headerCrc(buf, start)) return undefined;
    const sealedStart = start + prefix + SEALED_OPEN.length;
    const sealedEnd = end - SEALED_CLOSE;
    if (
      buf.compare(seg, at + FIXED, at + FIXED + prefix, start, start + prefix) !== 0 ||
      !same(buf, start + prefix, SEALED_OPEN, 0, SEALED_OPEN.length) ||
      !same(buf, sealedStart, seg, at + HEAD_AT, HEAD_CHARS) ||
      !same(buf, sealedEnd - TAIL_CHARS, seg, at + TAIL_AT, TAIL_CHARS)
    ) {
      return undefined;
    }
    return at;
  }

  private async load(): Promise<void> {
    const bytes = await readWholeBytes(this.ops, this.file);
    if (bytes === undefined) return;
    const header = headerOf(this.key);
    if (bytes.length < header.length || !same(bytes, 0, header, 0, header.length)) return;
    let at = header.length;
    while (at + FRAME <= bytes.length) {
      const first = bytes.readUInt32BE(at);
      const last = bytes.readUInt32BE(at + 4);
      const len = bytes.readUInt32BE(at + 8);
      const end = at + FRAME + len;
      if (end > bytes.length || last < first) break;
      this.opened.add(first, last, bytes.subarray(at + FRAME, end));
      at = end;
    }
  }
}

/** What `writeCheckpoint` did. */
export interface CheckpointWritten {
  /** The last seq covered (0 when the log holds no complete sealed record to cover). */
  readonly covered: number;
  /** Entries opened one by one (not found in the previous checkpoint). */
  readonly opened: number;
}

/**
 * Writes the checkpoint of the sealed session whose log is `logFile`,
 * from the log as it is on disk (the caller holds the session's turn and
 * lease): every sealed record of its complete writes, each taken from the
 * previous checkpoint when it holds that record, else opened with
 * `sealer`. Temp file in the same directory, then rename over; no fsync.
 * `yieldEvery`: opened records between two turns of the event loop (a
 * long session does not stall the others).
 */
export async function writeCheckpoint(
  ops: FsOps,
  logFile: string,
  key: SessionKey,
  sealer: SessionSealer,
  opts: { segmentBytes?: number; yieldEvery?: number } = {},
): Promise<CheckpointWritten> {
  const file = checkpointPath(logFile);
  const previous = new CheckpointOpener(sealer, ops, file, key);
  const log = await readWholeBytes(ops, logFile);
  await previous.ready;
  if (log === undefined) return { covered: 0, opened: 0 };
  const yieldEvery = opts.yieldEvery ?? 256;
  const packer = new SegmentPacker(sealer, opts.segmentBytes);
  // Entries of the write in progress: kept out until its last record is seen.
  let pending: { seq: number; bytes: Buffer }[] = [];
  let opened = 0;
  let pos = 0;
  for (let nl = log.indexOf(0x0a, pos); nl !== -1; nl = log.indexOf(0x0a, pos)) {
    const frame = checkFrame(log, pos, nl);
    pos = nl + 1;
    if (typeof frame === "string") break;
    const entry = entryOf(log, frame, previous, sealer);
    if (entry?.opened) {
      opened++;
      if (opened % yieldEvery === 0) await new Promise((r) => setImmediate(r));
    }
    if (entry !== undefined) pending.push({ seq: frame.seq, bytes: entry.bytes });
    if (!frame.more) {
      for (const p of pending) packer.add(p.seq, p.bytes);
      pending = [];
    }
  }
  packer.flush();
  const { covered } = packer;
  if (covered === 0) return { covered, opened };
  const parts: Buffer[] = [headerOf(key)];
  for (const { first, last, sealed } of packer.segments) {
    const frame = Buffer.allocUnsafe(FRAME);
    frame.writeUInt32BE(first, 0);
    frame.writeUInt32BE(last, 4);
    frame.writeUInt32BE(sealed.length, 8);
    parts.push(frame, sealed);
  }
  await replaceQuietly(ops, file, tempPath(logFile, key.sessionId), Buffer.concat(parts));
  return { covered, opened };
}

/** A checkpoint entry for one intact record, or undefined for a record in clear or one that does not open. */
function entryOf(
  log: Buffer,
  frame: { seq: number; start: number; end: number },
  previous: CheckpointOpener,
  sealer: SessionSealer,
): { bytes: Buffer; opened: boolean } | undefined {
  const { seq, start, end } = frame;
  const bounds = sealedBounds(log, start, end);
  if (bounds === undefined) return undefined;
  if (bounds.sealedEnd - bounds.sealedStart < HEAD_CHARS + TAIL_CHARS) return undefined;
  let text = previous.bytesOf(log, seq, start, end);
  let opened = false;
  if (text === undefined) {
    const o = openedPayload(log, frame, sealer);
    if (o?.text === undefined) return undefined;
    text = Buffer.from(o.text);
    opened = true;
  }
  const prefix = bounds.valueStart - start;
  const stored = {
    stored: log,
    sealedStart: bounds.sealedStart,
    sealedEnd: bounds.sealedEnd,
    prefix,
  };
  const out = checkpointEntry(seq, headerCrc(log, start), stored, text);
  // The text's clear part is the record's, byte for byte (readers compare them).
  if (out === undefined || !same(out, FIXED, log, start, prefix)) return undefined;
  return { bytes: out, opened };
}

/** Temp file, rename over (no fsync: a checkpoint is a cache, checked when read). */
async function replaceQuietly(ops: FsOps, file: string, temp: string, content: Buffer) {
  const rename = ops.rename?.bind(ops) ?? fsRename;
  const fd = await ops.open(temp, "w");
  try {
    await writeAll(ops, fd, content, 0);
  } finally {
    await closeQuietly(ops, fd);
  }
  try {
    await rename(temp, file);
  } catch (err) {
    await ops.unlink(temp).catch(() => undefined);
    throw err;
  }
}

/**
 * Deletes the checkpoint of the session whose log is `logFile`, and the
 * temp file of a crashed checkpoint write, durably (directory fsync unless
 * `noFsync`): before a redaction rewrites the log and before an erasure
 * destroys the key, so that no copy of a purged content stays, even one
 * the data key would open; and with the session. True when something was
 * deleted.
 */
export async function removeCheckpoint(
  ops: FsOps,
  logFile: string,
  sessionId: string,
  noFsync: boolean,
): Promise<boolean> {
  const dir = path.dirname(logFile);
  const doomed = [checkpointPath(logFile), tempPath(logFile, sessionId)];
  let removed = false;
  for (const file of doomed) {
    try {
      await ops.unlink(file);
      removed = true;
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
    }
  }
  if (removed && !noFsync) await fsyncDir(ops, dir);
  return removed;
}
