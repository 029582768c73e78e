import { failedPrecondition, notFound } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { SessionKey } from "../engine.js";
import type { KeyProvider } from "../keys/key-provider.js";
import { SEALED_KINDS, type SessionSealer, sealedBounds } from "../seal/sealed-payload.js";
import { BlobFiles } from "./blob-files.js";
import { errnoCode, type FsOps, nodeFs, readWholeBytes, readWholeText } from "./fs-ops.js";
import { FileLease } from "./lock.js";
import { sessionPath } from "./paths.js";
import { checkFrame, decodePayload, encodeRecord } from "./record.js";
import { replaceFile } from "./redact-file.js";
import { keyPath, SessionKeys } from "./session-keys.js";

/**
 * `sessiond seal`: the plaintext sessions of a workspace sealed after the
 * fact (issue 41: turning encryption on seals new sessions; this seals the
 * old ones). Per session, the redaction-style sanctioned rewrite of its
 * log (redact-file.ts), under the session's cross-process lease:
 *
 *   1. the log read up to its end; every record checked (frame, CRC);
 *   2. the session's key file written durably (session-keys.ts: temp file,
 *      fsync, link, directory fsync), or the one a crashed run left taken
 *      again;
 *   3. a copy of the log with every record of a sealed kind in clear
 *      re-encoded sealed under that key (its CRC computed for its new
 *      payload, its `more` marker kept; every other line byte for byte),
 *      fsynced, renamed over the log, the directory fsynced.
 *
 * A crash at any step leaves a readable session: before 2 the clear log
 * alone; between 2 and the rename the clear log and an unused key (a
 * clear record reads the same with or without a key; a server that loads
 * the session then seals its new appends under that key, and the next run
 * seals the rest); after the rename the sealed log with its key, which was
 * durable first. Never a sealed log without its key.
 *
 * Idempotent: a session with a key file and no record left in clear is
 * skipped ("sealed already"), an erased one too. A session with sealed
 * records but no key file is refused (FAILED_PRECONDITION): a new key
 * would not open them.
 *
 * Other processes on the data dir (a running server): the rename gives the
 * log a new inode; a server that has the session open reads the new file
 * (and its key file) at its next read, and its next append is refused
 * once with UNAVAILABLE "the file was replaced; reloaded, retry" (clients
 * retry), then sealed: file-state.ts's fencing, as after a redaction.
 */

/** What sealing did to one session. */
export type SealOutcome =
  | { readonly sessionId: string; readonly result: "sealed"; readonly records: number }
  | { readonly sessionId: string; readonly result: "already" | "erased" };

export interface SealOptions {
  readonly dataDir: string;
  /** The key provider (the keyring) the new data keys are wrapped by. */
  readonly keys: KeyProvider;
  /** The file system (tests inject faults); node's by default. */
  readonly fs?: FsOps;
  /** Skip every fsync (tests only). */
  readonly noFsync?: boolean;
  /** The lease's stale age (lock.ts); 10 s by default. */
  readonly lockStaleMs?: number;
}

/** Seals one session; see the module comment. NOT_FOUND when it does not exist. */
export async function sealSession(o: SealOptions, key: SessionKey): Promise<SealOutcome> {
  const ops = o.fs ?? nodeFs;
  const file = await locate(ops, o.dataDir, key);
  const keys = new SessionKeys(
    ops,
    { keys: o.keys, workspaces: [key.workspace] },
    o.noFsync !== true,
  );
  const lease = new FileLease(file, {
    staleMs: o.lockStaleMs ?? 10_000,
    idleMs: 0,
    enabled: true,
  });
  await lease.acquire();
  try {
    return await sealLocked(ops, keys, key, file, o.noFsync === true, lease);
  } finally {
    await lease.release();
  }
}

/** The sessions of `workspace` (all, or `sessionIds`) sealed one by one, in order. */
export async function sealSessions(
  o: SealOptions,
  workspace: string,
  sessionIds: readonly string[],
  each?: (outcome: SealOutcome) => void,
): Promise<SealOutcome[]> {
  const out: SealOutcome[] = [];
  for (const sessionId of sessionIds) {
    const r = await sealSession(o, { workspace, sessionId });
    each?.(r);
    out.push(r);
  }
  return out;
}

async function sealLocked(
  ops: FsOps,
  keys: SessionKeys,
  key: SessionKey,
  file: string,
  noFsync: boolean,
  lease: FileLease,
): Promise<SealOutcome> {
  const name = `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}`;
  const { sessionId } = key;
  const hasKeyFile = (await readWholeText(ops, keyPath(file))) !== undefined;
  if (hasKeyFile && (await keys.isErased(key, file))) return { sessionId, result: "erased" };
  const bytes = await readLog(ops, file, name);
  const census = countRecords(bytes, name);
  if (hasKeyFile && census.clear === 0) return { sessionId, result: "already" };
  if (!hasKeyFile && census.sealed > 0) {
    throw failedPrecondition(
      `${name} has sealed records but no key file (${sessionId}.key): not sealed again under a new key`,
    );
  }
  // Durable before the log that needs it (or the one a crashed run left, unwrapped).
  const keying = await keys.create(key, file);
  const sealer = keying.sealer;
  if (sealer === undefined) throw failedPrecondition(`${name}: no data key to seal it with`);
  const content = sealedContent(bytes, name, sealer);
  const lost = lease.lost;
  if (lost !== undefined) throw lost;
  await replaceFile(ops, file, content, { sessionId, noFsync });
  return { sessionId, result: "sealed", records: census.clear };
}

