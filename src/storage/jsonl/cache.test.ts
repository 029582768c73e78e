import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, rootEntry, user } from "../../../test/support/fixtures.js";
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
 * The session cache is bounded, but evicting a session must neither lose
 * its queued appends nor leak its file handle.
 */
describe("session cache", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  it("with room for 2 sessions, concurrent appends to 6 all land and no handle leaks", async () => {
    const fs = instrumentedFs();
    const engine = new JsonlEngine({ dataDir, cacheSessions: 2, leaseIdleMs: 1, fs: fs.ops });
    const keys = Array.from({ length: 6 }, (_, i) => keyOf(`s${i}`));
    for (const k of keys) await engine.create(k, [rootEntry(k.sessionId)]);
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        keys.flatMap((k) =>
          [0, 1, 2].map((j) => engine.append(k, appendOf([user(`r${round}-${j}`)]))),
        ),
      );
      for (const k of keys) expect((await engine.load(k)).headSeq).toBe(1 + 3 * (round + 1));
    }
    await engine.close();
    expect(fs.counts.close).toBe(fs.counts.open);
    for (const k of keys) {
      const scanned = await scanFile(fileOf(dataDir, k));
      expect(scanned.verdict.kind).toBe("ok");
      expect(scanned.log.headSeq).toBe(16);
    }
  });
});
