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

/**
 * Paths (files and directories) whose name this process made durable by
 * fsyncing their directory, per file system. A name found in place is not
 * trusted: a failed directory fsync (here or in a crashed process) leaves
 * a name that the page cache shows but a power cut drops, so it is made
 * durable once before anything that depends on it is acknowledged.
 */
const durable = new WeakMap<FsOps, Set<string>>();

export function durableNames(ops: FsOps): Set<string> {
  let set = durable.get(ops);
  if (set === undefined) {
    set = new Set();
    durable.set(ops, set);
  }
  return set;
}

/** Fsyncs the directory of `p` unless this process already made the name `p` durable. */
export async function makeNameDurable(ops: FsOps, p: string): Promise<void> {
  const known = durableNames(ops);
  if (known.has(p)) return;
  await fsyncDir(ops, path.dirname(p));
  known.add(p);
}

/**
 * Creates `dir` and its missing parents, fsyncing the parent of each new
 * directory (and of `dir` itself once, when it was found in place).
 */
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
  if (missing.length === 0 && sync) await makeNameDurable(ops, dir);
  for (const d of missing) {
    try {
      await ops.mkdir(d);
    } catch (err) {
      if (errnoCode(err) !== "EEXIST") throw err;
    }
    if (sync) {
      await fsyncDir(ops, path.dirname(d));
      durableNames(ops).add(d);
    }
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
  if (linked && sync) {
    await fsyncDir(ops, dir);
    durableNames(ops).add(file);
  }
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
