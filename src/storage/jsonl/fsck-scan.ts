import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { blobRefsOf } from "../../core/blob-parts.js";
import { WORKSPACE_PATTERN } from "../../core/ids.js";
import { SessionLog } from "../../core/session-log.js";
import { plainSizeOf } from "../seal/blob-seal.js";
import type { ContentOpener } from "../seal/sealed-payload.js";
import { SUBAGENT_DIR, sessionIdOf } from "./paths.js";
import { scan } from "./reader.js";

/**
 * The read-only half of `fsck`: find every session file of a data dir and
 * judge each with the JSONL engine's own reader, so fsck and the server can
 * never disagree about what is a torn tail and what is corruption. Nothing
 * here opens a file for writing or takes a lock.
 */

/** One session file found under the data dir. */
export interface SessionFile {
  /** Absolute path. */
  readonly path: string;
  /** Path relative to the data dir, for printing. */
  readonly name: string;
  readonly workspace: string;
  readonly sessionId: string;
  readonly subagent: boolean;
}

export type FileStatus = "ok" | "torn_tail" | "corrupt" | "unreadable";

/** The verdict on one file. */
export interface FileReport extends SessionFile {
  readonly status: FileStatus;
  /** Valid records (the readable prefix). */
  readonly entries: number;
  /** Size of the file. */
  readonly bytes: number;
  /** torn_tail / corrupt: the 1-based line of the first bad record. */
  readonly line?: number;
  /** torn_tail / corrupt: byte offset of the first bad record. */
  readonly offset?: number;
  /** torn_tail: bytes after the last good record (what the next writer cuts off). */
  readonly tornBytes?: number;
  /** What is wrong. */
  readonly reason?: string;
}

async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw err;
  }
}

/** Every session file of every workspace (top-level and subagents), in a stable order. */
export async function findSessionFiles(dataDir: string): Promise<SessionFile[]> {
  const files: SessionFile[] = [];
  for (const workspace of await names(dataDir)) {
    if (!WORKSPACE_PATTERN.test(workspace)) continue;
    for (const subagent of [false, true]) {
      const dir = subagent
        ? join(dataDir, workspace, "sessions", SUBAGENT_DIR)
        : join(dataDir, workspace, "sessions");
      for (const fileName of await names(dir)) {
        const sessionId = sessionIdOf(fileName);
        if (sessionId === undefined) continue;
        const path = join(dir, fileName);
        files.push({ path, name: relative(dataDir, path), workspace, sessionId, subagent });
      }
    }
  }
  return files;
}

/** A blob the sessions of a workspace reference: its size, and one session naming it. */
export interface BlobUse {
  readonly size: number;
  readonly sessionId: string;
}

/**
 * Reads one file and classifies it; never throws. With `blobs`, adds the
 * blobs the readable entries reference (by SHA-256).
 */
/**
 * fsck has no keys: a sealed record (seal/) is judged by its frame, CRC and
 * structure in clear, its content read as empty (fsck shows no content; the
 * blob references inside sealed content are not checked without a key).
 */
const STRUCTURE_ONLY: ContentOpener = { open: () => "{}" };

export async function checkFile(
  file: SessionFile,
  blobs?: Map<string, BlobUse>,
): Promise<FileReport> {
  let buf: Buffer;
  try {
    buf = await readFile(file.path);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    return { ...file, status: "unreadable", entries: 0, bytes: 0, reason };
  }
  const log = new SessionLog(file.sessionId);
  const { end, verdict } = scan(buf, 0, log, undefined, STRUCTURE_ONLY);
  for (const e of blobs === undefined ? [] : log.entries()) {
    for (const r of blobRefsOf(e)) {
      if (!blobs?.has(r.sha256)) {
        blobs?.set(r.sha256, { size: Number(r.size), sessionId: file.sessionId });
      }
    }
  }
  const base = { ...file, entries: log.headSeq, bytes: buf.length };
  // Without a valid first record nothing says which session this is (as the engine rules).
  if (log.headSeq === 0) {
    const reason =
      buf.length === 0
        ? "the file is empty"
        : `no valid first record${verdict.kind === "ok" ? "" : ` (${verdict.reason})`}`;
    return { ...base, status: "corrupt", line: 1, offset: 0, reason };
  }
  switch (verdict.kind) {
    case "ok":
      return { ...base, status: "ok" };
    case "torn":
      return {
        ...base,
        status: "torn_tail",
        line: verdict.line,
        offset: verdict.offset,
        tornBytes: buf.length - end,
        reason: verdict.reason,
      };
    case "corrupt":
      return {
        ...base,
        status: "corrupt",
        line: verdict.line,
        offset: verdict.offset,
        reason: verdict.reason,
      };
  }
}

/** What is wrong with one referenced blob. */
export interface BlobProblem {
  readonly workspace: string;
  readonly sha256: string;
  readonly sessionId: string;
  readonly problem: "missing" | "bad";
  readonly reason: string;
}

/**
 * Checks the referenced blobs of a workspace: each one is there, of the
 * size its references say, and its content hashes to its name.
 */
export async function checkBlobs(
  dataDir: string,
  workspace: string,
  blobs: ReadonlyMap<string, BlobUse>,
): Promise<BlobProblem[]> {
  const problems: BlobProblem[] = [];
  for (const [sha256, use] of [...blobs].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const base = { workspace, sha256, sessionId: use.sessionId };
    const file = join(dataDir, workspace, "blobs", sha256.slice(0, 2), sha256);
    let data: Buffer;
    try {
      data = await readFile(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      const problem =
        code === "ENOENT"
          ? await sealedProblem(`${file}.sealed`, use.size)
          : { problem: "missing" as const, reason: code };
      if (problem !== undefined) problems.push({ ...base, ...problem });
      continue;
    }
    const got = createHash("sha256").update(data).digest("hex");
    if (data.length !== use.size) {
      problems.push({
        ...base,
        problem: "bad",
        reason: `${data.length} bytes, referenced as ${use.size}`,
      });
    } else if (got !== sha256) {
      problems.push({ ...base, problem: "bad", reason: `its content hashes to ${got}` });
    }
  }
  return problems;
}

/**
 * A sealed blob (`<sha256>.sealed`, seal/blob-seal.ts) is checked for its
 * size only: its hash needs the workspace's key, which fsck does not take.
 * Undefined when it is there with the referenced size.
 */
async function sealedProblem(
  file: string,
  size: number,
): Promise<{ problem: "missing" | "bad"; reason: string } | undefined> {
  let st: Stats;
  try {
    st = await stat(file);
  } catch (err) {
    return { problem: "missing", reason: (err as NodeJS.ErrnoException).code ?? String(err) };
  }
  const plain = plainSizeOf(st.size);
  if (plain === size) return undefined;
  const got = plain === undefined ? `${st.size} bytes is no sealed blob's size` : `${plain} bytes`;
  return { problem: "bad", reason: `sealed: ${got}, referenced as ${size}` };
}
