import { appendFile } from "node:fs/promises";
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

/**
 * Found by T3 (test/reliability/t3-io-errors.ts, on the simulated disk of
 * lib/power-fs.ts where a failed sync drops the dirty pages as Linux does):
 * after a failed fdatasync or directory fsync, the page cache shows bytes
 * and names the disk may never get, so they must be made durable again
 * before anything that depends on them is acknowledged.
 */
describe("after a failed sync", () => {
  let dataDir: string;
  const k = keyOf("fsyncgate");
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  it("a failed fdatasync: the next append writes the unsynced records again and fdatasyncs them first", async () => {
    const fs = instrumentedFs();
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      await engine.append(k, appendOf([user("before")]));
      fs.hooks.fdatasync = () => {
        fs.hooks.fdatasync = undefined;
        throw errno("EIO");
      };
      await expectCode(engine.append(k, appendOf([user("unsure")])), "UNAVAILABLE");
      const writes: number[] = [];
      fs.hooks.write = (_fd: number, _b: Buffer, _o: number, _l: number, pos: number) => {
        writes.push(pos);
        return undefined;
      };
      const syncs = fs.counts.fdatasync ?? 0;
      const r = await engine.append(k, appendOf([user("after")]));
      expect(r.headSeq).toBe(4);
      // The "unsure" record is written again where it is, then "after" behind it.
      expect(writes).toHaveLength(2);
      expect(writes[0]).toBeLessThan(writes[1] as number);
      expect((fs.counts.fdatasync ?? 0) - syncs).toBe(2);
    } finally {
      await engine.close();
    }
    expect((await scanFile(fileOf(dataDir, k))).log.headSeq).toBe(4);
  });

  it("a failed fdatasync of a torn-tail repair closes the handle: it is never fdatasynced again", async () => {
    const fs = instrumentedFs();
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      await engine.append(k, appendOf([user("m2")]));
      await appendFile(fileOf(dataDir, k), "half a line");
      const failed = new Set<number>();
      let retried = 0;
      fs.hooks.close = (fd: number) => {
        failed.delete(fd);
        return undefined;
      };
      // The repair's fdatasync (after the ftruncate) fails.
      fs.hooks.ftruncate = () => {
        fs.hooks.fdatasync = (fd: number) => {
          if (failed.has(fd)) retried++;
          if (fs.hooks.ftruncate !== undefined) {
            fs.hooks.ftruncate = undefined;
            failed.add(fd);
            throw errno("EIO");
          }
          return undefined;
        };
        return undefined;
      };
      await expectCode(engine.append(k, appendOf([user("x")])), "UNAVAILABLE");
      const r = await engine.append(k, appendOf([user("y")]));
      expect(r.headSeq).toBe(3);
      expect(retried).toBe(0);
    } finally {
      await engine.close();
    }
    expect((await scanFile(fileOf(dataDir, k))).verdict.kind).toBe("ok");
  });

  it("a retried create after a failed directory fsync fsyncs the directory before answering ALREADY_EXISTS", async () => {
    const fs = instrumentedFs();
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    const dirSyncs: string[] = [];
    try {
      await engine.create(keyOf("other"), [rootEntry("other")]);
      fs.hooks.fsync = async (fd: number) => {
        if (!(await nodeFs.fstat(fd)).isDirectory()) return undefined;
        fs.hooks.fsync = undefined;
        throw errno("EIO");
      };
      const root = rootEntry(k.sessionId);
      await expectCode(engine.create(k, [root]), "UNAVAILABLE");
      fs.hooks.fsync = async (fd: number) => {
        if ((await nodeFs.fstat(fd)).isDirectory()) dirSyncs.push("dir");
        return undefined;
      };
      // The store turns this ALREADY_EXISTS into a successful idempotent
      // create, so the name must be durable by now.
      await expectCode(engine.create(k, [root]), "ALREADY_EXISTS");
      expect(dirSyncs).toEqual(["dir"]);
      await expectCode(engine.create(k, [root]), "ALREADY_EXISTS");
      expect(dirSyncs).toEqual(["dir"]);
    } finally {
      await engine.close();
    }
  });

  it("a create whose directory fsync failed: the next append fsyncs the directory before it is acknowledged", async () => {
    const fs = instrumentedFs();
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    const dirSyncs: string[] = [];
    try {
      await engine.create(keyOf("other"), [rootEntry("other")]);
      fs.hooks.fsync = async (fd: number) => {
        if (!(await nodeFs.fstat(fd)).isDirectory()) return undefined;
        fs.hooks.fsync = undefined;
        throw errno("EIO");
      };
      await expectCode(engine.create(k, [rootEntry(k.sessionId)]), "UNAVAILABLE");
      fs.hooks.fsync = async (fd: number) => {
        if ((await nodeFs.fstat(fd)).isDirectory()) dirSyncs.push("dir");
        return undefined;
      };
      const r = await engine.append(k, appendOf([user("after")]));
      expect(r.headSeq).toBe(2);
      expect(dirSyncs).toEqual(["dir"]);
      // Once durable, later appends need no directory fsync.
      await engine.append(k, appendOf([user("later")]));
      expect(dirSyncs).toEqual(["dir"]);
    } finally {
      await engine.close();
    }
  });
});
