import { closeSync, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { closeQuietly, errnoCode, type FsOps, readBuffer } from "./fs-ops.js";

/**
 * Reading the first line of a session file (its root record, see
 * indexed-root.ts): one open, usually one read of one block, one close.
 * The loop is written once (firstLineReads) and driven by an asynchronous
 * reader (FsOps, fault-injectable) or a synchronous one (node:fs straight
 * on the calling thread, see readFirstLineSync for why both exist).
 * The file is fstat'ed while open: the root read belongs to that file
 * (file-identity.ts), which the persisted listing index keeps with it.
 */

/** First read: one block holds the root line of nearly every session. */
export const FIRST_BLOCK = 4096;
const NEWLINE = 0x0a;

/** What readFirstLine and readFirstLineSync give. */
export interface FirstLine {
  /** The bytes read (`scratch`, or a bigger buffer for a long line). */
  readonly buf: Buffer;
  readonly length: number;
  /** Offset of the first newline in `buf`, -1 when the file ended first. */
  readonly newline: number;
  /** The stat of the file the line was read from (taken while it was open). */
  readonly stats: Stats;
}

/** One read the loop asks for: fill `buf[offset, buf.length)` from file position `offset`. */
interface ReadRequest {
  readonly buf: Buffer;
  readonly offset: number;
}

/**
 * The first-line loop, as the reads it needs: yields each read, is given
 * the bytes it read, and returns the line once a newline or the end of the
 * file is seen, growing `scratch` for a long line.
 */
function* firstLineReads(scratch: Buffer, stats: Stats): Generator<ReadRequest, FirstLine, number> {
  let buf = scratch;
  let length = 0;
  for (;;) {
    if (length === buf.length) {
      const bigger = readBuffer(buf.length * 2);
      buf.copy(bigger, 0, 0, length);
      buf = bigger;
    }
    const n = yield { buf, offset: length };
    const nl = n > 0 ? buf.indexOf(NEWLINE, length) : -1;
    length += n;
    if (nl >= 0 && nl < length) return { buf, length, newline: nl, stats };
    if (n === 0) return { buf, length, newline: -1, stats };
  }
}

/**
 * Reads the first line of `file` into `scratch` (growing it when the line
 * is longer): the bytes read and where the first newline is (-1 when the
 * file ends first). Undefined when the file does not exist (any more).
 */
export async function readFirstLine(
  ops: FsOps,
  file: string,
  scratch: Buffer,
): Promise<FirstLine | undefined> {
  let fd: number;
  try {
    fd = await ops.open(file, "r");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
  try {
    const reads = firstLineReads(scratch, await ops.fstat(fd));
    let step = reads.next();
    while (!step.done) {
      const { buf, offset } = step.value;
      step = reads.next(await ops.read(fd, buf, offset, buf.length - offset, offset));
    }
    return step.value;
  } finally {
    await closeQuietly(ops, fd);
  }
}

/**
 * readFirstLine with node:fs's synchronous calls, straight on the calling
 * thread: for files in the page cache that is 2–3 µs of system calls per
 * file against 10+ µs of thread-pool round trips and promises for the
 * asynchronous three (open, read, close). The root index uses it in short
 * slices, and only when the engine runs on the real file system.
 */
export function readFirstLineSync(file: string, scratch: Buffer): FirstLine | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
  try {
    const reads = firstLineReads(scratch, fstatSync(fd));
    let step = reads.next();
    while (!step.done) {
      const { buf, offset } = step.value;
      step = reads.next(readSync(fd, buf, offset, buf.length - offset, offset));
    }
    return step.value;
  } finally {
    closeSync(fd);
  }
}