/** Path of an existing session file (top-level first, then subagents). */
async function locate(ops: FsOps, dataDir: string, key: SessionKey): Promise<string> {
  for (const subagent of [false, true]) {
    const file = sessionPath(dataDir, key.workspace, key.sessionId, subagent);
    try {
      await ops.stat(file);
      return file;
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
    }
  }
  throw notFound(`session ${quote(key.sessionId)} not found in workspace ${quote(key.workspace)}`);
}

/** The whole log; a torn last line (a crashed append) is left out of the copy. */
async function readLog(ops: FsOps, file: string, name: string): Promise<Buffer> {
  const text = await readWholeBytes(ops, file);
  if (text === undefined) throw notFound(`${name} not found`);
  const end = text.lastIndexOf(0x0a) + 1;
  return text.subarray(0, end);
}

/** How many records of a sealed kind are stored in clear, and how many sealed. */
function countRecords(bytes: Buffer, name: string): { clear: number; sealed: number } {
  let clear = 0;
  let sealed = 0;
  forEachRecord(bytes, name, (frame, kind) => {
    if (sealedBounds(bytes, frame.start, frame.end) !== undefined) sealed++;
    else if (SEALED_KINDS.has(kind)) clear++;
  });
  return { clear, sealed };
}

/**
 * The log's bytes with every record of a sealed kind in clear re-encoded
 * sealed by `sealer`; sealed records and clear kinds (SessionInfo, Leaf,
 * Label) byte for byte. DATA_LOSS when a line is not intact.
 */
export function sealedContent(bytes: Buffer, name: string, sealer: SessionSealer): Buffer {
  const parts: Buffer[] = [];
  forEachRecord(bytes, name, (frame, kind, line) => {
    if (!SEALED_KINDS.has(kind) || sealedBounds(bytes, frame.start, frame.end) !== undefined) {
      parts.push(line);
      return;
    }
    const entry = decodePayload(bytes, frame);
    if (typeof entry === "string") {
      throw failedPrecondition(`${name}: record of seq ${frame.seq} is not an entry (${entry})`);
    }
    parts.push(Buffer.from(encodeRecord(entry, undefined, frame.more, sealer)));
  });
  return Buffer.concat(parts);
}

/** Each intact record of the log, with its kind (by its JSON name) and its whole line. */
function forEachRecord(
  bytes: Buffer,
  name: string,
  visit: (
    frame: { seq: number; start: number; end: number; more: boolean },
    kind: string,
    line: Buffer,
  ) => void,
): void {
  let start = 0;
  let n = 0;
  while (start < bytes.length) {
    n++;
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) break;
    const frame = checkFrame(bytes, start, nl);
    if (typeof frame === "string") {
      throw failedPrecondition(
        `${name} is damaged at line ${n} (byte ${start}): ${frame}; not sealed (sessiond fsck)`,
      );
    }
    visit(frame, kindOf(bytes, frame.start, frame.end), bytes.subarray(start, nl + 1));
    start = nl + 1;
  }
}

/**
 * The kind of an entry's payload: the last top-level key of its canonical
 * JSON (the kind comes last, sealed-payload.ts). Read by parsing: sealing
 * runs once per session, not on a hot path.
 */
function kindOf(bytes: Buffer, start: number, end: number): string {
  const json = JSON.parse(bytes.toString("utf8", start, end)) as Record<string, unknown>;
  for (const k of Object.keys(json)) if (SEALED_KINDS.has(k) || CLEAR_KINDS.has(k)) return k;
  return "";
}

const CLEAR_KINDS: ReadonlySet<string> = new Set(["sessionInfo", "leaf", "label"]);

/**
 * The blobs of `workspace` stored in clear (before sealing was turned on)
 * sealed under the workspace's blob data key (blob-files.ts
 * `sealExisting`); how many.
 */
export function sealBlobs(o: SealOptions, workspace: string): Promise<number> {
  const blobs = new BlobFiles(o.fs ?? nodeFs, o.dataDir, o.noFsync !== true, {
    keys: o.keys,
    workspaces: [workspace],
  });
  return blobs.sealExisting(workspace);
}

/**
 * `sessiond keys rewrap`: the workspace's blob data key wrapped again under
 * its workspace key's current version (blob-files.ts `rewrapKey`);
 * undefined when the workspace has no sealed blobs.
 */
export function rewrapBlobs(
  o: SealOptions,
  workspace: string,
): Promise<{ from: number; to: number } | undefined> {
  const blobs = new BlobFiles(o.fs ?? nodeFs, o.dataDir, o.noFsync !== true, {
    keys: o.keys,
    workspaces: [],
  });
  return blobs.rewrapKey(workspace);
}
