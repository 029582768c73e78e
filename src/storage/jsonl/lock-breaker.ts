/**
 * Breaking a stale session-file lock safely (lock.ts holds the lease): the
 * fs that proper-lockfile is given, whose rmdir of the lock dir is either
 * a release by the holder or a break serialised with every other breaker.
 */
import type * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import { errnoCode } from "./fs-ops.js";
import { ownerIsDead, ownerPathOf } from "./lock-owner.js";

/** Suffix of the directory that serialises the breaking of a stale lock. */
const BREAKER_SUFFIX = ".break";

type Verdict = "gone" | "break" | "held";

function call<T>(
  run: (cb: (err: NodeJS.ErrnoException | null, v?: T) => void) => void,
): Promise<T> {
  return new Promise((resolve, reject) => run((err, v) => (err ? reject(err) : resolve(v as T))));
}

const ignoreMissing = (err: unknown) => {
  if (errnoCode(err) !== "ENOENT") throw err;
};

/**
 * Breaks a lock, serialised with every other breaker: takes `<lock>.break`
 * (an atomic mkdir), asks `verdict` UNDER it whether the lock is still to
 * be broken, and only then removes the owner file and the lock dir.
 *
 * Why: proper-lockfile breaks a stale lock as stat → "stale" → rmdir →
 * mkdir. Two waiters that both saw the old lock stale could interleave: the
 * first removed it and took a fresh lock, the second then removed that
 * FRESH lock and took one too, and both wrote (the fencing check cannot
 * help: both pass it before either writes). Found by the reliability
 * battery (T4: four processes, holders killed with SIGKILL, 8065
 * acknowledged entries overwritten in one run). Under the breaker the lock
 * dir cannot change hands: only breakers remove a lock they do not hold.
 * A breaker dir left by a crash is removed after `staleMs` (breaking takes
 * milliseconds). Resolves "gone" / "break" when the lock is no longer
 * there (mkdir may be tried), "held" when breaking was refused.
 */
async function breakUnder(
  base: typeof fs,
  lockPath: string,
  staleMs: number,
  verdict: () => Promise<Verdict>,
): Promise<Verdict> {
  const breaker = lockPath + BREAKER_SUFFIX;
  try {
    await call((cb) => base.mkdir(breaker, cb));
  } catch (err) {
    if (errnoCode(err) !== "EEXIST") throw err;
    const st = await call<fs.Stats>((cb) => base.stat(breaker, cb)).catch(() => undefined);
    if (st !== undefined && st.mtimeMs < Date.now() - staleMs) {
      await call((cb) => base.rmdir(breaker, cb)).catch(() => undefined);
    }
    return "held";
  }
  try {
    const v = await verdict();
    if (v !== "break") return v;
    await call((cb) => base.unlink(ownerPathOf(lockPath), cb)).catch(ignoreMissing);
    await call((cb) => base.rmdir(lockPath, cb)).catch(ignoreMissing);
    return "break";
  } finally {
    await call((cb) => base.rmdir(breaker, cb)).catch(() => undefined);
  }
}

/**
 * node's fs for proper-lockfile, except for rmdir of the lock dir: when
 * this process holds the lock (release), the owner file goes first; when
 * it does not (proper-lockfile breaking a stale lock), the break goes
 * through `breakUnder` with the mtime re-checked under the breaker.
 */
export function breakingFs(
  base: typeof fs,
  lockPath: string,
  staleMs: number,
  holding: () => boolean,
): typeof fs {
  const locked = () =>
    Object.assign(new Error("lock is held (breaking it was refused)"), { code: "ELOCKED" });
  const stale = async (): Promise<Verdict> => {
    try {
      const st = await call<fs.Stats>((cb) => base.stat(lockPath, cb));
      return st.mtimeMs < Date.now() - staleMs ? "break" : "held";
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return "gone";
      throw err;
    }
  };
  const rmdir = ((target: fs.PathLike, cb: (err: NodeJS.ErrnoException | null) => void) => {
    if (String(target) !== lockPath) return base.rmdir(target, cb);
    if (holding()) {
      return base.unlink(ownerPathOf(lockPath), () => base.rmdir(target, cb));
    }
    breakUnder(base, lockPath, staleMs, stale).then(
      (v) => cb(v === "held" ? locked() : null),
      (err: NodeJS.ErrnoException) => cb(err),
    );
  }) as typeof fs.rmdir;
  return { ...base, rmdir };
}

/**
 * Breaks the lock when its owner file names a process of this machine
 * that no longer runs (see lock-owner.ts), serialised with every other
 * breaker (and only if the owner file is unchanged under the breaker);
 * true when the lock is gone and taking it may be retried.
 */
export async function breakIfOwnerDead(
  base: typeof fs,
  lockPath: string,
  staleMs: number,
): Promise<boolean> {
  const ownerPath = ownerPathOf(lockPath);
  let seen: string;
  try {
    seen = await fsp.readFile(ownerPath, "utf8");
  } catch {
    return false;
  }
  if (!ownerIsDead(seen)) return false;
  const verdict = await breakUnder(base, lockPath, staleMs, async () => {
    const now = await fsp.readFile(ownerPath, "utf8").catch(() => undefined);
    return now === seen ? "break" : "held";
  });
  return verdict !== "held";
}
