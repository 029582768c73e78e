/**
 * T5, part 1: the JSONL reader against random valid logs with random damage.
 *
 * A log is written as random writes (`ends`: one record per write, the only
 * shape of files written before the `more` marker, or several records per
 * write, every one but the last marked), and its last write may be cut by
 * a crash (`crash`: a strict prefix of that write's bytes) before the
 * damage is applied.
 *
 * Damage is generated as plain data (a `DamageSpec`, readable in a
 * counterexample) and applied by `applyDamage`; lifted from
 * test/support/jsonl/arbitraries.ts, plus the classic torn write (a
 * prefix of the next record), zeros and garbage mid-file, and "garbage
 * followed by a valid record" (the shape of an append glued onto a torn
 * tail). The oracle (`expectedRead`) derives the answer from the original
 * lines alone, never from the reader:
 *
 * - the longest prefix of original lines kept intact is what must be read,
 *   as far as it holds whole writes: the records of a write whose last
 *   record is not kept are part of the torn tail (a write is all or
 *   nothing);
 * - when nothing follows that prefix and it ends with a whole write, the
 *   verdict is "ok";
 * - when a whole line known to be a record (an original one, or the valid
 *   record added after garbage) follows the damage, it is "corrupt" and the
 *   reader must name line kept+1, kept counting every intact original line
 *   (engine: DATA_LOSS mentioning it);
 * - otherwise it is a torn tail: exactly the prefix of whole writes, no error.
 *
 * Every record the reader returns must be byte-for-byte the entry written
 * at that seq (never invented, never joined from two lines).
 */
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { create, equals } from "@bufbuild/protobuf";
import fc from "fast-check";
import { type Entry, EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { isSessiondError } from "../../../src/core/errors.js";
import { SessionLog } from "../../../src/core/session-log.js";
import { ensureDir } from "../../../src/storage/jsonl/create-file.js";
import { nodeFs } from "../../../src/storage/jsonl/fs-ops.js";
import { JsonlEngine } from "../../../src/storage/jsonl/jsonl-engine.js";
import { sessionPath } from "../../../src/storage/jsonl/paths.js";
import { scan } from "../../../src/storage/jsonl/reader.js";
import { encodeRecord } from "../../../src/storage/jsonl/record.js";
import { appendOf } from "../../support/fixtures.js";
import { encodeLines, splitLines, writtenLog } from "../../support/jsonl/arbitraries.js";

export const SID = "fuzz";
export const WS = "default";

/** One kind of damage, as data. Fractions pick a byte offset in the buffer as it is then. */
export type DamageSpec =
  | { k: "truncate"; at: number }
  | { k: "zeros"; n: number }
  | { k: "garbage"; bytes: number[] }
  | { k: "bitflip"; at: number; bit: number }
  | { k: "garbageMid"; at: number; bytes: number[] }
  | { k: "zerosMid"; at: number; n: number }
  | { k: "noNewline" }
  | { k: "duplicateLine"; pick: number }
  | { k: "swapLines"; p: number; q: number }
  | { k: "invalidUtf8"; at: number }
  | { k: "hugeLine"; at: number; size: number; newline: boolean }
  | { k: "tornRecord"; cut: number };

/** The last, optional step: garbage, a newline, then a valid record (an intact line after damage). */
export interface TrailingRecord {
  readonly garbage: number[];
  readonly seq: number;
}

export interface ReaderCase {
  readonly entries: Entry[];
  /** Per entry: the last record of its write (see writesOf in arbitraries.ts). */
  readonly ends: boolean[];
  /** A crash in the last write: the fraction of its bytes (last byte excluded) that reached the file. */
  readonly crash: number | undefined;
  readonly damages: DamageSpec[];
  readonly trailing: TrailingRecord | undefined;
}

/** A position in the buffer, half the time in its last tenth (where crashes leave damage). */
const frac = fc.oneof(
  fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  fc.double({ min: 0.9, max: 1, maxExcluded: true, noNaN: true }),
);
const bytes = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 64 });

