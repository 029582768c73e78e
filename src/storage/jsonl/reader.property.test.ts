import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { create, type MessageInitShape, toJson, toJsonString } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { ts } from "../../../test/support/fixtures.js";
import {
  damageArb,
  encodeLines,
  expectedRead,
  writtenLog,
} from "../../../test/support/jsonl/arbitraries.js";
import { fileOf, keyOf, removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { isSessiondError } from "../../core/errors.js";
import { type EntryMeta, SessionLog } from "../../core/session-log.js";
import { ensureDir } from "./create-file.js";
import { metaOfJson, newMeta, scanMeta } from "./entry-meta.js";
import { nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { scan } from "./reader.js";
import { readMeta } from "./record.js";

/**
 * The reader against random valid logs, written as random writes (one
 * record each, as before the `more` marker, or several), with random
 * damage (T5): it never throws (the engine only ever DATA_LOSS), never
 * hangs, returns exactly the valid prefix of whole writes when the damage
 * runs to the end of the file, reports corruption when an intact record
 * follows the damage, and never returns a record that was not written at
 * that seq.
 */

const SID = "prop";
const logWithDamage = writtenLog(SID).chain(([entries, ends]) =>
  fc.tuple(
    fc.constant(entries),
    fc.constant(ends),
    fc.array(damageArb, { minLength: 1, maxLength: 3 }),
  ),
);

describe("reader property: random logs, random damage", () => {
  it("scan returns the valid prefix, flags corruption, invents nothing", () => {
    const seen = { ok: 0, torn: 0, corrupt: 0 };
    fc.assert(
      fc.property(logWithDamage, ([entries, ends, damages]) => {
        const lines = encodeLines(entries, ends);
        const damaged = damages.reduce<Buffer>((b, d) => d(b), Buffer.concat(lines));
        const want = expectedRead(damaged, lines, ends);
        seen[want.kind]++;
        const log = new SessionLog(SID);
        const result = scan(damaged, 0, log);
        expect(result.verdict.kind).toBe(want.kind);
        expect(log.headSeq).toBe(want.kept);
        if (result.verdict.kind !== "ok") expect(result.verdict.line).toBe(want.kept + 1);
        expect(result.end).toBe(lines.slice(0, want.kept).reduce((n, l) => n + l.length, 0));
        for (const e of log.entries()) {
          const original = entries[Number(e.seq) - 1];
          expect(original).toBeDefined();
          expect(toJson(EntrySchema, e)).toEqual(toJson(EntrySchema, original as never));
        }
        // Records of a cut write taken back out leave no trace in the log's state.
        const prefix = SessionLog.from(SID, entries.slice(0, want.kept));
        expect(log.leafId).toBe(prefix.leafId);
        expect(log.messageCount).toBe(prefix.messageCount);
        expect(log.title).toBe(prefix.title);
        for (const e of entries) {
          expect(log.has(e.id)).toBe(prefix.has(e.id));
          if (e.kind.case === "label") {
            expect(log.labelTarget(e.kind.value.label)).toBe(
              prefix.labelTarget(e.kind.value.label),
            );
          }
        }
      }),
      { numRuns: 600 },
    );
    console.log(`reader property: 600 damaged logs read as ${JSON.stringify(seen)}`);
    expect(Math.min(seen.ok, seen.torn, seen.corrupt)).toBeGreaterThan(20);
  }, 120_000);

  describe("through the engine", () => {
    let dataDir: string;
    beforeAll(async () => {
      dataDir = await tempDir();
    });
    afterAll(() => removeDir(dataDir));

    it("load gives the valid prefix or DATA_LOSS naming the line, never anything else", async () => {
      const k = keyOf(SID);
      const file = fileOf(dataDir, k);
      await ensureDir(nodeFs, path.dirname(file), false);
      await fc.assert(
        fc.asyncProperty(logWithDamage, async ([entries, ends, damages]) => {
          const lines = encodeLines(entries, ends);
          const damaged = damages.reduce<Buffer>((b, d) => d(b), Buffer.concat(lines));
          const want = expectedRead(damaged, lines, ends);
          await writeFile(file, damaged);
          const engine = new JsonlEngine({ dataDir });
          try {
            const log = await engine.load(k);
            expect(want.kind).not.toBe("corrupt");
            expect(log.headSeq).toBe(want.kept);
          } catch (err) {
            if (!isSessiondError(err, "DATA_LOSS")) throw err;
            expect(want.kind === "corrupt" || want.kept === 0).toBe(true);
            expect(err.message).toContain(`line ${want.kept + 1}`);
          } finally {
            await engine.close();
          }
        }),
        { numRuns: 120 },
      );
    }, 120_000);
  });
});

/**
 * The payload scan (entry-meta.ts) against JSON.parse: for random entries
 * (ids and texts with quotes, backslashes, control characters, non-ASCII,
 * lone surrogates), written canonically or re-laid out (keys shuffled,
 * whitespace, proto field names, unknown keys, seq as a number), the fields
 * read for the index are those of the entry, and the same whichever way
 * they were read. The canonical layout must mostly take the fast path.
 */
describe("payload scan property: indexed fields as JSON.parse reads them", () => {
  type Kind = NonNullable<MessageInitShape<typeof EntrySchema>["kind"]>;
  const text = fc.oneof(
    { arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 10 }), weight: 3 },
    { arbitrary: fc.string({ unit: "binary", maxLength: 10 }), weight: 1 },
    {
      arbitrary: fc.string({
        unit: fc.constantFrom(
          '"',
          "\\",
          "\n",
          "\u0000",
          "a",
          "é",
          "\u2028",
          "😀",
          "\ud800",
          "}",
          "]",
        ),
        maxLength: 6,
      }),
      weight: 1,
    },
  );
  const kindArb: fc.Arbitrary<Kind | undefined> = fc.oneof(
    fc.constant(undefined),
    text.map((t) => ({
      case: "message" as const,
      value: { role: Role.USER, content: [{ part: { case: "text" as const, value: t } }] },
    })),
    text.map((t) => ({ case: "modelChange" as const, value: { model: t } })),
    text.map((t) => ({ case: "thinkingLevelChange" as const, value: { thinkingLevel: t } })),
    text.map((t) => ({
      case: "compaction" as const,
      value: { summary: t, replacesEntryIds: [t] },
    })),
    text.map((t) => ({ case: "branchSummary" as const, value: { summary: t, fromId: t } })),
    text.map((t) => ({ case: "custom" as const, value: { namespace: t, data: { [t]: t } } })),
    text.map((t) => ({ case: "label" as const, value: { label: t } })),
    text.map((t) => ({ case: "leaf" as const, value: { leafId: t } })),
    fc.option(text, { nil: undefined }).map((title) => ({
      case: "sessionInfo" as const,
      value: { sessionId: "s", title },
    })),
  );
  const entryArb: fc.Arbitrary<Entry> = fc
    .record({
      id: text,
      parentId: fc.option(text, { nil: undefined }),
      seq: fc.oneof(fc.integer({ min: 0, max: 200 }), fc.maxSafeNat()),
      time: fc.option(fc.integer({ min: 0, max: 4_000_000_000 }), { nil: undefined }),
      kind: kindArb,
    })
    .map(({ id, parentId, seq, time, kind }) =>
      create(EntrySchema, {
        id,
        parentId,
        seq: BigInt(seq),
        timestamp: time === undefined ? undefined : ts(time),
        kind,
      }),
    );
  const layoutArb = fc.option(
    fc.record({
      order: fc.array(fc.nat(), { maxLength: 8 }),
      protoNames: fc.boolean(),
      space: fc.constantFrom(0, 1),
      unknown: fc.boolean(),
      seqAsNumber: fc.boolean(),
    }),
    { nil: undefined },
  );

  type Layout = typeof layoutArb extends fc.Arbitrary<infer L> ? L : never;

  /** The payload text: canonical (undefined layout) or re-laid out. */
  function payloadOf(e: Entry, layout: Layout): string {
    if (layout === undefined) return toJsonString(EntrySchema, e);
    const obj = toJson(EntrySchema, e, { useProtoFieldName: layout.protoNames }) as Record<
      string,
      unknown
    >;
    if (layout.seqAsNumber && obj.seq !== undefined) obj.seq = Number(obj.seq);
    const keys = Object.keys(obj);
    if (layout.unknown) keys.push("someFutureField");
    for (const [i, pick] of layout.order.entries()) {
      const a = i % keys.length;
      const b = pick % keys.length;
      [keys[a], keys[b]] = [keys[b] as string, keys[a] as string];
    }
    const laid: Record<string, unknown> = {};
    for (const key of keys) laid[key] = key === "someFutureField" ? { x: [1, "}"] } : obj[key];
    return JSON.stringify(laid, null, layout.space);
  }

  function expectedMeta(e: Entry): EntryMeta {
    const k = e.kind;
    return {
      id: e.id,
      parentId: e.parentId,
      seq: Number(e.seq),
      kind: k.case,
      leafId: k.case === "leaf" ? k.value.leafId : undefined,
      label: k.case === "label" ? k.value.label : undefined,
      title: k.case === "sessionInfo" ? k.value.title : undefined,
    };
  }

  it("scan and JSON.parse agree with each other and with the entry", () => {
    let canonical = 0;
    let fast = 0;
    fc.assert(
      fc.property(entryArb, layoutArb, (e, layout) => {
        const payload = payloadOf(e, layout);
        const buf = Buffer.from(`[[${payload}]]`);
        const frame = { seq: Number(e.seq), start: 2, end: buf.length - 2 };
        const viaJson = newMeta();
        expect(metaOfJson(JSON.parse(payload), viaJson)).toBeUndefined();
        const read = newMeta();
        expect(readMeta(buf, frame, read)).toBeUndefined();
        expect(read, payload).toEqual(viaJson);
        expect(read).toEqual(expectedMeta(e));
        const scanned = newMeta();
        if (scanMeta(buf, frame.start, frame.end, scanned)) {
          fast++;
          expect(scanned).toEqual(viaJson);
        }
        if (layout === undefined) canonical++;
      }),
      { numRuns: 3000 },
    );
    console.log(
      `payload scan property: ${fast} of ${canonical} canonical payloads took the fast path`,
    );
    expect(fast).toBeGreaterThan(canonical / 8);
  });
});
