import { stat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, rootEntry, user } from "../../../test/support/fixtures.js";
import { fileOf, keyOf, removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { lockPathOf } from "./lock.js";

/**
 * The cross-process lock is held as a short lease: kept across a burst of
 * appends, dropped after the idle time and on close, so other processes
 * wait at most that long.
 */
describe("lease", () => {
  let dataDir: string;
  const k = keyOf("leased");
  const exists = (p: string) =>
    stat(p).then(
      () => true,
      () => false,
    );

  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  it("is held right after an append and released after the idle time", async () => {
    const engine = new JsonlEngine({ dataDir, leaseIdleMs: 30 });
    const lockDir = lockPathOf(fileOf(dataDir, k));
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      await engine.append(k, appendOf([user("a")]));
      expect(await exists(lockDir)).toBe(true);
      await sleep(300);
      expect(await exists(lockDir)).toBe(false);
    } finally {
      await engine.close();
    }
  });

  it("is released on close", async () => {
    const engine = new JsonlEngine({ dataDir, leaseIdleMs: 60_000 });
    const lockDir = lockPathOf(fileOf(dataDir, k));
    await engine.create(k, [rootEntry(k.sessionId)]);
    await engine.append(k, appendOf([user("a")]));
    expect(await exists(lockDir)).toBe(true);
    await engine.close();
    expect(await exists(lockDir)).toBe(false);
  });

  it("an idle holder hands the lock to a waiting writer at once, not after its idle time or the stale timeout", async () => {
    const a = new JsonlEngine({ dataDir, leaseIdleMs: 60_000 });
    const b = new JsonlEngine({ dataDir, leaseIdleMs: 60_000 });
    try {
      await a.create(k, [rootEntry(k.sessionId)]);
      await a.append(k, appendOf([user("a")]));
      await new Promise((r) => setTimeout(r, 100));
      expect(await exists(lockPathOf(fileOf(dataDir, k)))).toBe(true); // nobody waits: kept
      const started = Date.now();
      await b.append(k, appendOf([user("b")]));
      const waited = Date.now() - started;
      expect(waited).toBeLessThan(2_000);
      expect((await b.read(k, 0, 10)).entries.map((e) => e.id).length).toBe(3);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