export function damageArb(hugeLines: boolean): fc.Arbitrary<DamageSpec> {
  const arbs: fc.Arbitrary<DamageSpec>[] = [
    frac.map((at) => ({ k: "truncate" as const, at })),
    fc.integer({ min: 1, max: 5000 }).map((n) => ({ k: "zeros" as const, n })),
    bytes.map((b) => ({ k: "garbage" as const, bytes: b })),
    fc.tuple(frac, fc.integer({ min: 0, max: 7 })).map(([at, bit]) => ({
      k: "bitflip" as const,
      at,
      bit,
    })),
    fc.tuple(frac, bytes).map(([at, b]) => ({ k: "garbageMid" as const, at, bytes: b })),
    fc
      .tuple(frac, fc.integer({ min: 1, max: 600 }))
      .map(([at, n]) => ({ k: "zerosMid" as const, at, n })),
    fc.constant({ k: "noNewline" as const }),
    fc.nat().map((pick) => ({ k: "duplicateLine" as const, pick })),
    fc.tuple(fc.nat(), fc.nat()).map(([p, q]) => ({ k: "swapLines" as const, p, q })),
    frac.map((at) => ({ k: "invalidUtf8" as const, at })),
    frac.map((cut) => ({ k: "tornRecord" as const, cut })),
  ];
  if (hugeLines) {
    arbs.push(
      fc
        .tuple(frac, fc.integer({ min: 100_000, max: 1_500_000 }), fc.boolean())
        .map(([at, size, newline]) => ({ k: "hugeLine" as const, at, size, newline })),
    );
  }
  return fc.oneof(...arbs);
}

export function readerCaseArb(maxEntries: number, hugeLines: boolean): fc.Arbitrary<ReaderCase> {
  return fc
    .record({
      log: writtenLog(SID, maxEntries),
      crash: fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 2 },
        { arbitrary: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), weight: 1 },
      ),
      damages: fc.oneof(
        { arbitrary: fc.constant<DamageSpec[]>([]), weight: 1 },
        { arbitrary: fc.array(damageArb(hugeLines), { minLength: 1, maxLength: 1 }), weight: 8 },
        { arbitrary: fc.array(damageArb(hugeLines), { minLength: 2, maxLength: 4 }), weight: 3 },
      ),
      trailing: fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 5 },
        {
          arbitrary: fc.record({
            garbage: bytes,
            seq: fc.integer({ min: 1, max: maxEntries + 2 }),
          }),
          weight: 1,
        },
      ),
    })
    .map(({ log: [entries, ends], ...rest }) => ({ entries, ends, ...rest }));
}

const at = (buf: Buffer, f: number) => Math.floor(f * buf.length);

/** A record the writer could have appended next (seq n+1 after a log of n entries). */
function nextRecord(seq: number): Buffer {
  const e = create(EntrySchema, {
    id: `next${seq}`,
    parentId: "root",
    seq: BigInt(seq),
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: "glued" } }] },
    },
  });
  return Buffer.from(encodeRecord(e));
}

export function applyDamage(b: Buffer, d: DamageSpec, entries: number): Buffer {
  switch (d.k) {
    case "truncate":
      return b.subarray(0, at(b, d.at));
    case "zeros":
      return Buffer.concat([b, Buffer.alloc(d.n)]);
    case "garbage":
      return Buffer.concat([b, Buffer.from(d.bytes)]);
    case "bitflip": {
      if (b.length === 0) return b;
      const c = Buffer.from(b);
      const i = at(c, d.at);
      c[i] = (c[i] as number) ^ (1 << d.bit);
      return c;
    }
    case "garbageMid": {
      const i = at(b, d.at);
      return Buffer.concat([b.subarray(0, i), Buffer.from(d.bytes), b.subarray(i)]);
    }
    case "zerosMid": {
      const i = at(b, d.at);
      return Buffer.concat([b.subarray(0, i), Buffer.alloc(d.n), b.subarray(i)]);
    }
    case "noNewline":
      return b.at(-1) === 0x0a ? b.subarray(0, b.length - 1) : b;
    case "duplicateLine": {
      const lines = splitLines(b);
      if (lines.length === 0) return b;
      const i = d.pick % lines.length;
      return Buffer.concat([...lines.slice(0, i + 1), ...lines.slice(i)]);
    }
    case "swapLines": {
      const lines = splitLines(b);
      if (lines.length < 2) return b;
      const i = d.p % lines.length;
      const j = d.q % lines.length;
      [lines[i], lines[j]] = [lines[j] as Buffer, lines[i] as Buffer];
      return Buffer.concat(lines);
    }
    case "invalidUtf8": {
      if (b.length < 2) return b;
      const c = Buffer.from(b);
      const i = Math.min(at(c, d.at), c.length - 2);
      c[i] = 0xff;
      c[i + 1] = 0xfe;
      return c;
    }
    case "hugeLine": {
      const i = at(b, d.at);
      const huge = Buffer.alloc(d.size + (d.newline ? 1 : 0), "x");
      if (d.newline) huge[d.size] = 0x0a;
      return Buffer.concat([b.subarray(0, i), huge, b.subarray(i)]);
    }
    case "tornRecord": {
      // A crash in the middle of appending the next record: a strict prefix of it.
      const rec = nextRecord(entries + 1);
      return Buffer.concat([b, rec.subarray(0, Math.floor(d.cut * (rec.length - 1)))]);
    }
  }
}

