import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { decodeEntry } from "../../core/codec/entry-from-json.js";
import { dataLoss, isSessiondError } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { EntryMeta, EntrySource, SessionLog } from "../../core/session-log.js";
import type { ContentOpener } from "../seal/sealed-payload.js";
import { CheckpointOpener } from "./checkpoint.js";
import { newMeta } from "./entry-meta.js";
import { checkFrame, decodePayload, type IntactRecord, readMeta } from "./record.js";

/**
 * Scanning: turns the bytes of a session file into records and a verdict.
 * Line N of a file holds seq N, so a line number is also a seq.
 *
 * A line is valid when it ends with a newline, its frame and checksum are
 * right (record.ts), its payload's indexed fields (id, parent, seq, kind:
 * entry-meta.ts) read right and carry the expected seq, and the SessionLog
 * accepts it (dense seqs, unique ids, known parents). At
 * the first invalid line the scan decides what kind of damage it is:
 *
 * - torn tail: the line is not intact (cut, zeros, garbage, bad checksum)
 *   and no intact line follows it. This is what a crash in the middle of
 *   an append leaves; nothing acknowledged lies behind it, so readers
 *   ignore it and the next writer repairs it (repair.ts). The unit is the
 *   write, not the line: the complete records of a write whose last record
 *   is missing (the file ends, or only torn bytes follow) belong to the
 *   torn tail too, so a batch is read all or nothing (record.ts, `more`).
 * - corrupt: an intact line follows the damage (something was written
 *   after it, maybe acknowledged), or the invalid line is itself intact (a
 *   whole record with a wrong seq or a broken invariant: a duplicated or
 *   misplaced record, never what a torn write produces). Dropping either
 *   could lose acknowledged data, so the session fails with DATA_LOSS.
 *
 * The scan never throws and is linear in the input: one memchr and one
 * CRC per line, and a scan of each payload for its indexed fields
 * (entry-meta.ts; JSON.parse only for layouts or kinds it does not read).
 * Records are applied lazily (SessionLog.applyLazy): the log indexes id,
 * parent, seq and kind, and keeps a reference into `buf`; the full Entry is
 * decoded when first used, and a record that does not decode then is
 * reported through `onCorrupt` (DATA_LOSS naming its line). Two records are
 * decoded at once, so that `root` and `last` of a loaded log never fail:
 * the first record of the file and the last valid one of the scan.
 *
 * Sealed records (seal/sealed-payload.ts) are indexed like clear ones (the
 * structure is in clear) and opened when decoded, with the session's
 * opener: one that does not open is an intact invalid record (DATA_LOSS
 * naming the line and the entry); no key at all is FAILED_PRECONDITION,
 * thrown as it is (the file is fine, the reader lacks the key). With the
 * session's checkpoint (checkpoint.ts), each record applied lazily is
 * compared with its checkpointed entry as it is scanned, and a record found
 * equal decodes from that entry instead of being opened.
 */

/** Where the first invalid line starts (1-based line, byte offset) and what is wrong with it. */
export interface Damage {
  readonly kind: "torn" | "corrupt";
  readonly line: number;
  readonly offset: number;
  readonly reason: string;
}

export type Verdict = { readonly kind: "ok" } | Damage;

export interface ScanResult {
  /** File offset just past the last valid record. */
  readonly end: number;
  readonly verdict: Verdict;
}

const NEWLINE = 0x0a;

const NO_NEWLINE = "incomplete last line (no newline)";

/**
 * Reports a stored record that turned out not to be a valid entry when it
 * was decoded: throws DATA_LOSS naming its line (= seq) and byte offset.
 */
export type CorruptHandler = (line: number, offset: number, reason: string) => never;

/** The default handler: DATA_LOSS naming the session, the line and the byte. */
function corruptIn(log: SessionLog): CorruptHandler {
  return (line, offset, reason) => {
    throw dataLoss(
      `session ${quote(log.sessionId)} is corrupt at line ${line} (byte ${offset}): ${reason}`,
    );
  };
}

