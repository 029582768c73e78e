import { createHash } from "node:crypto";
import { toJsonString } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { blobRefsOf } from "../core/blob-parts.js";
import { aborted, isSessiondError } from "../core/errors.js";
import { quote } from "../core/ids.js";
import type { SessionLog } from "../core/session-log.js";
import type { RootRecord, SessionKey, StorageEngine } from "../storage/engine.js";

/**
 * The engine-to-engine half of `sessiond copy`: every session of every
 * workspace of `source` is loaded (one at a time per worker), created in
 * `target` with exactly the same entries (ids, parents, seqs, timestamps:
 * the canonical proto JSON both engines store), then read back through
 * `verifier` — a second, independent instance of the target engine, so the
 * read comes from durable storage and not from the writer's cache — and
 * compared byte for byte.
 *
 * A session that already exists in the target is never overwritten:
 * identical → skipped; a prefix of the source (an earlier copy, the source
 * grew since) → the missing entries are appended; anything else → conflict.
 */

export type CopyStatus =
  /** Created in the target and verified. */
  | "copied"
  /** Already in the target with identical entries: nothing written. */
  | "identical"
  /** The target held a prefix of the source: the rest was appended and verified. */
  | "caught_up"
  /** The target holds a different session under this id: left as it is. */
  | "conflict"
  /** The source session is corrupt (DATA_LOSS): not copied. */
  | "corrupt"
  /** Any other error while reading or writing. */
  | "failed"
  /** Written, but what the target reads back differs from the source. */
  | "mismatch";

/** Statuses that make `sessiond copy` exit non-zero. */
export const PROBLEMS: ReadonlySet<CopyStatus> = new Set([
  "conflict",
  "corrupt",
  "failed",
  "mismatch",
]);

export interface SessionOutcome {
  readonly workspace: string;
  readonly sessionId: string;
  readonly status: CopyStatus;
  /** Entries of the source session (0 when it could not be read). */
  readonly entries: number;
  /** Entries written to the target for it. */
  readonly written: number;
  /** Entries read back from the target and found identical (0 unless verified). */
  readonly verified: number;
  /** What went wrong, for the problem statuses. */
  readonly detail?: string;
}

export interface CopySummary {
  workspaces: number;
  sessions: number;
  /** Entries read from the source (readable sessions only). */
  entries: number;
  /** Entries written to the target. */
  written: number;
  copied: number;
  identical: number;
  caughtUp: number;
  conflicts: number;
  corrupt: number;
  failed: number;
  mismatches: number;
  /** Sessions read back from the target and found identical to the source. */
  verifiedSessions: number;
  verifiedEntries: number;
}

export interface CopyOptions {
  source: StorageEngine;
  target: StorageEngine;
  /** Reads the target back (another instance on the same storage; `target` itself works too). */
  verifier: StorageEngine;
  /** Only these workspaces (default: every workspace of the source). */
  workspaces?: readonly string[] | undefined;
  /** Sessions copied at the same time (default 4). */
  concurrency?: number | undefined;
  /** Called once the sessions are counted, before the first copy. */
  onStart?: (totalSessions: number, workspaces: readonly string[]) => void;
  /** Called for each session as it finishes (in completion order). */
  onSession?: (outcome: SessionOutcome) => void | Promise<void>;
}

/** What a session is ordered by: parents (lower spawn depth) before their subagents. */
interface Item {
  readonly key: SessionKey;
  readonly depth: number;
  readonly createdAtMs: number;
}

function depthOf(r: RootRecord): number {
  const k = r.root?.kind;
  if (k?.case === "sessionInfo") return k.value.spawnDepth;
  // Unreadable root: read last (it will be reported as corrupt anyway).
  return Number.MAX_SAFE_INTEGER;
}

/** The canonical bytes of an entry: exactly what the JSONL and PostgreSQL engines store. */
export function canonical(e: Entry): string {
  return toJsonString(EntrySchema, e);
}

