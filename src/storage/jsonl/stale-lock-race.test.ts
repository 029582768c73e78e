import * as fs from "node:fs";
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, expect, it } from "vitest";
import { removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { FileLease, lockPathOf } from "./lock.js";

/**
 * Regression (found by the reliability battery, T4): two waiters that both
 * see a dead holder's lock as stale must not BOTH end up holding it.
 * proper-lockfile breaks a stale lock as stat → rmdir → mkdir, so the
 * second breaker could remove the first one's fresh lock and take its own:
 * two writers at once, acknowledged entries overwritten.
 *
 * The two leases stand for two processes: they reach the same lock dir
 * through two paths (a symlinked directory), so proper-lockfile's
 * in-process bookkeeping, keyed by path, keeps them apart.
 */
let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

it("two waiters breaking the same stale lock never hold it at the same time", async () => {
  const real = path.join(dir, "real");
  mkdirSync(real);
  symlinkSync(real, path.join(dir, "alias"));
  const fileA = path.join(real, "s.jsonl");
  const fileB = path.join(dir, "alias", "s.jsonl");
  writeFileSync(fileA, "");
  const opts = { staleMs: 10_000, idleMs: 0, enabled: true };
  // B's stat answers late (as a busy process would): it still reports the
  // old, stale lock after A has broken it and taken a fresh one.
  const lateStat = ((p: fs.PathLike, cb: (e: NodeJS.ErrnoException | null, st: fs.Stats) => void) =>
    fs.stat(p, (e, st) => setTimeout(() => cb(e, st), 30))) as typeof fs.stat;
  const slowFs = { ...fs, stat: lateStat };
  let overlaps = 0;
  let holders = 0;
  const hold = async (lease: FileLease) => {
    await lease.acquire();
    holders++;
    if (holders > 1) overlaps++;
    await sleep(80);
    holders--;
    await lease.release();
  };
  for (let round = 0; round < 20; round++) {
    // A holder that died: its lock dir, last refreshed a minute ago.
    const lockDir = lockPathOf(fileA);
    mkdirSync(lockDir);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockDir, old, old);
    const a = new FileLease(fileA, opts);
    const b = new FileLease(fileB, { ...opts, fs: slowFs });
    await Promise.all([hold(a), hold(b)]);
  }
  expect(overlaps).toBe(0);
});
