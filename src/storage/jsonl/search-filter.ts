/**
 * The search filter of a sealed session: what lets a text search skip the
 * sealed sessions, and the sealed records, that cannot match without
 * decrypting them (issue 41's target: search on a sealed workspace within
 * 1.5 × the clear one, where opening every record costs ~12 ×).
 *
 * What it holds: for each record of the log up to a byte offset, a small
 * Bloom filter of the record's trigrams (seal/keyed-trigrams.ts: the rule
 * that makes a record lacking one of a needle's trigrams no match), of its
 * canonical JSON as opened, lower-cased (the sealed scan's rule), or of its
 * stored bytes with ASCII letters folded (a record in clear, the clear
 * scan's rule). A record the filter keeps is a candidate
 * only: it is opened and matched as before, so a false positive costs time,
 * never a hit, and the results stay exactly those of a scan that opens
 * everything.
 *
 * Keyed: a trigram's positions are its keyed hash under a key derived from
 * the session's data key (HKDF, SessionSealer.derive), and the file is
 * authenticated (HMAC-SHA256, a second derived key). Without the data key
 * the bits are positions of a pseudo-random function of unknown trigrams:
 * nothing to test a guess against; erasing the session destroys the data
 * key, and with it the meaning of the bits (the file is deleted too). A
 * filter of another session, moved or copied in place, does not
 * authenticate under this session's key and is ignored, as is one altered,
 * cut, of another version, or of another log (its inode and birth time).
 *
 * Built lazily by the search itself: a scan that opens the records past
 * the covered offset (it does anyway) adds them, and the filter, extended,
 * is written beside the log (`<id>.search`: temp file, rename; a cache, so
 * no fsync: a torn or stale one is ignored and rebuilt). Appends add
 * nothing to it (no cost on the write path): the records past the covered
 * offset are opened and matched as before by the next search, which then
 * covers them. Redaction, erasure and deletion drop it (`forget`).
 */

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Stats } from "node:fs";
import { rename as fsRename } from "node:fs/promises";
import { endianness } from "node:os";
import * as path from "node:path";
import { needleCodes, TrigramHasher, Trigrams } from "../seal/keyed-trigrams.js";
import type { SessionSealer } from "../seal/sealed-payload.js";
import { closeQuietly, errnoCode, type FsOps, readAt, writeAll } from "./fs-ops.js";
import { stampOf } from "./key-fence.js";
import { isTempName, tempName } from "./paths.js";

/** Bits of a record's filter per distinct trigram, and the positions set per trigram. */
const BITS_PER_TRIGRAM = 8;
const PROBES = 4;
/** The filters kept in memory, at most this many bytes of bits (least recently used go). */
const MAX_CACHED_BYTES = 64 * 1024 * 1024;
const MAGIC = Buffer.from("SDSRCHF1", "latin1");
const MAC_BYTES = 32;
const HEADER_BYTES = MAGIC.length + 4 * 8 + 4;
const PURPOSE = "sessiond/search-filter/1";
/**
 * Typed arrays are in the platform's byte order; the file is
 * little-endian, so that a filter means the same everywhere: typed-array
 * copies where that is the platform's order, byte by byte elsewhere.
 */
const LITTLE = endianness() === "LE";

/** The sidecar of a session's log. */
export function filterPath(logFile: string): string {
  return logFile.replace(/\.jsonl$/, ".search");
}

/** The keys of one session's filter, derived from its data key. */
class FilterKeys {
  readonly mac: Buffer;
  private readonly hasher: TrigramHasher;

  constructor(sealer: SessionSealer) {
    const k = sealer.derive(PURPOSE, 64);
    this.mac = k.subarray(32);
    this.hasher = new TrigramHasher(k.subarray(0, 32));
  }

  /** Two 32-bit words per trigram code (keyed-trigrams.ts): a Bloom filter's two hashes. */
  hash(codes: Int32Array, n: number): Uint32Array {
    return this.hasher.words(codes, n);
  }

