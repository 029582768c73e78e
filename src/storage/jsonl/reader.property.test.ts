import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { toJson } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { isSessiondError } from "../../core/errors.js";
import { SessionLog } from "../../core/session-log.js";
import { ensureDir } from "./create-file.js";
import { nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { scan } from "./reader.js";
import { encodeRecord } from "./record.js";
import { damageArb, expectedRead, validLog } from "./testdata/arbitraries.js";
import { fileOf, keyOf, removeDir, tempDir } from "./testdata/fixtures.js";

/**
 * The reader against random valid logs with random damage (T5): it never
 * throws (the engine only ever DATA_LOSS), never hangs, returns exactly the
 * valid prefix when the damage runs to the end of the file, reports
 * corruption when an intact record follows the damage, and never returns a
 * record that was not written at that seq.
 */

const SID = "prop";
const logWithDamage = validLog(SID).chain((entries) =>
  fc.tuple(fc.constant(entries), fc.array(damageArb, { minLength: 1, maxLength: 3 })),
);

describe("reader property: random logs, random damage", () => {
  it("scan returns the valid prefix, flags corruption, invents nothing", () => {
    const seen = { ok: 0, torn: 0, corrupt: 0 };
    fc.assert(
      fc.property(logWithDamage, ([entries, damages]) => {
        const lines = entries.map((e) => Buffer.from(encodeRecord(e)));
        const damaged = damages.reduce<Buffer>((b, d) => d(b), Buffer.concat(lines));
        const want = expectedRead(damaged, lines);
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
        fc.asyncProperty(logWithDamage, async ([entries, damages]) => {
          const lines = entries.map((e) => Buffer.from(encodeRecord(e)));
          const damaged = damages.reduce<Buffer>((b, d) => d(b), Buffer.concat(lines));
          const want = expectedRead(damaged, lines);
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
