import * as path from "node:path";
import { errnoCode, type FsOps, fsyncDir, writeAll } from "./fs-ops.js";

/**
 * Torn-tail repair, done only by a writer holding the session's lock,
 * right before it appends. Without it the next record would be glued onto
 * the partial line and turn a harmless torn tail into mid-file corruption.
 *
 * Order matters: the bad bytes are saved aside and made durable first, so
 * that a crash during the repair loses nothing an operator might want to
 * look at; then the file is cut back to the last good record and
 * fdatasynced before anything new is written after that point.
 */

/** `<file>.broken-<ISO time>` with the colons made file-name friendly. */
export function brokenName(file: string, now: Date = new Date()): string {
  return `${file}.broken-${now.toISOString().replaceAll(":", "-")}`;
}

/** Writes `bytes` to a new `.broken-*` file next to `file`; returns its path. */
async function saveAside(ops: FsOps, file: string, bytes: Buffer, noFsync: boolean) {
  const base = brokenName(file);
  for (let attempt = 0; ; attempt++) {
    const target = attempt === 0 ? base : `${base}-${attempt}`;
    let fd: number;
    try {
      fd = await ops.open(target, "wx");
    } catch (err) {
      if (errnoCode(err) === "EEXIST" && attempt < 100) continue;
      throw err;
    }
    try {
      await writeAll(ops, fd, bytes, 0);
      if (!noFsync) await ops.fsync(fd);
    } finally {
      await ops.close(fd);
    }
    return target;
  }
}

export interface RepairOptions {
  /** Skip the fsyncs (negative-control switch `debug.noFsync`). */
  noFsync?: boolean;
}

/**
 * Cuts `file` (open as `fd`) back to `goodEnd` after saving `tail` (the
 * bytes from `goodEnd` to the end of the file) aside. Returns the path of
 * the saved copy.
 */
export async function repairTail(
  ops: FsOps,
  file: string,
  fd: number,
  goodEnd: number,
  tail: Buffer,
  o: RepairOptions = {},
): Promise<string> {
  const saved = await saveAside(ops, file, tail, o.noFsync === true);
  if (!o.noFsync) await fsyncDir(ops, path.dirname(file));
  await ops.ftruncate(fd, goodEnd);
  if (!o.noFsync) await ops.fdatasync(fd);
  return saved;
}
