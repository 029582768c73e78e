/**
 * A text search's pass over one session file (StorageEngine.scanEntries):
 * the file is read in chunks, every line's frame and checksum are checked
 * as the reader does (reader.ts), and only the records whose bytes hold
 * every needle are decoded and handed to `visit`. The reading stops as
 * soon as `visit` says the page is full.
 *
 * Damage is classified by the reader's rules, on what the scan sees: a
 * line that is not intact with no intact line after it is a torn tail
 * (ignored, with the records of its unfinished write); anything else that
 * breaks the frame, the checksum, the dense seqs or the decoding of a
 * decoded record is corruption, and the scan ends there, reporting
 * `damaged`. Records the needles rule out are not decoded, so an intact
 * record that does not decode is only found when a needle selects it
 * (the loader finds it on first use too; no writer makes one).
 *
 * A file of up to a chunk is first looked through whole for the needles,
 * the most selective first, with no line parsed: when one is nowhere in
 * its bytes, no entry of it can match, damaged or not, and the scan ends
 * there, reporting no damage (damage only matters to a search where it
 * could hide hits). A search for a rare word then costs little more than
 * reading each file, where parsing every line and checking its checksum
 * cost several times that (bench row 11/search).
 *
 * A sealed session (seal/) cannot be looked through in its bytes: its
 * records' content is ciphertext. Given the session's sealer, the scan
 * skips the whole-file look, opens each sealed record after `afterSeq`
 * and looks for the needles in its canonical JSON as opened (the form the
 * needles are defined on), decoding only the records that hold them; its
 * clear records (SessionInfo, Leaf, Label) are looked through as stored.
 * A sealed record that does not open is corruption, like one that does
 * not decode.
 *
 * With the session's search filter (search-filter.ts, a FilterPlan), the
 * covered records the filter rules out are neither opened nor decoded;
 * when it rules out every covered record, the scan starts where the
 * covered bytes end (the prefix cannot hide a hit, as a clear file that
 * lacks a needle is not read line by line). The records past the covered
 * ones are opened as before and handed to the plan's builder, which
 * extends the filter after the scan.
 */
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { EntryScan, EntryScanEnd } from "../engine.js";
import type { SessionSealer } from "../seal/sealed-payload.js";
import { closeQuietly, type FsOps, readBuffer } from "./fs-ops.js";
import { NeedleFinder } from "./needle-finder.js";
import { checkFrame, decodePayload, openedPayload, type PayloadBounds } from "./record.js";
import type { FilterBuilder, FilterPlan } from "./search-filter.js";

const NEWLINE = 0x0a;
/** Bytes of the chunk buffer; a longer line grows it to hold the line. */
const CHUNK = 1 << 20;
/**
 * Bytes read at a time: reads of 64 KiB are made synchronously (fs-ops.ts;
 * a page-cache copy costs less than a thread-pool round trip, which a scan
 * of thousands of files would pay at every read) ...
 */
const READ = 64 * 1024;
/** ... so the scan lets other work run after this many of them (a megabyte). */
const READS_PER_TURN = 16;

type LineVerdict = "torn" | "corrupt";

/**
 * Chunk buffers of finished scans, for the next ones: a search reads
 * thousands of files in a row, and a fresh megabyte each would keep the
 * garbage collector busy.
 */
const spares: Buffer[] = [];
const MAX_SPARES = 4;

/** Scans the session file at `file`; ENOENT (the session is gone) propagates. */
export async function scanFile(
  ops: FsOps,
  file: string,
  scan: EntryScan,
  /** The session's sealer when it is sealed. */
  sealer?: SessionSealer,
  /** The session's search filter, when it is sealed. */
  plan?: FilterPlan,
): Promise<EntryScanEnd> {
  const fd = await ops.open(file, "r");
  const chunk = { buf: spares.pop() ?? readBuffer(CHUNK) };
  try {
    const held = sealer === undefined ? await readWhenSmall(ops, fd, scan, chunk.buf) : 0;
    if (held === "lacks a needle") return { damaged: false };
    return await scanFd(ops, fd, scan, chunk, held, sealer, plan);
  } finally {
    if (chunk.buf.length === CHUNK && spares.length < MAX_SPARES) spares.push(chunk.buf);
    await closeQuietly(ops, fd);
  }
}