function where(key: SessionKey): string {
  return `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}`;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Compares what the target holds with the source's canonical entries.
 * Returns the number of leading entries that are identical and a
 * description of the first difference (undefined when `log` equals the source).
 */
export function compareWith(
  source: readonly string[],
  log: SessionLog,
): { same: number; difference: string | undefined } {
  const head = log.headSeq;
  const n = Math.min(head, source.length);
  const stored = log.slice(0, n);
  for (let i = 0; i < n; i++) {
    if (canonical(stored[i] as Entry) !== source[i]) {
      const id = (stored[i] as Entry).id;
      return { same: i, difference: `entry at seq ${i + 1} (${quote(id)}) differs` };
    }
  }
  if (head !== source.length) {
    return {
      same: n,
      difference: `head seq ${head}, the source's is ${source.length}`,
    };
  }
  return { same: n, difference: undefined };
}

/** A source session read whole: its entries and their canonical bytes (a snapshot). */
interface SourceSession {
  entries: Entry[];
  json: string[];
  leafId: string;
}

async function readSource(source: StorageEngine, key: SessionKey): Promise<SourceSession> {
  const log = await source.load(key);
  // The log may be shared with the engine and grow: take the snapshot synchronously.
  const entries = log.slice(0, log.headSeq);
  const leafId = log.leafId;
  // Decoding every entry here surfaces lazily detected corruption as DATA_LOSS.
  return { entries, json: entries.map(canonical), leafId };
}

/** The target's log of this session, read through the verifier; undefined when absent. */
async function readTarget(verifier: StorageEngine, key: SessionKey) {
  try {
    return await verifier.load(key);
  } catch (err) {
    if (isSessiondError(err, "NOT_FOUND")) return undefined;
    throw err;
  }
}

/** Reads the session back from the target and compares it with the source. */
async function verify(
  verifier: StorageEngine,
  key: SessionKey,
  src: SourceSession,
): Promise<string | undefined> {
  const log = await readTarget(verifier, key);
  if (log === undefined) return "the session is missing from the target after the copy";
  const { difference } = compareWith(src.json, log);
  if (difference !== undefined) return difference;
  if (log.leafId !== src.leafId) {
    return `current leaf ${quote(log.leafId)}, the source's is ${quote(src.leafId)}`;
  }
  return undefined;
}

/**
 * Copies the blobs `entries` reference that the target's workspace lacks,
 * each checked against its name (SHA-256) before it is stored.
 */
async function copyBlobs(o: CopyOptions, workspace: string, entries: readonly Entry[]) {
  const seen = new Set<string>();
  for (const e of entries) {
    for (const ref of blobRefsOf(e)) {
      if (seen.has(ref.sha256)) continue;
      seen.add(ref.sha256);
      if ((await o.target.blobs.stat(workspace, ref.sha256, false)) !== undefined) continue;
      const size = await o.source.blobs.stat(workspace, ref.sha256, false);
      if (size === undefined) {
        throw new Error(
          `entry ${quote(e.id)} references blob ${ref.sha256}, which the source lacks`,
        );
      }
      const data = await o.source.blobs.read(workspace, ref.sha256, 0, size);
      if (createHash("sha256").update(data).digest("hex") !== ref.sha256) {
        throw new Error(`blob ${ref.sha256} of the source does not hash to its name`);
      }
      await o.target.blobs.put(workspace, ref.sha256, data);
    }
  }
}

async function copyOne(o: CopyOptions, key: SessionKey): Promise<SessionOutcome> {
  const base = { workspace: key.workspace, sessionId: key.sessionId };
  let src: SourceSession;
  try {
    src = await readSource(o.source, key);
  } catch (err) {
    const status = isSessiondError(err, "DATA_LOSS") ? "corrupt" : "failed";
    return { ...base, status, entries: 0, written: 0, verified: 0, detail: message(err) };
  }
  const n = src.entries.length;
  const done = (status: CopyStatus, written: number, detail?: string): SessionOutcome => ({
    ...base,
    status,
    entries: n,
    written,
    verified: PROBLEMS.has(status) ? 0 : n,
    ...(detail === undefined ? {} : { detail }),
  });
  try {
    // The blobs first: an entry is never in the target before what it names.
    await copyBlobs(o, key.workspace, src.entries);
    let existing = await readTarget(o.verifier, key).catch((err: unknown) => {
      if (isSessiondError(err, "DATA_LOSS")) {
        throw new ConflictError(`the target's copy is corrupt: ${message(err)}`);
      }
      throw err;
    });
    let written = 0;
    let status: CopyStatus = "copied";
    if (existing === undefined) {
      try {
        await o.target.create(key, src.entries);
        written = n;
      } catch (err) {
        // Created by someone else since we looked: judge what is there now.
        if (!isSessiondError(err, "ALREADY_EXISTS")) throw err;
        existing = await readTarget(o.verifier, key);
        if (existing === undefined) throw err;
      }
    }
    if (existing !== undefined) {
      const { same, difference } = compareWith(src.json, existing);
      if (difference === undefined) {
        if (existing.leafId !== src.leafId) {
          throw new ConflictError(
            `the target's current leaf is ${quote(existing.leafId)}, the source's ${quote(src.leafId)}`,
          );
        }
        return done("identical", 0);
      }
      const have = existing.headSeq;
      if (same !== have || have > n) {
        throw new ConflictError(
          `the target already holds a different session with this id: ${difference}`,
        );
      }
      // The target holds a prefix of the source (an earlier copy): append the rest.
      const rest = src.entries.slice(have);
      const restJson = src.json.slice(have);
      await o.target.append(key, (log) => {
        if (log.headSeq !== have) {
          throw aborted(`${where(key)} changed in the target during the copy`);
        }
        return { write: rest, entries: rest, deduplicated: false, json: restJson };
      });
      written = rest.length;
      status = "caught_up";
    }
    const mismatch = await verify(o.verifier, key, src);
    if (mismatch !== undefined) {
      return done("mismatch", written, `read back from the target: ${mismatch}`);
    }
    return done(status, written);
  } catch (err) {
    if (err instanceof ConflictError) return done("conflict", 0, err.message);
    return done("failed", 0, message(err));
  }
}

/** A session the copy refuses to touch (reported, not thrown out of copySessions). */
class ConflictError extends Error {}

/** Runs `fn` over `items` with at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Copies every session; never throws for one session's trouble (see SessionOutcome). */
export async function copySessions(o: CopyOptions): Promise<CopySummary> {
  const concurrency = Math.max(1, o.concurrency ?? 4);
  const all = await o.source.workspaces();
  const workspaces = (o.workspaces ?? all).filter((w) => all.includes(w)).sort();
  // Only the light part of each root is kept: one session's entries are held at a time per worker.
  const items: Item[] = [];
  for (const workspace of workspaces) {
    for (const r of await o.source.listRoots(workspace)) {
      items.push({
        key: { workspace, sessionId: r.sessionId },
        depth: depthOf(r),
        createdAtMs: r.createdAtMs,
      });
    }
  }
  // Parents before their subagents (neither engine needs it, but a reader of
  // the target during the copy never sees a subagent without its parent),
  // then oldest first: a stable, reproducible order.
  items.sort(
    (a, b) =>
      a.depth - b.depth ||
      a.key.workspace.localeCompare(b.key.workspace) ||
      a.createdAtMs - b.createdAtMs ||
      (a.key.sessionId < b.key.sessionId ? -1 : a.key.sessionId > b.key.sessionId ? 1 : 0),
  );
  o.onStart?.(items.length, workspaces);
  const summary: CopySummary = {
    workspaces: workspaces.length,
    sessions: items.length,
    entries: 0,
    written: 0,
    copied: 0,
    identical: 0,
    caughtUp: 0,
    conflicts: 0,
    corrupt: 0,
    failed: 0,
    mismatches: 0,
    verifiedSessions: 0,
    verifiedEntries: 0,
  };
  const count: Record<CopyStatus, keyof CopySummary> = {
    copied: "copied",
    identical: "identical",
    caught_up: "caughtUp",
    conflict: "conflicts",
    corrupt: "corrupt",
    failed: "failed",
    mismatch: "mismatches",
  };
  // One depth level at a time: a level starts once the one above is done.
  let start = 0;
  while (start < items.length) {
    const depth = (items[start] as Item).depth;
    let end = start;
    while (end < items.length && (items[end] as Item).depth === depth) end++;
    await pool(items.slice(start, end), concurrency, async (item) => {
      const outcome = await copyOne(o, item.key);
      summary[count[outcome.status]]++;
      summary.entries += outcome.entries;
      summary.written += outcome.written;
      if (!PROBLEMS.has(outcome.status)) {
        summary.verifiedSessions++;
        summary.verifiedEntries += outcome.verified;
      }
      await o.onSession?.(outcome);
    });
    start = end;
  }
  return summary;
}

/** True when the copy found nothing to complain about. */
export function clean(s: CopySummary): boolean {
  return s.conflicts + s.corrupt + s.failed + s.mismatches === 0;
}