export interface Built {
  readonly lines: Buffer[];
  readonly ends: boolean[];
  readonly damaged: Buffer;
  /** Whole lines that are valid records somewhere (the originals, the trailing record). */
  readonly known: Set<string>;
}

/** The bytes of the log as written, its last write cut short when `crash` is set. */
function written(lines: readonly Buffer[], ends: readonly boolean[], crash: number | undefined) {
  const all = Buffer.concat(lines);
  if (crash === undefined) return all;
  let first = lines.length - 1;
  while (first > 0 && ends[first - 1] === false) first--;
  const start = lines.slice(0, first).reduce((n, l) => n + l.length, 0);
  return all.subarray(0, start + Math.floor(crash * (all.length - start - 1)));
}

export function build(c: ReaderCase): Built {
  const lines = encodeLines(c.entries, c.ends);
  let damaged = c.damages.reduce<Buffer>(
    (b, d) => applyDamage(b, d, c.entries.length),
    written(lines, c.ends, c.crash),
  );
  const known = new Set(lines.map((l) => l.toString("latin1")));
  if (c.trailing !== undefined) {
    const rec = nextRecord(c.trailing.seq);
    const glue = Buffer.from(c.trailing.garbage.map((x) => (x === 0x0a ? 0x20 : x)));
    damaged = Buffer.concat([damaged, glue, Buffer.from("\n"), rec]);
    known.add(rec.toString("latin1"));
  }
  return { lines, ends: c.ends, damaged, known };
}

export type Kind = "ok" | "torn" | "corrupt";

/** What a reader must make of `damaged` (see the file comment). */
export function expectedRead(b: Built): { kept: number; kind: Kind } {
  const { damaged, lines, ends, known } = b;
  let pos = 0;
  let kept = 0;
  for (const line of lines) {
    if (damaged.length - pos < line.length) break;
    if (damaged.compare(line, 0, line.length, pos, pos + line.length) !== 0) break;
    pos += line.length;
    kept++;
  }
  // The prefix of whole writes.
  let whole = kept;
  while (whole > 0 && ends[whole - 1] === false) whole--;
  if (pos === damaged.length)
    return whole === kept ? { kept, kind: "ok" } : { kept: whole, kind: "torn" };
  const rest = splitLines(damaged.subarray(pos));
  const intactLater = rest.some((l) => l.at(-1) === 0x0a && known.has(l.toString("latin1")));
  return intactLater ? { kept, kind: "corrupt" } : { kept: whole, kind: "torn" };
}

/** Longest a single scan may take before it counts as a hang (a 1.5 MB line included). */
export const SCAN_LIMIT_MS = 3_000;