/** The entries of one scanned buffer, decoded on demand from the bytes as read. */
class StoredEntries implements EntrySource {
  /** The session's checkpoint (checkpoint.ts), when its opener has one. */
  private readonly checkpoint: CheckpointOpener | undefined;

  constructor(
    private readonly buf: Buffer,
    private readonly base: number,
    private readonly onCorrupt: CorruptHandler,
    readonly opener: ContentOpener | undefined,
  ) {
    this.checkpoint = opener instanceof CheckpointOpener ? opener : undefined;
  }

  decode(seq: number, start: number, end: number): Entry {
    // A sealed record the checkpoint holds: its text as opened when the checkpoint was made.
    const text = this.checkpoint?.textOf(this.buf, seq, start, end);
    // Stryker disable next-line ConditionalExpression: without a text, JSON.parse(undefined) throws and the catch below falls back to the record all the same
    if (text !== undefined) {
      try {
        const entry = decodeEntry(JSON.parse(text), { ignoreUnknownFields: true });
        if (Number(entry.seq) === seq) return entry;
      } catch {
        // Not expected of a text that opened; the record itself decides.
      }
    }
    const entry = decodePayload(this.buf, { seq, start, end }, this.opener);
    if (typeof entry === "string") this.corrupt(seq, start, end, entry);
    return entry;
  }

  /**
   * A record applied lazily, its bytes just checked: compared with the
   * checkpoint's entry now (checkpoint.ts `match`), while they are at hand.
   */
  scanned(frame: IntactRecord): void {
    this.checkpoint?.match(this.buf, frame.seq, frame.start, frame.end);
  }

  corrupt(seq: number, start: number, _end: number, reason: string): never {
    const lineStart = this.buf.lastIndexOf(NEWLINE, start) + 1;
    return this.onCorrupt(seq, this.base + lineStart, reason);
  }
}

/** Applies a record; a broken invariant or a bad payload becomes a reason instead of an exception. */
function tryApply(
  log: SessionLog,
  buf: Buffer,
  frame: IntactRecord,
  lazy: { source: StoredEntries; meta: EntryMeta } | undefined,
  opener: ContentOpener | undefined,
): string | undefined {
  try {
    if (lazy === undefined) {
      const entry = decodePayload(buf, frame, opener);
      if (typeof entry === "string") return entry;
      log.apply(entry);
    } else {
      const bad = readMeta(buf, frame, lazy.meta);
      if (bad !== undefined) return bad;
      log.applyLazy(lazy.meta, lazy.source, frame.start, frame.end);
      lazy.source.scanned(frame);
    }
    return undefined;
  } catch (err) {
    // No key for a sealed record: the reader's problem, not the file's.
    if (isSessiondError(err, "FAILED_PRECONDITION")) throw err;
    return err instanceof Error ? err.message : String(err);
  }
}

/** The first intact line at or after `from`, or -1. */
function nextIntactLine(buf: Buffer, from: number): number {
  let pos = from;
  for (let nl = buf.indexOf(NEWLINE, pos); nl !== -1; nl = buf.indexOf(NEWLINE, pos)) {
    if (typeof checkFrame(buf, pos, nl) !== "string") return pos;
    pos = nl + 1;
  }
  return -1;
}

/**
 * Scans `buf`, which holds the file's bytes from offset `base`, where `base`
 * is the end of the records already in `log` (always the end of a write).
 * Valid records are applied to `log` as they are read, so after a "corrupt"
 * verdict the log holds the readable prefix. `onCorrupt` reports a record
 * that fails to decode later.
 *
 * A write is all or nothing: its records are applied as they come, and
 * when its last record (the one without the `more` marker, record.ts) is
 * missing, because the file ends or only torn bytes follow, they are taken
 * back out of the log (`truncate`): the valid prefix, `end` and the torn
 * tail all start where that write starts. Damage inside a write that is
 * followed by an intact record is corruption, as anywhere else.
 */
