import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, expect, it } from "vitest";
import { removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { FileLease, lockPathOf } from "./lock.js";
import { ownerIsDead, ownerPathOf, ownerRecord, selfIdentity } from "./lock-owner.js";

/**
 * After kill -9 and a restart on the same machine, the dead process's
 * locks are taken over at once (its owner file names a process that no
 * longer runs), not after the 10 s stale time; a live holder's lock is
 * never broken that way.
 */
let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

const opts = { staleMs: 10_000, idleMs: 0, enabled: true };
const hasProc = selfIdentity() !== undefined;

/** The owner record of a child process (alive until `stop`). */
async function childOwner(): Promise<{ record: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await sleep(200);
  const [boot, ns] = (selfIdentity() as string).split(" ");
  const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
  const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  return {
    record: `${boot} ${ns} ${child.pid} ${start} abcdef\n`,
    stop: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** A lock dir as a holder leaves it: fresh (not stale by mtime), with its owner file. */
function plantLock(file: string, record: string): void {
  mkdirSync(lockPathOf(file));
  writeFileSync(ownerPathOf(lockPathOf(file)), record);
}

it.skipIf(!hasProc)(
  "a lock whose owner was killed is taken over at once, not after the stale time",
  async () => {
    const file = path.join(dir, "s.jsonl");
    writeFileSync(file, "");
    const owner = await childOwner();
    await owner.stop();
    expect(ownerIsDead(owner.record)).toBe(true);
    plantLock(file, owner.record);
    const lease = new FileLease(file, opts);
    const t = Date.now();
    await lease.acquire();
    expect(Date.now() - t).toBeLessThan(2_000);
    expect(lease.held).toBe(true);
    // The new holder recorded itself, and releasing removes both.
    expect(
      readFileSync(ownerPathOf(lockPathOf(file)), "utf8").startsWith(selfIdentity() as string),
    ).toBe(true);
    await lease.release();
    expect(existsSync(lockPathOf(file))).toBe(false);
    expect(existsSync(ownerPathOf(lockPathOf(file)))).toBe(false);
  },
);

it.skipIf(!hasProc)("a lock whose owner still runs is not broken", async () => {
  const file = path.join(dir, "s.jsonl");
  writeFileSync(file, "");
  const owner = await childOwner();
  try {
    expect(ownerIsDead(owner.record)).toBe(false);
    plantLock(file, owner.record);
    const lease = new FileLease(file, opts);
    const acquired = lease.acquire().then(() => "acquired");
    expect(await Promise.race([acquired, sleep(1_000).then(() => "waiting")])).toBe("waiting");
    // The holder lets go: the waiter gets it.
    removeDir(lockPathOf(file));
    expect(await acquired).toBe("acquired");
    await lease.release();
  } finally {
    await owner.stop();
  }
});

it("owner records of another machine, another PID namespace or garbage never count as dead", () => {
  const mine = ownerRecord() ?? "b n 1 1 x";
  const [boot, ns, , start] = mine.split(" ");
  expect(ownerIsDead(`other-boot ${ns} 999999 ${start} x`)).toBe(false);
  expect(ownerIsDead(`${boot} pid:[1] 999999 ${start} x`)).toBe(false);
  expect(ownerIsDead("garbage")).toBe(false);
  expect(ownerIsDead("")).toBe(false);
});
