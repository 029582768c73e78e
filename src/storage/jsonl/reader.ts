import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { SessionLog } from "../../core/session-log.js";
import { checkFrame, decodePayload } from "./record.js";

/**
 * Scanning: turns the bytes of a session file into records and a verdict.
 * Line N of a file holds seq N, so a line number is also a seq.
 *
 * A line is valid when it ends with a newline, its frame and checksum are
 * right (record.ts), it parses into an Entry with the expected seq, and
 * SessionLog.apply accepts it (dense seqs, unique ids, known parents). At
 * the first invalid line the scan decides what kind of damage it is:
 *
 * - torn tail: the line is not intact (cut, zeros, garbage, bad checksum)
 *   and no intact line follows it. This is what a crash in the middle of
 *   an append leaves; nothing acknowledged lies behind it, so readers
 *   ignore it and the next writer repairs it (repair.ts).
 * - corrupt: an intact line follows the damage (something was written
 *   after it, maybe acknowledged), or the invalid line is itself intact (a
 *   whole record with a wrong seq or a broken invariant: a duplicated or
 *   misplaced record, never what a torn write produces). Dropping either
 *   could lose acknowledged data, so the session fails with DATA_LOSS.
 *
 * The scan never throws and is linear in the input: one memchr per line,
 * and a CRC plus one JSON.parse per record.
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

/** Applies an entry; a broken invariant becomes a reason instead of an exception. */
function tryApply(log: SessionLog, entry: Entry): string | undefined {
  try {
    log.apply(entry);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** The first intact line at or after `from`, or -1. */
function nextIntactLine(buf: Buffer, from: number): number {
  let pos = from;
  while (pos < buf.length) {
    const nl = buf.indexOf(NEWLINE, pos);
    if (nl < 0) return -1;
    if (typeof checkFrame(buf, pos, nl) !== "string") return pos;
    pos = nl + 1;
  }
  return -1;
}

/**
 * Scans `buf`, which holds the file's bytes from offset `base`, where `base`
 * is the end of the records already in `log`. Valid records are applied to
 * `log` as they are read, so after a "corrupt" verdict the log holds the
 * readable prefix.
 */
export function scan(buf: Buffer, base: number, log: SessionLog): ScanResult {
  let pos = 0;
  while (pos < buf.length) {
    const line = log.headSeq + 1;
    const nl = buf.indexOf(NEWLINE, pos);
    let reason: string;
    let intact = false;
    if (nl < 0) {
      reason = "incomplete last line (no newline)";
    } else {
      const frame = checkFrame(buf, pos, nl);
      if (typeof frame === "string") {
        reason = frame;
      } else {
        intact = true;
        const entry = decodePayload(buf, frame);
        const failed = typeof entry === "string" ? entry : tryApply(log, entry);
        if (failed === undefined) {
          pos = nl + 1;
          continue;
        }
        reason = failed;
      }
    }
    const offset = base + pos;
    if (intact) return { end: offset, verdict: { kind: "corrupt", line, offset, reason } };
    const later = nl < 0 ? -1 : nextIntactLine(buf, nl + 1);
    if (later >= 0) {
      const why = `${reason}, followed by an intact record at byte ${base + later}`;
      return { end: offset, verdict: { kind: "corrupt", line, offset, reason: why } };
    }
    return { end: offset, verdict: { kind: "torn", line, offset, reason } };
  }
  return { end: base + pos, verdict: { kind: "ok" } };
}
