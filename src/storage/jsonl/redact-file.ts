import { randomBytes } from "node:crypto";
import * as path from "node:path";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { dataLoss, failedPrecondition } from "../../core/errors.js";
import type { SessionSealer } from "../seal/sealed-payload.js";
import { type FsOps, fsyncDir, writeAll } from "./fs-ops.js";
import { tempName } from "./paths.js";
import { checkFrame, encodeRecord } from "./record.js";

/**
 * Redaction's rewrite of a session file: the one sanctioned rewrite of a
 * log (SPEC §12). The caller holds the session's lock (the in-process turn
 * and the cross-process lease) and hands over the file's bytes up to its
 * last good record; this makes a copy with the chosen records replaced
 * (each with its CRC computed for its new payload, its `more` marker kept,
 * so the units of atomicity stay as they were), fsyncs the copy, renames
 * it over the log and fsyncs the directory. A crash at any step leaves
 * either the old log whole (and a `.tmp-<id>-<random>` that the engine's
 * temp cleanup removes after a minute) or the new one whole: rename(2)
 * swaps the name atomically, and the copy is durable before it has the
 * name.
 */

/** The file's bytes with the records of `replacements` (by seq) re-encoded. */
export function rewrittenContent(
  bytes: Buffer,
  replacements: ReadonlyMap<number, Entry>,
  name: string,
  /** A sealed session's sealer: the new records are sealed like every other of its records. */
  sealer?: SessionSealer,
): Buffer {
  const parts: Buffer[] = [];
  const done = new Set<number>();
  let start = 0;
  let line = 0;
  while (start < bytes.length) {
    line++;
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) throw dataLoss(`${name}: line ${line} has no end; not rewritten`);
    const frame = checkFrame(bytes, start, nl);
    if (typeof frame === "string") {
      throw dataLoss(`${name} is corrupt at line ${line} (byte ${start}): ${frame}; not rewritten`);
    }
    const entry = replacements.get(frame.seq);
    if (entry === undefined) parts.push(bytes.subarray(start, nl + 1));
    else {
      parts.push(Buffer.from(encodeRecord(entry, undefined, frame.more, sealer)));
      done.add(frame.seq);
    }
    start = nl + 1;
  }
  for (const seq of replacements.keys()) {
    if (!done.has(seq)) throw dataLoss(`${name}: no record of seq ${seq} to rewrite`);
  }
  return Buffer.concat(parts);
}

export interface ReplaceOptions {
  readonly sessionId: string;
  /** Skip the fsyncs (the engine's `noFsync` negative control). */
  readonly noFsync: boolean;
  /**
   * Negative control ONLY: write the new content over the log in place
   * (no copy, no rename), so that a crash in the middle leaves a mix.
   */
  readonly inPlace?: boolean;
}

/** Puts `content` in place of the file `file` as described above; returns nothing until it is durable. */
export async function replaceFile(
  ops: FsOps,
  file: string,
  content: Buffer,
  o: ReplaceOptions,
): Promise<void> {
  if (o.inPlace) return overwriteInPlace(ops, file, content, o.noFsync);
  const rename = ops.rename;
  if (rename === undefined) {
    throw failedPrecondition("this storage's file system cannot rename files: redaction needs it");
  }
  const dir = path.dirname(file);
  // Copies an earlier redaction left when it crashed hold the content of the
  // entries it did not redact: gone before this one makes its own.
  await removeLeftoverCopies(ops, dir, o.sessionId);
  const mode = (await ops.stat(file)).mode & 0o777;
  const temp = path.join(dir, tempName(o.sessionId, randomBytes(6).toString("hex")));
  const fd = await ops.open(temp, "wx", mode);
  let renamed = false;
  try {
    try {
      await writeAll(ops, fd, content, 0);
      if (!o.noFsync) await ops.fsync(fd);
    } finally {
      await ops.close(fd);
    }
    await rename.call(ops, temp, file);
    renamed = true;
  } finally {
    if (!renamed) await ops.unlink(temp).catch(() => undefined);
  }
  if (!o.noFsync) await fsyncDir(ops, dir);
}

/**
 * Removes `.tmp-<sessionId>-<random>` files of `dir`. Under the session's
 * lock, such a file is a crashed redaction's copy, or the temp file of a
 * create of an id that exists already (which fails with ALREADY_EXISTS
 * whatever happens to its temp file).
 */
async function removeLeftoverCopies(ops: FsOps, dir: string, sessionId: string): Promise<void> {
  const prefix = tempName(sessionId, "");
  let removed = 0;
  for (const name of await ops.readdir(dir)) {
    if (!name.startsWith(prefix) || !/^[0-9a-f]{12}$/.test(name.slice(prefix.length))) continue;
    await ops.unlink(path.join(dir, name)).catch(() => undefined);
    removed++;
  }
  if (removed > 0) await fsyncDir(ops, dir);
}

/** The negative control: the new bytes over the old ones, then cut to length. Not crash-safe. */
async function overwriteInPlace(
  ops: FsOps,
  file: string,
  content: Buffer,
  noFsync: boolean,
): Promise<void> {
  const fd = await ops.open(file, "r+");
  try {
    await writeAll(ops, fd, content, 0);
    await ops.ftruncate(fd, content.length);
    if (!noFsync) await ops.fsync(fd);
  } finally {
    await ops.close(fd);
  }
}