  sameAs(other: FilterKeys): boolean {
    return this.mac.equals(other.mac);
  }
}

/** Whether the Bloom filter `bits` holds the trigram hashed to (h1, h2). */
function holds(bits: Uint32Array, h1: number, h2: number): boolean {
  const m = bits.length * 32;
  for (let i = 0; i < PROBES; i++) {
    const at = ((h1 + Math.imul(i, h2)) >>> 0) % m;
    if (((bits[at >>> 5] as number) & (1 << (at & 31))) === 0) return false;
  }
  return true;
}

function bloomOf(hashes: Uint32Array, n: number): Uint32Array {
  const bits = new Uint32Array(Math.max(1, Math.ceil((n * BITS_PER_TRIGRAM) / 32)));
  const m = bits.length * 32;
  for (let t = 0; t < n; t++) {
    const h1 = hashes[2 * t] as number;
    const h2 = hashes[2 * t + 1] as number;
    for (let i = 0; i < PROBES; i++) {
      const at = ((h1 + Math.imul(i, h2)) >>> 0) % m;
      bits[at >>> 5] = (bits[at >>> 5] as number) | (1 << (at & 31));
    }
  }
  return bits;
}

/** The log a filter was built from: a replaced log (redaction, seal) has another inode. */
interface LogIdentity {
  readonly ino: number;
  readonly birth: number;
}

/** A session's filter: records up to `coveredSeq` (ending at byte `coveredBytes`). */
class SessionFilter {
  constructor(
    readonly log: LogIdentity,
    readonly coveredBytes: number,
    readonly coveredSeq: number,
    readonly seqs: readonly number[],
    readonly bits: readonly Uint32Array[],
  ) {}

  get size(): number {
    let n = 64 + this.seqs.length * 48;
    for (const b of this.bits) n += b.byteLength;
    return n;
  }

  fits(st: Stats): boolean {
    return (
      st.ino === this.log.ino && st.birthtimeMs === this.log.birth && st.size >= this.coveredBytes
    );
  }

  /**
   * The seqs after `afterSeq` of the records that may hold every needle
   * (`hashed`: per needle, its trigrams' hash words); undefined when no
   * needle rules anything out.
   */
  candidates(hashed: readonly Uint32Array[], afterSeq: number): Set<number> | undefined {
    if (hashed.length === 0) return undefined;
    const out = new Set<number>();
    next: for (let r = 0; r < this.seqs.length; r++) {
      const seq = this.seqs[r] as number;
      if (seq <= afterSeq) continue;
      const bits = this.bits[r] as Uint32Array;
      for (const words of hashed) {
        for (let t = 0; t < words.length; t += 2) {
          if (!holds(bits, words[t] as number, words[t + 1] as number)) continue next;
        }
      }
      out.add(seq);
    }
    return out;
  }

  encode(keys: FilterKeys): Buffer {
    let words = 0;
    for (const b of this.bits) words += b.length;
    const n = this.seqs.length;
    const out = Buffer.alloc(HEADER_BYTES + n * 8 + words * 4 + MAC_BYTES);
    let at = MAGIC.copy(out, 0);
    for (const v of [this.log.ino, this.log.birth, this.coveredBytes, this.coveredSeq]) {
      at = out.writeDoubleLE(v, at);
    }
    at = out.writeUInt32LE(n, at);
    for (let r = 0; r < n; r++) {
      at = out.writeUInt32LE(this.seqs[r] as number, at);
      at = out.writeUInt32LE((this.bits[r] as Uint32Array).length, at);
    }
    for (const b of this.bits) {
      if (LITTLE) at += Buffer.from(b.buffer, b.byteOffset, b.byteLength).copy(out, at);
      else for (let i = 0; i < b.length; i++) at = out.writeUInt32LE(b[i] as number, at);
    }
    createHmac("sha256", keys.mac).update(out.subarray(0, at)).digest().copy(out, at);
    return out;
  }

