import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { failedPrecondition, SessiondError } from "../../core/errors.js";
import { fsProblem } from "./fs-errors.js";
import { errnoCode } from "./fs-ops.js";

/**
 * The check a data directory passes before the JSONL engine uses it, so
 * that a wrong `--data-dir` (a file, a read-only mount, no permission) stops
 * the server at start-up with one line, instead of a server that says
 * SERVING and then fails every create. Synchronous, because the engine is
 * opened by constructors (`openStore` returns its store at once).
 *
 * - "writable" (a store that is written): the directory is made if missing
 *   (each new level's parent fsynced, as for any directory the engine
 *   makes), must be a directory, and must let a directory (what a lock is)
 *   and a file in it be made, written and removed: `.probe-<pid>-<random>`,
 *   a name no listing reads.
 * - "readable" (a store only read: `fsck`, `copy --from`): the directory
 *   must exist, be a directory and be listable.
 *
 * Refusals are SessiondErrors coded like the engine's own fs errors
 * (fs-errors.ts): FAILED_PRECONDITION for what the operator must fix,
 * RESOURCE_EXHAUSTED for a full disk. The message names the absolute
 * path: it goes to whoever chose the directory.
 */
export type DataDirNeed = "writable" | "readable";

export function checkDataDir(dataDir: string, need: DataDirNeed): void {
  const dir = path.resolve(dataDir);
  if (need === "writable") makeDir(dir);
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") {
      throw failedPrecondition(`data directory ${dir} does not exist`);
    }
    throw refused(dir, "cannot be read", err);
  }
  if (!st.isDirectory()) throw failedPrecondition(`data directory ${dir} is not a directory`);
  if (need === "readable") {
    try {
      fs.readdirSync(dir);
    } catch (err) {
      throw refused(dir, "cannot be read", err);
    }
    return;
  }
  probe(dir);
}

/** Creates `dir` and its missing parents, fsyncing the parent of each new one. */
function makeDir(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    let st: fs.Stats;
    try {
      st = fs.statSync(d);
    } catch (err) {
      const code = errnoCode(err);
      // ENOTDIR: a file further up; found as the walk goes on.
      if ((code === "ENOENT" || code === "ENOTDIR") && d !== path.dirname(d)) {
        missing.unshift(d);
        continue;
      }
      throw refused(dir, "cannot be created", err);
    }
    if (st.isDirectory()) break;
    if (d === dir) throw failedPrecondition(`data directory ${dir} is not a directory`);
    throw failedPrecondition(`data directory ${dir} cannot be created: ${d} is not a directory`);
  }
  for (const d of missing) {
    try {
      try {
        fs.mkdirSync(d);
      } catch (err) {
        if (errnoCode(err) !== "EEXIST") throw err;
      }
      fsyncDirSync(path.dirname(d));
    } catch (err) {
      throw refused(dir, "cannot be created", err);
    }
  }
}

function fsyncDirSync(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes and removes what a writer makes: a directory (a lock) and a written file in it. */
function probe(dir: string): void {
  const lockLike = path.join(dir, `.probe-${process.pid}-${randomBytes(4).toString("hex")}`);
  const fileLike = path.join(lockLike, "file");
  try {
    fs.mkdirSync(lockLike);
    const fd = fs.openSync(fileLike, "wx");
    try {
      fs.writeSync(fd, "sessiond checks that this directory takes files\n");
    } finally {
      fs.closeSync(fd);
    }
    fs.unlinkSync(fileLike);
    fs.rmdirSync(lockLike);
  } catch (err) {
    try {
      fs.rmSync(lockLike, { recursive: true, force: true });
    } catch {
      // What could not be made usually cannot be removed either; the refusal says why.
    }
    throw refused(dir, "cannot be written to", err);
  }
}

/** The refusal of `dir`, naming the failing path when it is a parent (a probe's is noise). */
function refused(dir: string, what: string, err: unknown): SessiondError {
  const p = fsProblem(err);
  const at = (err as { path?: unknown } | null)?.path;
  const parent = typeof at === "string" && !path.resolve(at).startsWith(dir);
  const where = parent ? ` on ${at}` : "";
  return new SessiondError(
    p.code,
    `data directory ${dir} ${what}: ${p.words} (${p.errno}${where})`,
    {
      cause: err,
    },
  );
}
