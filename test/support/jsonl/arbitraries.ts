/**
 * fast-check generators for the reader property test: random valid logs
 * (every kind that can be stored, branches, Leaf moves) and random damage.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import fc from "fast-check";
import { type Entry, EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { encodeRecord } from "../../../src/storage/jsonl/record.js";
import { ts } from "../fixtures.js";

type Kind = NonNullable<MessageInitShape<typeof EntrySchema>["kind"]>;
const text = fc.string({ unit: "binary", maxLength: 40 });

const kindArb: fc.Arbitrary<(targets: string[]) => Kind> = fc.oneof(
  text.map((t) => () => ({
    case: "message" as const,
    value: { role: Role.USER, content: [{ part: { case: "text" as const, value: t } }] },
  })),
  fc.tuple(text, fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })).map(([t, tokens]) => () => ({
    case: "message" as const,
    value: {
      role: Role.ASSISTANT,
      content: [{ part: { case: "text" as const, value: t } }],
      usage: { inputTokens: tokens, outputTokens: 1n, cacheReadTokens: 0n, cacheWriteTokens: 0n },
    },
  })),
  text.map((model) => () => ({ case: "modelChange" as const, value: { model: `m${model}` } })),
  text.map((label) => () => ({ case: "label" as const, value: { label: `l${label}` } })),
  fc
    .dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.boolean()))
    .map((data) => () => ({ case: "custom" as const, value: { namespace: "ns", data } })),
  fc.nat().map((pick) => (targets: string[]) => ({
    case: "leaf" as const,
    value: { leafId: targets[pick % targets.length] as string },
  })),
);

/** A valid log of 1 to `max` entries: a SessionInfo root, then random kinds and branches. */
export function validLog(sessionId: string, max = 25): fc.Arbitrary<Entry[]> {
  return fc
    .array(fc.tuple(kindArb, fc.nat(), fc.integer({ min: 0, max: 999_999_999 })), {
      maxLength: max - 1,
    })
    .map((steps) => {
      const root = create(EntrySchema, {
        id: "root",
        seq: 1n,
        timestamp: ts(1_700_000_000),
        kind: { case: "sessionInfo", value: { sessionId, title: "prop", formatVersion: 1 } },
      });
      const entries = [root];
      const onPath = ["root"];
      steps.forEach(([kind, parentPick, nanos], i) => {
        const k = kind(onPath);
        const e = create(EntrySchema, {
          id: `e${i + 2}`,
          parentId: onPath[parentPick % onPath.length],
          seq: BigInt(i + 2),
          timestamp: ts(1_700_000_000 + i, nanos),
          kind: k,
        });
        entries.push(e);
        if (e.kind.case !== "leaf") onPath.push(e.id);
      });
      return entries;
    });
}

/**
 * How a log of `n` entries was written: `ends[i]` is true when entry i is
 * the last record of its write (no `more` marker). A third of the time
 * every entry ends a write (one record per write, the only shape of a file
 * written before the marker existed); otherwise writes of random sizes.
 * The last entry always ends one: the log as written is complete.
 */
export function writesOf(n: number): fc.Arbitrary<boolean[]> {
  const ends = (flags: boolean[]) => flags.map((f, i) => f || i === n - 1);
  return fc.oneof(
    { arbitrary: fc.constant(Array.from({ length: n }, () => true)), weight: 1 },
    {
      arbitrary: fc.array(fc.boolean(), { minLength: n, maxLength: n }).map(ends),
      weight: 2,
    },
  );
}

/** A valid log and how it was written (see `writesOf`). */
export function writtenLog(sessionId: string, max = 25): fc.Arbitrary<[Entry[], boolean[]]> {
  return validLog(sessionId, max).chain((entries) =>
    fc.tuple(fc.constant(entries), writesOf(entries.length)),
  );
}

/** The lines of a log as its writes wrote them (`more` on every record that does not end one). */
export function encodeLines(entries: readonly Entry[], ends: readonly boolean[]): Buffer[] {
  return entries.map((e, i) => Buffer.from(encodeRecord(e, undefined, ends[i] === false)));
}

/** One kind of damage, applied to a buffer holding a log. */
export type Damage = (buf: Buffer) => Buffer;