/**
 * Reads a file that fits in `buf` into it whole and says whether it lacks
 * a needle anywhere in its bytes (then no record of it can match); else
 * the bytes now at the start of `buf`, which the line-by-line scan goes on
 * from instead of reading them again (0 for a bigger file, or without
 * needles).
 */
async function readWhenSmall(
  ops: FsOps,
  fd: number,
  scan: EntryScan,
  buf: Buffer,
): Promise<number | "lacks a needle"> {
  if (scan.needles.length === 0) return 0;
  const size = (await ops.fstat(fd)).size;
  if (size >= buf.length) return 0;
  let filled = 0;
  for (;;) {
    const n = await ops.read(fd, buf, filled, Math.min(READ, buf.length - filled), filled);
    filled += n;
    if (n === 0 || filled >= size) break;
  }
  const bytes = buf.subarray(0, filled);
  const finders = scan.needles
    .map((n) => new NeedleFinder(n))
    .sort((a, b) => a.heldShare - b.heldShare);
  const lacks = finders.some((f) => {
    f.reset(bytes);
    return f.next(0) === -1;
  });
  return lacks ? "lacks a needle" : filled;
}

async function scanFd(
  ops: FsOps,
  fd: number,
  scan: EntryScan,
  chunk: { buf: Buffer },
  /** Bytes of the file already at the start of `chunk.buf`. */
  preRead: number,
  sealer: SessionSealer | undefined,
  plan: FilterPlan | undefined,
): Promise<EntryScanEnd> {
  const finders = scan.needles
    .map((n) => new NeedleFinder(n))
    .sort((a, b) => a.heldShare - b.heldShare);
  const builder = plan?.builder;
  const opened =
    sealer === undefined ? undefined : new OpenedRecords(scan.needles, sealer, builder);
  const coveredSeq = plan?.coveredSeq ?? 0;
  const candidates = plan?.candidates;
  let buf = chunk.buf;
  const size = (await ops.fstat(fd)).size;
  /** The covered records hold no candidate: the scan starts past them. */
  const skipCovered = candidates !== undefined && candidates.size === 0 && preRead === 0;
  /** Bytes of `buf` holding data; `pos`: file offset of buf[0]. */
  let filled = preRead;
  let pos = skipCovered ? (plan?.coveredBytes ?? 0) : 0;
  let seq = skipCovered ? coveredSeq : 0;
  let reads = 0;
  /** The seq of the last record that ended its write: 0 while the root's write is unfinished. */
  let whole = seq;
  /** Decoded records of the write in progress (its last record not read yet). */
  let pending: Entry[] = [];
  const flush = (): boolean => {
    for (const entry of pending) if (!scan.visit(entry)) return false;
    pending = [];
    return true;
  };
  for (;;) {
    if (filled === buf.length) {
      const bigger = readBuffer(buf.length * 2);
      buf.copy(bigger, 0, 0, filled);
      buf = bigger;
      chunk.buf = bigger;
    }
    // Up to one byte past the size: a short read says the file ends, without
    // a read of nothing (and a small file is one read).
    const want = Math.min(buf.length - filled, READ, Math.max(0, size - pos - filled) + 1);
    if (++reads % READS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    const n = await ops.read(fd, buf, filled, want, pos + filled);
    filled += n;
    const eof = n < want;
    // (A negative offset would count from the end of the buffer.)
    const end = filled === 0 ? 0 : buf.lastIndexOf(NEWLINE, filled - 1) + 1;
    // A view that ends with the data: a needle's native search never runs
    // through stale bytes of an earlier read.
    const lines = buf.subarray(0, end);
    for (const f of finders) f.reset(lines);
    let at = 0;
    while (at < end) {
      const nl = buf.indexOf(NEWLINE, at);
      const frame = checkFrame(buf, at, nl);
      let bad: LineVerdict | undefined;
      if (typeof frame === "string") bad = seq === 0 ? "corrupt" : "torn";
      else if (frame.seq !== seq + 1) bad = "corrupt";
      if (bad === undefined && typeof frame !== "string") {
        seq = frame.seq;
        const ruledOut = seq <= coveredSeq && candidates !== undefined && !candidates.has(seq);
        const wanted = seq > scan.afterSeq && !ruledOut;
        const collect = builder !== undefined && seq > coveredSeq;
        const plain = wanted ? opened?.open(buf, frame, collect ? seq : 0) : undefined;
        if (plain === undefined && collect) builder.addBytes(seq, buf, frame.start, frame.end);
        if (plain !== undefined) {
          if (typeof plain === "string") bad = "corrupt";
          else if (plain !== NOT_HELD) {
            const entry = decodePayload(plain, { seq, start: 0, end: plain.length });
            if (typeof entry === "string") bad = "corrupt";
            else pending.push(entry);
          }
        } else if (wanted && finders.every((f) => f.within(frame.start, frame.end))) {
          const entry = decodePayload(buf, frame);
          if (typeof entry === "string") bad = "corrupt";
          else pending.push(entry);
        }
        if (bad === undefined) {
          if (!frame.more) {
            whole = seq;
            if (seq > coveredSeq) builder?.commit(seq, pos + nl + 1);
            if (!flush()) return { damaged: false };
          }
          at = nl + 1;
          continue;
        }
      }
      // The first invalid line: torn when nothing intact follows it.
      if (bad === "torn" && !(await intactAfter(ops, fd, pos + nl + 1))) {
        return { damaged: whole === 0 };
      }
      flush();
      return { damaged: true };
    }
    if (eof) {
      // The file ends: bytes after the last newline, or an unfinished write,
      // are a torn tail; a file without a valid first record is corrupt.
      return { damaged: whole === 0 };
    }
    buf.copy(buf, 0, end, filled);
    pos += end;
    filled -= end;
  }
}

/**
 * Whether an intact line starts anywhere at or after the file offset
 * `from`: what makes a damaged line corruption instead of a torn tail.
 */
async function intactAfter(ops: FsOps, fd: number, from: number): Promise<boolean> {
  let chunk = readBuffer(CHUNK);
  let offset = from;
  for (;;) {
    const n = await ops.read(fd, chunk, 0, chunk.length, offset);
    if (n === 0) return false;
    let at = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1 && nl < n; nl = chunk.indexOf(NEWLINE, at)) {
      if (typeof checkFrame(chunk, at, nl) !== "string") return true;
      at = nl + 1;
    }
    if (at === 0) {
      // No newline in a short read: the file ends without one. Else one
      // line is longer than the chunk: read it again whole.
      if (n < chunk.length) return false;
      chunk = readBuffer(chunk.length * 2);
    }
    offset += at;
  }
}

/** A sealed record whose opened form lacks a needle. */
const NOT_HELD = Buffer.alloc(0);

/** The sealed records of a scan, opened and looked through for the needles. */
class OpenedRecords {
  constructor(
    private readonly needles: readonly string[],
    private readonly sealer: SessionSealer,
    private readonly builder: FilterBuilder | undefined,
  ) {}

  /**
   * The record's canonical JSON as opened when it holds every needle,
   * NOT_HELD when it lacks one, a reason when it does not open, undefined
   * when it is not sealed (then it is looked through as stored). The
   * needles are lower-case ASCII: the opened text lower-cased holds every
   * place they occur with ASCII case ignored (and maybe more, which the
   * store's match then rules out).
   */
  open(buf: Buffer, frame: PayloadBounds, collect: number): Buffer | string | undefined {
    const opened = openedPayload(buf, frame, this.sealer);
    if (opened === undefined) return undefined;
    if (opened.bad !== undefined) return opened.bad;
    const lower = opened.text.toLowerCase();
    // (`collect`: the seq, when the filter's builder takes this record.)
    if (collect !== 0) this.builder?.addText(collect, lower);
    for (const n of this.needles) if (!lower.includes(n)) return NOT_HELD;
    return Buffer.from(opened.text);
  }
}
