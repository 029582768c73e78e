import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, rootEntry, user } from "../../../test/support/fixtures.js";
import { keyOf } from "../../../test/support/jsonl/fixtures.js";
import { instrumentedFs } from "../../../test/support/jsonl/instrumented-fs.js";
import { NO_OBSERVER, type StorageObserver } from "../observer.js";
import { type FsOps, nodeFs, syncFsOps } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { observedFs } from "./observed-fs.js";

/**
 * The writer's synchronous calls (SyncFsOps) come with the real file system
 * only: a test's wrapper, which injects faults or counts calls, must not
 * carry them, or the writer would go around it.
 */
describe("SyncFsOps", () => {
  it("nodeFs has them, observedFs passes them on, a spread or a wrapper does not carry them", () => {
    const sync = syncFsOps(nodeFs);
    expect(sync).toBeDefined();
    const observed = syncFsOps(observedFs(nodeFs, NO_OBSERVER));
    expect(observed?.stat).toBe(sync?.stat);
    expect(observed?.write).toBe(sync?.write);
    const spread: FsOps = { ...nodeFs };
    expect(syncFsOps(spread)).toBeUndefined();
    expect(syncFsOps(instrumentedFs().ops)).toBeUndefined();
    expect(syncFsOps(observedFs(instrumentedFs().ops, NO_OBSERVER))).toBeUndefined();
  });
});

describe("SyncFsOps.fdatasync", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-syncfs-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** An observer that counts the flushes it is told of. */
  function counting(): StorageObserver & { syncs: number } {
    return {
      ...NO_OBSERVER,
      syncs: 0,
      synced() {
        this.syncs++;
      },
    };
  }

  it("is timed by observedFs like FsOps.fdatasync: inline (answered before it returns) or through the pool", async () => {
    const observer = counting();
    const sync = syncFsOps(observedFs(nodeFs, observer));
    const fd = openSync(join(dir, "f"), "w");
    try {
      let inlineErr: unknown = "not called";
      sync?.fdatasync(fd, true, (err) => {
        inlineErr = err;
      });
      expect(inlineErr).toBeNull();
      expect(observer.syncs).toBe(1);
      const pooled = await new Promise((done) => sync?.fdatasync(fd, false, done));
      expect(pooled).toBeNull();
      expect(observer.syncs).toBe(2);
    } finally {
      closeSync(fd);
    }
  });

  it("reports a failed flush to its callback (inline and through the pool)", async () => {
    const sync = syncFsOps(nodeFs);
    let inlineErr: NodeJS.ErrnoException | null = null;
    sync?.fdatasync(987_654, true, (err) => {
      inlineErr = err;
    });
    expect((inlineErr as NodeJS.ErrnoException | null)?.code).toBe("EBADF");
    const pooled = await new Promise<NodeJS.ErrnoException | null>((done) =>
      sync?.fdatasync(987_654, false, done),
    );
    expect(pooled?.code).toBe("EBADF");
  });

  it("an engine on the real file system reports one flush per durable append to its observer", async () => {
    const observer = counting();
    const engine = new JsonlEngine({ dataDir: dir, observer });
    const k = keyOf("synced");
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      await engine.append(k, appendOf([user("first")]));
      const before = observer.syncs;
      for (let i = 0; i < 5; i++) await engine.append(k, appendOf([user(`m${i}`)]));
      expect(observer.syncs - before).toBe(5);
    } finally {
      await engine.close();
    }
  });
});
