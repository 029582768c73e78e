import { randomBytes } from "node:crypto";
import * as path from "node:path";
import { alreadyExists } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { errnoCode, type FsOps, fsyncDir, writeAll } from "./fs-ops.js";
import { isTempName, tempName } from "./paths.js";

/**
 * Creating a file atomically and durably: the whole content goes to a temp
 * file in the same directory, which is fsynced and then hard-linked to its
 * final name. link(2) fails when the name exists, so a create never
 * overwrites a session, and readers never see a half-written new file.
 * The directory is fsynced last: without it a power cut could lose the new
 * name even though the file's data was synced.
 *
 * A crash between writing the temp file and unlinking it leaves a
 * `.tmp-<id>-<random>` behind; `removeStaleTemps` deletes those.
 */

/** Temp files younger than this may belong to a create in flight in another process. */
export const TEMP_GRACE_MS = 60_000;

/** Creates `dir` and its missing parents, fsyncing the parent of each new directory. */
export async function ensureDir(ops: FsOps, dir: string, sync: boolean) {
  const missing: string[] = [];
  for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
    try {
      await ops.stat(d);
      break;
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
      missing.unshift(d);
    }
  }
  for (const d of missing) {
    try {
      await ops.mkdir(d);
    } catch (err) {
      if (errnoCode(err) !== "EEXIST") throw err;
      continue;
    }
    if (sync) await fsyncDir(ops, path.dirname(d));
  }
}

/**
 * Writes `content` to `file` if no file of that name exists (ALREADY_EXISTS
 * otherwise), durably. `dir` must exist.
 */
export async function createExclusive(
  ops: FsOps,
  file: string,
  sessionId: string,
  content: Buffer,
  sync: boolean,
): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, tempName(sessionId, randomBytes(6).toString("hex")));
  const fd = await ops.open(temp, "wx");
  let linked = false;
  try {
    try {
      await writeAll(ops, fd, content, 0);
      if (sync) await ops.fsync(fd);
    } finally {
      await ops.close(fd);
    }
    try {
      await ops.link(temp, file);
      linked = true;
    } catch (err) {
      if (errnoCode(err) === "EEXIST") {
        throw alreadyExists(`session ${quote(sessionId)} already exists`);
      }
      throw err;
    }
  } finally {
    await ops.unlink(temp).catch(() => undefined);
  }
  if (linked && sync) await fsyncDir(ops, dir);
}

/** Deletes temp files older than the grace period from `dir`; returns how many. */
export async function removeStaleTemps(ops: FsOps, dir: string, now = Date.now()) {
  let names: string[];
  try {
    names = await ops.readdir(dir);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return 0;
    throw err;
  }
  let removed = 0;
  for (const name of names) {
    if (!isTempName(name)) continue;
    const p = path.join(dir, name);
    try {
      const st = await ops.stat(p);
      if (now - st.mtimeMs < TEMP_GRACE_MS) continue;
      await ops.unlink(p);
      removed++;
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
    }
  }
  return removed;
}