  /** The filter in `buf`, or undefined when it is not one this key wrote (damaged, moved, another version). */
  static decode(buf: Buffer, keys: FilterKeys): SessionFilter | undefined {
    if (buf.length < HEADER_BYTES + MAC_BYTES) return undefined;
    if (!buf.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
    const body = buf.subarray(0, buf.length - MAC_BYTES);
    const mac = createHmac("sha256", keys.mac).update(body).digest();
    if (!timingSafeEqual(mac, buf.subarray(body.length))) return undefined;
    let at = MAGIC.length;
    const f = (): number => {
      const v = buf.readDoubleLE(at);
      at += 8;
      return v;
    };
    const u = (): number => {
      const v = buf.readUInt32LE(at);
      at += 4;
      return v;
    };
    const log = { ino: f(), birth: f() };
    const coveredBytes = f();
    const coveredSeq = f();
    const n = u();
    if (HEADER_BYTES + n * 8 > body.length) return undefined;
    const seqs: number[] = [];
    const lengths: number[] = [];
    let words = 0;
    for (let r = 0; r < n; r++) {
      seqs.push(u());
      const len = u();
      lengths.push(len);
      words += len;
    }
    if (at + words * 4 !== body.length) return undefined;
    const bits: Uint32Array[] = [];
    // One copy of all the words (aligned), viewed per record.
    const all = new Uint32Array(words);
    if (LITTLE) Buffer.from(all.buffer).set(buf.subarray(at, at + words * 4));
    else for (let i = 0; i < words; i++) all[i] = u();
    let w = 0;
    for (const len of lengths) {
      bits.push(all.subarray(w, w + len));
      w += len;
    }
    return new SessionFilter(log, coveredBytes, coveredSeq, seqs, bits);
  }
}

/**
 * What one scan of a sealed session takes from the filter (text-scan.ts):
 * which covered records may match, and where to collect the ones past it.
 */
export interface FilterPlan {
  /** Records up to this seq (ending at byte `coveredBytes`) are covered by the filter. */
  readonly coveredSeq: number;
  readonly coveredBytes: number;
  /** The covered records after the scan's afterSeq that may match; undefined: any may. */
  readonly candidates: ReadonlySet<number> | undefined;
  /** Collects the records past the covered ones (undefined: this scan does not extend the filter). */
  readonly builder: FilterBuilder | undefined;
}

/** Collects the trigrams of the records a scan reads past the covered offset. */
const TRIGRAMS = new Trigrams();

export class FilterBuilder {
  private readonly trigrams = TRIGRAMS;
  private readonly seqs: number[] = [];
  private readonly bits: Uint32Array[] = [];
  /** The records of whole writes (they end at `endBytes`): what an extension covers. */
  private wholeCount = 0;
  wholeSeq: number;
  endBytes: number;

  constructor(
    private readonly keys: FilterKeys,
    from: { seq: number; bytes: number },
  ) {
    this.wholeSeq = from.seq;
    this.endBytes = from.bytes;
  }

  /** A sealed record's canonical JSON as opened, lower-cased. */
  addText(seq: number, lower: string): void {
    this.trigrams.addText(lower);
    this.push(seq);
  }

  /** A record in clear: its stored payload. */
  addBytes(seq: number, buf: Buffer, start: number, end: number): void {
    this.trigrams.addBytes(buf, start, end);
    this.push(seq);
  }

  /** The record `seq` ends a write, at byte `end` of the file. */
  commit(seq: number, end: number): void {
    this.wholeCount = this.seqs.length;
    this.wholeSeq = seq;
    this.endBytes = end;
  }

  get added(): number {
    return this.wholeCount;
  }

  take(): { seqs: number[]; bits: Uint32Array[] } {
    return {
      seqs: this.seqs.slice(0, this.wholeCount),
      bits: this.bits.slice(0, this.wholeCount),
    };
  }

