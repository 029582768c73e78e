import { blobRefsOf } from "../core/blob-parts.js";
import { isSessiondError } from "../core/errors.js";
import { quote } from "../core/ids.js";
import type { SessionKey, StorageEngine } from "./engine.js";

/**
 * Erasure and blobs (SPEC §12): erasing a session deletes (not just
 * forgets) every blob no other live session of the workspace references.
 * Two steps around the erasure, so the blobs a sealed session referenced
 * are known before its key is destroyed:
 *
 *   const candidates = await blobsReferencedBy(engine, ws, ids);   // before
 *   const startedMs = Date.now();
 *   ... erase the sessions ...
 *   await deleteErasedBlobs(engine, ws, candidates, startedMs - margin);
 *
 * Crash-safe by the collector's rules (store/blobs.ts): a blob is deleted
 * only when no session references it after the erasure (an erased
 * session's references are gone: a sealed one's content no longer opens,
 * a clear one's was rewritten without its parts) and it was not used
 * (`stat` with touch, `put`) since `untouchedBeforeMs`. A crash between
 * the erasure and the deletion leaves unreferenced blobs, which the
 * periodic collection removes after its grace; nothing still referenced
 * is ever deleted. When a session cannot be read whole, nothing is
 * deleted (its references are unknown).
 */
export interface ErasedBlobs {
  readonly removed: readonly string[];
  /** Candidates kept: referenced elsewhere, used since, or not judged (`skipped`). */
  readonly kept: readonly string[];
  /** Why nothing was deleted, when a session could not be read. */
  readonly skipped?: string;
}

/**
 * The blobs the sessions `sessionIds` of `workspace` reference (missing
 * sessions: none). A session that cannot be read whole adds what was read
 * of it: the erasure goes on, and its other blobs are left to the
 * periodic collection.
 */
export async function blobsReferencedBy(
  engine: StorageEngine,
  workspace: string,
  sessionIds: readonly string[],
): Promise<Set<string>> {
  const refs = new Set<string>();
  for (const sessionId of sessionIds) {
    await refsOfSession(engine, { workspace, sessionId }, refs);
  }
  return refs;
}

/** Deletes the `candidates` no session of the workspace references now; see above. */
export async function deleteErasedBlobs(
  engine: StorageEngine,
  workspace: string,
  candidates: ReadonlySet<string>,
  untouchedBeforeMs: number,
): Promise<ErasedBlobs> {
  if (candidates.size === 0) return { removed: [], kept: [] };
  const live = new Set<string>();
  for (const sessionId of await engine.listIds(workspace)) {
    const r = await refsOfSession(engine, { workspace, sessionId }, live);
    if (typeof r === "string") return { removed: [], kept: [...candidates], skipped: r };
  }
  const removed: string[] = [];
  const kept: string[] = [];
  for (const sha256 of [...candidates].sort()) {
    const gone =
      !live.has(sha256) && (await engine.blobs.delete(workspace, sha256, false, untouchedBeforeMs));
    (gone ? removed : kept).push(sha256);
  }
  return { removed, kept };
}

/** The blobs one session references (added to `out`); a reason when it cannot be read whole. */
async function refsOfSession(
  engine: StorageEngine,
  key: SessionKey,
  out: { add(sha256: string): unknown } = new Set<string>(),
): Promise<undefined | string> {
  try {
    if (engine.scanEntries !== undefined) {
      const end = await engine.scanEntries(key, {
        afterSeq: 0,
        needles: ['"blob"'],
        visit: (e) => {
          for (const r of blobRefsOf(e)) out.add(r.sha256);
          return true;
        },
      });
      if (end.damaged) return `session ${quote(key.sessionId)} is damaged`;
    } else {
      for (const e of (await engine.load(key)).entries()) {
        for (const r of blobRefsOf(e)) out.add(r.sha256);
      }
    }
  } catch (err) {
    if (isSessiondError(err, "NOT_FOUND")) return undefined;
    return `session ${quote(key.sessionId)} could not be read (${(err as Error).message})`;
  }
  return undefined;
}
