import { stat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, expectCode, rootEntry, user } from "../../../test/support/fixtures.js";
import {
  fileOf,
  keyOf,
  removeDir,
  scanFile,
  tempDir,
} from "../../../test/support/jsonl/fixtures.js";
import { errno, instrumentedFs } from "../../../test/support/jsonl/instrumented-fs.js";
import { nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { lockPathOf } from "./lock.js";

/**
 * When a write, an fdatasync or the lock fails, the append must not be
 * reported as done (an error saying "outcome unknown"), the engine must
 * re-read the file instead of trusting its cache, and the file must stay
 * valid for the next append.
 */
describe("write failures", () => {
  let dataDir: string;
  const k = keyOf("fragile");
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  async function engineWith(fs = instrumentedFs(), o: { lockStaleMs?: number } = {}) {
    const engine = new JsonlEngine({ dataDir, fs: fs.ops, ...o });
    await engine.create(k, [rootEntry(k.sessionId)]);
    return { engine, fs };
  }

  it("a failed fdatasync rejects the batch with UNAVAILABLE, drops the handle, never retries it", async () => {
    const { engine, fs } = await engineWith();
    try {
      await engine.append(k, appendOf([user("before")]));
      fs.hooks.fdatasync = () => {
        fs.hooks.fdatasync = undefined;
        throw errno("EIO");
      };
      const closesBefore = fs.counts.close ?? 0;
      const results = await Promise.allSettled([
        engine.append(k, appendOf([user("x1")])),
        engine.append(k, appendOf([user("x2")])),
      ]);
      for (const r of results) {
        expect(r.status).toBe("rejected");
        const reason = (r as PromiseRejectedResult).reason as Error;
        expect(reason.message).toContain("outcome unknown");
      }
      expect(fs.counts.close ?? 0).toBeGreaterThan(closesBefore);
      const r = await engine.append(k, appendOf([user("after")]));
      // The failed batch's bytes reached the page cache, so they are in the file.
      expect(r.headSeq).toBe(5);
    } finally {
      await engine.close();
    }
    const scanned = await scanFile(fileOf(dataDir, k));
    expect(scanned.verdict.kind).toBe("ok");
    expect(scanned.log.headSeq).toBe(5);
  });

  it("a failed write (ENOSPC) writes nothing acknowledged; the next append continues the log", async () => {
    const { engine, fs } = await engineWith();
    try {
      fs.hooks.write = () => {
        fs.hooks.write = undefined;
        throw errno("ENOSPC");
      };
      await expectCode(engine.append(k, appendOf([user("lost")])), "RESOURCE_EXHAUSTED");
      const r = await engine.append(k, appendOf([user("kept")]));
      expect(r.headSeq).toBe(2);
    } finally {
      await engine.close();
    }
    expect((await scanFile(fileOf(dataDir, k))).log.headSeq).toBe(2);
  });

  it("short writes are continued until the whole batch is written", async () => {
    const { engine, fs } = await engineWith();
    try {
      fs.hooks.write = (fd: number, buf: Buffer, off: number, len: number, pos: number) =>
        nodeFs.write(fd, buf, off, Math.min(len, 7), pos);
      await Promise.all(
        Array.from({ length: 5 }, (_, i) => engine.append(k, appendOf([user(`s${i}`)]))),
      );
      expect(fs.counts.write).toBeGreaterThan(20);
    } finally {
      await engine.close();
    }
    const scanned = await scanFile(fileOf(dataDir, k));
    expect(scanned.verdict.kind).toBe("ok");
    expect(scanned.log.headSeq).toBe(6);
  });

  it("a lock compromised during a write fails that append with UNAVAILABLE; the process survives", async () => {
    const { engine, fs } = await engineWith(instrumentedFs(), { lockStaleMs: 2_000 });
    try {
      const lockDir = lockPathOf(fileOf(dataDir, k));
      fs.hooks.fdatasync = async () => {
        fs.hooks.fdatasync = undefined;
        const { rmdir } = await import("node:fs/promises");
        await rmdir(lockDir);
        await sleep(1_600);
      };
      const err = await expectCode(engine.append(k, appendOf([user("unsure")])), "UNAVAILABLE");
      expect(err.message).toContain("lost the lock");
      const r = await engine.append(k, appendOf([user("next")]));
      expect(r.headSeq).toBe(3);
      await stat(lockDir);
    } finally {
      await engine.close();
    }
  }, 20_000);
});