  private push(seq: number): void {
    const t = this.trigrams;
    this.seqs.push(seq);
    this.bits.push(bloomOf(this.keys.hash(t.codes, t.n), t.n));
    t.clear();
  }
}

/** One cached filter, with the key file version its keys came from. */
interface Cached {
  filter: SessionFilter | undefined;
  keys: FilterKeys;
  /** The key file's stamp (key-fence.ts) when its keys were derived: unchanged, they still hold. */
  keyStamp: string;
}

/** The trigrams' hash words of each needle of at least three characters. */
function hashNeedles(keys: FilterKeys, needles: readonly string[]): Uint32Array[] {
  const out: Uint32Array[] = [];
  for (const needle of needles) {
    if (needle.length < 3) continue;
    const codes = needleCodes(needle);
    out.push(keys.hash(codes, codes.length));
  }
  return out;
}

/** The search filters of an engine's sealed sessions: in memory, and beside their logs. */
export class SearchFilters {
  private readonly cache = new Map<string, Cached>();
  private cachedBytes = 0;

  constructor(private readonly ops: FsOps) {}

  /** The key file's stamp now, or undefined when it has none. */
  async keyStamp(keyFile: string): Promise<string | undefined> {
    try {
      return stampOf(await this.ops.stat(keyFile));
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return undefined;
      throw err;
    }
  }

  /**
   * True when the session's filter in memory, from a key file unchanged
   * since, rules out every record after `afterSeq` of a log that has not
   * grown since: the search skips it without opening its key or its log.
   */
  async skips(
    logFile: string,
    keyFile: string,
    needles: readonly string[],
    afterSeq: number,
  ): Promise<boolean> {
    const c = this.cache.get(logFile);
    const f = c?.filter;
    if (c === undefined || f === undefined) return false;
    const hashed = hashNeedles(c.keys, needles);
    if (hashed.length === 0) return false;
    try {
      if ((await this.keyStamp(keyFile)) !== c.keyStamp) return false;
      const st = await this.ops.stat(logFile);
      if (!f.fits(st) || st.size !== f.coveredBytes) return false;
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return false;
      throw err;
    }
    return f.candidates(hashed, afterSeq)?.size === 0;
  }

  /**
   * The plan of a scan of a sealed session: its filter (from memory, else
   * its sidecar) if it fits the log; "skip" when it rules out every record
   * after `afterSeq` and the log has nothing past it.
   */
  async plan(
    logFile: string,
    sealer: SessionSealer,
    keyStamp: string | undefined,
    needles: readonly string[],
    afterSeq: number,
  ): Promise<FilterPlan | "skip"> {
    const keys = new FilterKeys(sealer);
    let c = this.cache.get(logFile);
    if (c === undefined || !c.keys.sameAs(keys)) {
      c = { filter: await this.read(logFile, keys), keys, keyStamp: keyStamp ?? "" };
      this.put(logFile, c);
    } else {
      c.keyStamp = keyStamp ?? "";
      this.touch(logFile, c);
    }
    let f = c.filter;
    if (f !== undefined) {
      const st = await this.ops.stat(logFile);
      if (!f.fits(st)) {
        // Of a log replaced since (or cut): rebuilt from the start by this scan.
        this.cachedBytes -= f.size;
        c.filter = undefined;
        f = undefined;
      } else if (
        st.size === f.coveredBytes &&
        f.candidates(hashNeedles(keys, needles), afterSeq)?.size === 0
      ) {
        return "skip";
      }
    }
    const coveredSeq = f?.coveredSeq ?? 0;
    const coveredBytes = f?.coveredBytes ?? 0;
    return {
      coveredSeq,
      coveredBytes,
      candidates: f?.candidates(hashNeedles(keys, needles), afterSeq),
      builder:
        afterSeq <= coveredSeq
          ? new FilterBuilder(keys, { seq: coveredSeq, bytes: coveredBytes })
          : undefined,
    };
  }

