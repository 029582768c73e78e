import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, rootEntry, seqs, user } from "../../../test/support/fixtures.js";
import {
  fileOf,
  keyOf,
  removeDir,
  scanFile,
  tempDir,
} from "../../../test/support/jsonl/fixtures.js";
import { instrumentedFs } from "../../../test/support/jsonl/instrumented-fs.js";
import { JsonlEngine } from "./jsonl-engine.js";

/**
 * Concurrent appends to one session share one write and one fdatasync
 * (group commit); without it a busy session pays one fdatasync per append.
 */
describe("group commit", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  it("64 concurrent appends: dense seqs, far fewer fdatasyncs and writes than appends", async () => {
    const fs = instrumentedFs();
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    const k = keyOf("busy");
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      const before = { ...fs.counts };
      const results = await Promise.all(
        Array.from({ length: 64 }, (_, i) => engine.append(k, appendOf([user(`g${i}`)]))),
      );
      const syncs = (fs.counts.fdatasync ?? 0) - (before.fdatasync ?? 0);
      const writes = (fs.counts.write ?? 0) - (before.write ?? 0);
      console.log(`group commit: 64 appends, ${syncs} fdatasyncs, ${writes} writes`);
      expect(syncs).toBeGreaterThan(0);
      expect(syncs).toBeLessThan(64);
      expect(writes).toBe(syncs);
      expect(results.flatMap((r) => seqs(r.entries)).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 64 }, (_, i) => i + 2),
      );
      expect(new Set(results.map((r) => r.headSeq)).size).toBe(64);
      const log = await engine.load(k);
      expect(log.headSeq).toBe(65);
    } finally {
      await engine.close();
    }
    const scanned = await scanFile(fileOf(dataDir, k));
    expect(scanned.verdict.kind).toBe("ok");
    expect(scanned.log.headSeq).toBe(65);
  });

  it("a planner that throws inside a batch fails alone; the others are written", async () => {
    const engine = new JsonlEngine({ dataDir });
    const k = keyOf("mixed");
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          i === 4
            ? engine.append(k, () => {
                throw new Error("planner bug");
              })
            : engine.append(k, appendOf([user(`ok${i}`)])),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(
        Array.from({ length: 10 }, (_, i) => (i === 4 ? "rejected" : "fulfilled")),
      );
      expect((await engine.load(k)).headSeq).toBe(10);
    } finally {
      await engine.close();
    }
  });
});