/** Scans the damaged log; returns a violation, or undefined. Never throws. */
export function checkScan(c: ReaderCase, b: Built, want: { kept: number; kind: Kind }) {
  const log = new SessionLog(SID);
  const started = performance.now();
  let result: ReturnType<typeof scan>;
  try {
    result = scan(b.damaged, 0, log);
  } catch (err) {
    return `scan threw: ${String(err).slice(0, 200)}`;
  }
  const ms = performance.now() - started;
  if (ms > SCAN_LIMIT_MS) return `scan took ${ms.toFixed(0)} ms on ${b.damaged.length} bytes`;
  const v = result.verdict;
  if (v.kind !== want.kind)
    return `verdict ${v.kind} (${"reason" in v ? v.reason : ""}), want ${want.kind}`;
  if (log.headSeq !== want.kept)
    return `read ${log.headSeq} records, want the ${want.kept} valid ones`;
  if (v.kind !== "ok" && v.line !== want.kept + 1)
    return `damage named at line ${v.line}, want ${want.kept + 1}`;
  const end = b.lines.slice(0, want.kept).reduce((n, l) => n + l.length, 0);
  if (result.end !== end) return `end ${result.end}, want ${end}`;
  try {
    for (const e of log.entries()) {
      const original = c.entries[Number(e.seq) - 1];
      if (original === undefined || !equals(EntrySchema, e, original)) {
        return `record at seq ${e.seq} (id ${JSON.stringify(e.id)}) was never written there`;
      }
    }
  } catch (err) {
    return `decoding a kept record threw: ${String(err).slice(0, 200)}`;
  }
  return undefined;
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`${what}: no answer within ${ms} ms (hang)`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Through the engine: writes the damaged file, loads it with a fresh engine
 * (the valid prefix, or DATA_LOSS naming line kept+1, nothing else), and
 * for a readable log appends one entry and re-reads the file with another
 * fresh engine: the writer must have repaired a torn tail, so the result is
 * exactly the prefix plus the new entry.
 */
export async function checkEngine(
  dataDir: string,
  b: Built,
  want: { kept: number; kind: Kind },
  debug: { noTailRepair?: boolean },
): Promise<{ violation?: string; appended: boolean }> {
  const key = { workspace: WS, sessionId: SID };
  const file = sessionPath(dataDir, WS, SID, false);
  await ensureDir(nodeFs, path.dirname(file), false);
  await writeFile(file, b.damaged);
  let loaded: SessionLog | undefined;
  const engine = new JsonlEngine({ dataDir, debug, leaseIdleMs: 0 });
  try {
    try {
      loaded = await withTimeout(engine.load(key), 10_000, "load");
    } catch (err) {
      if (!isSessiondError(err, "DATA_LOSS")) {
        return { violation: `load threw ${String(err).slice(0, 200)}`, appended: false };
      }
      if (want.kind !== "corrupt" && want.kept !== 0) {
        return {
          violation: `load: ${err.message.slice(0, 200)}, want ${want.kept} records`,
          appended: false,
        };
      }
      if (!err.message.includes(`line ${want.kept + 1}`)) {
        return {
          violation: `load: DATA_LOSS not naming line ${want.kept + 1}: ${err.message.slice(0, 200)}`,
          appended: false,
        };
      }
      return { appended: false };
    }
    if (want.kind === "corrupt") {
      return {
        violation: `load gave ${loaded.headSeq} records, want DATA_LOSS at line ${want.kept + 1}`,
        appended: false,
      };
    }
    if (loaded.headSeq !== want.kept) {
      return {
        violation: `load gave ${loaded.headSeq} records, want ${want.kept}`,
        appended: false,
      };
    }
    if (want.kept === 0) return { appended: false };
    const added = create(EntrySchema, {
      id: "after-repair",
      kind: {
        case: "message",
        value: { role: Role.USER, content: [{ part: { case: "text", value: "after" } }] },
      },
    });
    await withTimeout(engine.append(key, appendOf([added])), 10_000, "append");
  } catch (err) {
    return { violation: `engine threw ${String(err).slice(0, 200)}`, appended: false };
  } finally {
    await engine.close();
  }
  const again = new JsonlEngine({ dataDir, leaseIdleMs: 0 });
  try {
    const log = await withTimeout(again.load(key), 10_000, "reload");
    const last = log.at(want.kept + 1);
    if (log.headSeq !== want.kept + 1 || last?.id !== "after-repair") {
      return {
        violation: `after append on a ${want.kind} log: ${log.headSeq} records, want ${want.kept + 1} ending with the new entry`,
        appended: true,
      };
    }
    return { appended: true };
  } catch (err) {
    return { violation: `reload after append: ${String(err).slice(0, 200)}`, appended: true };
  } finally {
    await again.close();
  }
}

/** A short, readable form of a case for the details. */
export function describeCase(c: ReaderCase): string {
  const ds = c.damages.map((d) => {
    const { k, ...rest } = d;
    const args = Object.entries(rest).map(([n, v]) =>
      Array.isArray(v)
        ? `${n}=[${v.length} bytes]`
        : `${n}=${typeof v === "number" ? +v.toFixed(4) : v}`,
    );
    return `${k}(${args.join(",")})`;
  });
  const t = c.trailing === undefined ? "" : ` + garbage/record(seq ${c.trailing.seq})`;
  const writes = c.ends.filter((e) => e).length;
  const crash = c.crash === undefined ? "" : `, last write cut at ${+c.crash.toFixed(4)}`;
  return `${c.entries.length} entries in ${writes} writes${crash}, damage ${ds.join(" → ")}${t}`;
}