  /**
   * After a scan that ended without damage: the filter extended by the
   * records it collected, kept and written beside the log (failures to
   * write are ignored: it is a cache).
   */
  async extend(logFile: string, plan: FilterPlan): Promise<void> {
    const b = plan.builder;
    if (b === undefined || b.added === 0) return;
    const c = this.cache.get(logFile);
    if (c === undefined) return;
    const base = c.filter;
    // Another scan extended it meanwhile, or it no longer fits: keep what is there.
    if ((base?.coveredSeq ?? 0) !== plan.coveredSeq) return;
    let st: Stats;
    try {
      st = await this.ops.stat(logFile);
    } catch {
      return;
    }
    if (base !== undefined && !base.fits(st)) return;
    if (st.size < b.endBytes) return;
    const added = b.take();
    const filter = new SessionFilter(
      base?.log ?? { ino: st.ino, birth: st.birthtimeMs },
      b.endBytes,
      b.wholeSeq,
      [...(base?.seqs ?? []), ...added.seqs],
      [...(base?.bits ?? []), ...added.bits],
    );
    if (this.cache.get(logFile) !== c || c.filter !== base) return;
    this.cachedBytes += filter.size - (base?.size ?? 0);
    c.filter = filter;
    this.evict();
    await this.write(logFile, filter.encode(c.keys)).catch(() => undefined);
  }

  /** After a redaction, an erasure or a deletion: the session's filter dropped, its sidecar removed. */
  async forget(logFile: string): Promise<void> {
    const c = this.cache.get(logFile);
    if (c !== undefined) {
      this.cache.delete(logFile);
      this.cachedBytes -= c.filter?.size ?? 0;
    }
    // Best effort: what it held is bound to the log it was built from (a
    // redacted log is a new file) and, after an erasure, to a destroyed key;
    // a failure here must not fail the redaction or erasure that is done.
    await this.ops.unlink(filterPath(logFile)).catch(() => undefined);
  }

  private async read(logFile: string, keys: FilterKeys): Promise<SessionFilter | undefined> {
    let fd: number;
    try {
      fd = await this.ops.open(filterPath(logFile), "r");
    } catch {
      return undefined;
    }
    try {
      const size = (await this.ops.fstat(fd)).size;
      return SessionFilter.decode(await readAt(this.ops, fd, 0, size), keys);
    } catch {
      return undefined;
    } finally {
      await closeQuietly(this.ops, fd);
    }
  }

  /** Temp file, rename over (no fsync: a torn file does not authenticate and is rebuilt). */
  private async write(logFile: string, content: Buffer): Promise<void> {
    const file = filterPath(logFile);
    const dir = path.dirname(file);
    const id = path.basename(logFile).replace(/\.jsonl$/, "");
    const temp = path.join(dir, `${tempName(id, randomBytes(6).toString("hex"))}.search`);
    if (!isTempName(path.basename(temp))) return;
    const ops = this.ops as { rename?: (from: string, to: string) => Promise<void> };
    const rename = ops.rename?.bind(this.ops) ?? fsRename;
    const fd = await this.ops.open(temp, "wx");
    try {
      await writeAll(this.ops, fd, content, 0);
    } finally {
      await this.ops.close(fd);
    }
    try {
      await rename(temp, file);
    } catch (err) {
      await this.ops.unlink(temp).catch(() => undefined);
      throw err;
    }
  }

  private put(logFile: string, c: Cached): void {
    const old = this.cache.get(logFile);
    if (old !== undefined) this.cachedBytes -= old.filter?.size ?? 0;
    this.cache.delete(logFile);
    this.cache.set(logFile, c);
    this.cachedBytes += c.filter?.size ?? 0;
    this.evict();
  }

  private touch(logFile: string, c: Cached): void {
    this.cache.delete(logFile);
    this.cache.set(logFile, c);
  }

  private evict(): void {
    for (const [file, c] of this.cache) {
      if (this.cachedBytes <= MAX_CACHED_BYTES) return;
      this.cache.delete(file);
      this.cachedBytes -= c.filter?.size ?? 0;
    }
  }
}
