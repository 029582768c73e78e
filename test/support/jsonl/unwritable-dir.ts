/**
 * Directories that really refuse writes, for tests of the data-dir check
 * and of the error codes. Root ignores permission bits, so as root a
 * directory is made immutable (`chattr +i`: EPERM) instead of read-only
 * (EACCES). Each helper returns undefined when the box allows neither; the
 * test then skips saying why. Only what a helper made is undone.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import * as path from "node:path";

export const IS_ROOT = process.getuid?.() === 0;

export interface Frozen {
  /** What a write into the directory fails with. */
  readonly errno: "EACCES" | "EPERM";
  /** Makes the directory writable again (before it is removed). */
  thaw(): void;
}

/** Makes `dir` refuse new entries: chmod 0555, or as root `chattr +i`. */
export function freeze(dir: string): Frozen | undefined {
  if (!IS_ROOT) {
    chmodSync(dir, 0o555);
    return { errno: "EACCES", thaw: () => chmodSync(dir, 0o755) };
  }
  if (!run("chattr", ["+i", dir])) return undefined;
  return { errno: "EPERM", thaw: () => run("chattr", ["-i", dir]) };
}

/**
 * Mounts a tiny tmpfs on the empty directory `dir` and fills it, so that
 * writing a byte fails with ENOSPC. Root only (mount); undefined otherwise.
 */
export function fullDisk(dir: string): { unmount(): void } | undefined {
  if (!IS_ROOT || !run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir])) return undefined;
  const unmount = () => {
    run("umount", [dir]);
  };
  try {
    mkdirSync(path.join(dir, "filler-dir"));
    const fd = openSync(path.join(dir, "filler-dir", "filler"), "w");
    try {
      const block = Buffer.alloc(4096, 1);
      for (let i = 0; i < 1024; i++) writeSync(fd, block);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    unmount();
    throw err;
  }
  return { unmount };
}

function run(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