export function scan(
  buf: Buffer,
  base: number,
  log: SessionLog,
  onCorrupt: CorruptHandler = corruptIn(log),
  /** Opens sealed records; absent: a sealed record is FAILED_PRECONDITION. */
  opener?: ContentOpener,
): ScanResult {
  const lazy = { source: new StoredEntries(buf, base, onCorrupt, opener), meta: newMeta() };
  let pos = 0;
  let nl = buf.indexOf(NEWLINE, 0);
  let frame: IntactRecord | string = nl < 0 ? NO_NEWLINE : checkFrame(buf, 0, nl);
  // Stryker disable next-line BooleanLiteral: lastEager is only read when last is set, and both are set together
  const unit: Unit = { start: 0, head: log.headSeq, last: undefined, lastEager: false };
  while (pos < buf.length) {
    const line = log.headSeq + 1;
    let reason: string;
    let intact = false;
    if (typeof frame === "string") {
      reason = frame;
    } else {
      intact = true;
      // The next line is framed now, to know whether this record is the last valid one.
      // Past the end of the buffer there is no newline: NO_NEWLINE, and the loop ends.
      const next = nl + 1;
      const nextNl = buf.indexOf(NEWLINE, next);
      const nextFrame = nextNl === -1 ? NO_NEWLINE : checkFrame(buf, next, nextNl);
      const eager = line === 1 || (!frame.more && typeof nextFrame === "string");
      const failed = tryApply(log, buf, frame, eager ? undefined : lazy, opener);
      if (failed === undefined) {
        if (!frame.more) {
          unit.start = next;
          unit.head = log.headSeq;
          unit.last = frame;
          unit.lastEager = eager;
        }
        pos = next;
        nl = nextNl;
        frame = nextFrame;
        continue;
      }
      reason = failed;
    }
    const offset = base + pos;
    if (intact) return { end: offset, verdict: { kind: "corrupt", line, offset, reason } };
    const later = nl < 0 ? -1 : nextIntactLine(buf, nl + 1);
    if (later !== -1) {
      const why = `${reason}, followed by an intact record at byte ${base + later}`;
      return { end: offset, verdict: { kind: "corrupt", line, offset, reason: why } };
    }
    if (unit.start === pos) return { end: offset, verdict: { kind: "torn", line, offset, reason } };
    return tornWrite(buf, base, log, unit, `line ${line}: ${reason}`, opener);
  }
  if (unit.start === pos) return { end: base + pos, verdict: { kind: "ok" } };
  return tornWrite(buf, base, log, unit, "the file ends", opener);
}

/** The write a scan is in: where it starts, and what the scan knows of the one before it. */
interface Unit {
  /** Offset in the buffer where the write starts (= end of the last complete write). */
  start: number;
  /** The log's head seq before it. */
  head: number;
  /** The last record of the last complete write of this buffer, and whether it was decoded. */
  last: IntactRecord | undefined;
  lastEager: boolean;
}

/**
 * The verdict for a write whose last record is missing (`why`: what comes
 * instead) and nothing intact after it: its records leave the log and it
 * is a torn tail from `unitStart`. The last record of the write before it,
 * applied lazily while more records seemed to follow, is applied again
 * decoded, as the last valid record of a scan always is; if it does not
 * decode, that record is an intact invalid line: corrupt.
 */
function tornWrite(
  buf: Buffer,
  base: number,
  log: SessionLog,
  unit: Unit,
  why: string,
  opener: ContentOpener | undefined,
): ScanResult {
  const whole = log.headSeq - unit.head;
  const last = unit.last;
  if (last !== undefined && !unit.lastEager) {
    log.truncate(unit.head - 1);
    const failed = tryApply(log, buf, last, undefined, opener);
    if (failed !== undefined) {
      const offset = base + buf.lastIndexOf(NEWLINE, last.start) + 1;
      return { end: offset, verdict: { kind: "corrupt", line: unit.head, offset, reason: failed } };
    }
  } else {
    log.truncate(unit.head);
  }
  const offset = base + unit.start;
  const reason = `incomplete write: ${whole} whole record(s), then ${why}, before the write's last record`;
  return { end: offset, verdict: { kind: "torn", line: unit.head + 1, offset, reason } };
}