/** A buffer's lines, each with its newline (the last may lack one). */
export function splitLines(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    const end = nl < 0 ? buf.length : nl + 1;
    out.push(buf.subarray(pos, end));
    pos = end;
  }
  return out;
}

const at = (buf: Buffer, frac: number) => Math.floor(frac * buf.length);
const frac = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const garbage = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((a) => Buffer.from(a));

export const damageArb: fc.Arbitrary<Damage> = fc.oneof(
  frac.map((f) => (b: Buffer) => b.subarray(0, at(b, f))),
  fc.integer({ min: 1, max: 5000 }).map((n) => (b: Buffer) => Buffer.concat([b, Buffer.alloc(n)])),
  garbage.map((g) => (b: Buffer) => Buffer.concat([b, g])),
  fc.tuple(frac, fc.integer({ min: 0, max: 7 })).map(([f, bit]) => (b: Buffer) => {
    if (b.length === 0) return b;
    const c = Buffer.from(b);
    const i = at(c, f);
    c[i] = (c[i] as number) ^ (1 << bit);
    return c;
  }),
  fc.tuple(frac, garbage).map(([f, g]) => (b: Buffer) => {
    const i = at(b, f);
    return Buffer.concat([b.subarray(0, i), g, b.subarray(i)]);
  }),
  fc.constant((b: Buffer) => (b.at(-1) === 0x0a ? b.subarray(0, b.length - 1) : b)),
  fc.nat().map((pick) => (b: Buffer) => {
    const lines = splitLines(b);
    if (lines.length === 0) return b;
    const i = pick % lines.length;
    return Buffer.concat([...lines.slice(0, i + 1), ...lines.slice(i)]);
  }),
  fc.tuple(fc.nat(), fc.nat()).map(([p, q]) => (b: Buffer) => {
    const lines = splitLines(b);
    if (lines.length < 2) return b;
    const i = p % lines.length;
    const j = q % lines.length;
    [lines[i], lines[j]] = [lines[j] as Buffer, lines[i] as Buffer];
    return Buffer.concat(lines);
  }),
  frac.map((f) => (b: Buffer) => {
    if (b.length < 2) return b;
    const c = Buffer.from(b);
    const i = Math.min(at(c, f), c.length - 2);
    c[i] = 0xff;
    c[i + 1] = 0xfe;
    return c;
  }),
  fc
    .tuple(frac, fc.integer({ min: 100_000, max: 1_500_000 }), fc.boolean())
    .map(([f, size, newline]) => (b: Buffer) => {
      const i = at(b, f);
      const huge = Buffer.alloc(size + (newline ? 1 : 0), "x");
      if (newline) huge[size] = 0x0a;
      return Buffer.concat([b.subarray(0, i), huge, b.subarray(i)]);
    }),
);

/**
 * What a reader must make of `damaged`, derived from the original lines
 * alone (and `ends`, how they were written: see `writesOf`; by default one
 * write per line): the longest prefix of original lines kept intact, and
 * whether an original line reappears whole after the damage (then it is
 * corruption, and the reader names the first line after that prefix).
 * Otherwise the damage is a torn tail, and the unit is the write: the
 * records of a write whose last record is not kept are not read.
 */
export function expectedRead(
  damaged: Buffer,
  lines: readonly Buffer[],
  ends: readonly boolean[] = lines.map(() => true),
) {
  let pos = 0;
  let kept = 0;
  for (const line of lines) {
    if (damaged.length - pos < line.length) break;
    if (damaged.compare(line, 0, line.length, pos, pos + line.length) !== 0) break;
    pos += line.length;
    kept++;
  }
  let whole = kept;
  while (whole > 0 && ends[whole - 1] === false) whole--;
  if (pos === damaged.length) {
    return whole === kept ? { kept, kind: "ok" as const } : { kept: whole, kind: "torn" as const };
  }
  const known = new Set(lines.map((l) => l.toString("latin1")));
  const rest = splitLines(damaged.subarray(pos));
  const intactLater = rest.some((l) => l.at(-1) === 0x0a && known.has(l.toString("latin1")));
  return intactLater ? { kept, kind: "corrupt" as const } : { kept: whole, kind: "torn" as const };
}
