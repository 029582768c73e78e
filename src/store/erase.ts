import { WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import { toTimestamp } from "../core/entry.js";
import { invalidArgument, notFound, unimplemented } from "../core/errors.js";
import { checkSessionId, checkWorkspace, quote } from "../core/ids.js";
import { checkTags, hasTags, type Tags } from "../core/tags.js";
import { withheldMarker } from "../core/withheld.js";
import type { StorageEngine } from "../storage/engine.js";
import { blobsReferencedBy, deleteErasedBlobs } from "../storage/erased-blobs.js";
import { familyOf } from "./family.js";

/**
 * Erasure of sessions (issue 41, part 2; SPEC §12): the targets chosen by
 * ids, a tag filter or the whole workspace, each with its subagent
 * sessions (recursively), are erased one by one (StorageEngine.erase: a
 * sealed session's data key destroyed, a session in clear rewritten), then
 * ONE audit record is written for the call. The record holds who, when,
 * what was asked (the ids or the filter), which sessions and how many
 * entries, and the reason given: no content of any session.
 *
 * Order and crashes: the sessions are erased before the record is
 * written, so a crash in between leaves erased sessions without a record;
 * erasure is idempotent, and the retried call erases nothing more and
 * writes the record.
 */
export interface EraseInput {
  readonly workspace: string;
  /** Full session ids (no prefixes: an erasure names what it destroys). */
  readonly sessionIds?: readonly string[] | undefined;
  /** Every session whose tags hold all of these (like ListSessions' filter). */
  readonly tags?: Tags | undefined;
  /** Every session of the workspace. */
  readonly all?: boolean | undefined;
  /** Who erases (required, at most 256 characters). */
  readonly by: string;
  /** Why (at most 1024 characters). */
  readonly why?: string | undefined;
}

/** One erasure audit record (what `erasures` reads back). */
export interface ErasureRecord {
  readonly format: "sessiond-erasure";
  readonly version: 1;
  /** RFC 3339. */
  readonly at: string;
  readonly by: string;
  readonly why: string;
  readonly workspace: string;
  /** What was asked: exactly one of the three. */
  readonly request: {
    readonly sessionIds?: readonly string[];
    readonly tags?: Tags;
    readonly all?: true;
  };
  /** The sessions erased (targets and their subagents), in the order erased. */
  readonly sessionIds: readonly string[];
  readonly sessions: number;
  /** Entries whose content is withheld in those sessions now. */
  readonly entries: number;
  /** Of those, how many this call withheld (0 when all were erased before). */
  readonly newlyErased: number;
}

const MAX_BY = 256;
const MAX_WHY = 1024;
const MAX_IDS = 1000;

export async function eraseSessions(
  engine: StorageEngine,
  input: EraseInput,
  now: Date,
): Promise<ErasureRecord> {
  const workspace = checkWorkspace(input.workspace);
  const by = input.by ?? "";
  const why = input.why ?? "";
  if (by.length === 0) throw invalidArgument("by is required: who erases goes in the audit record");
  if (by.length > MAX_BY)
    throw invalidArgument(`by is ${by.length} characters long (at most ${MAX_BY})`);
  if (why.length > MAX_WHY) {
    throw invalidArgument(`why is ${why.length} characters long (at most ${MAX_WHY})`);
  }
  const ids = input.sessionIds ?? [];
  const tags = input.tags ?? {};
  const byIds = ids.length > 0;
  const byTags = Object.keys(tags).length > 0;
  const chosen = Number(byIds) + Number(byTags) + Number(input.all === true);
  if (chosen !== 1) {
    throw invalidArgument(
      "choose exactly one of: session ids, a tag filter, or all (the whole workspace)",
    );
  }
  if (ids.length > MAX_IDS) {
    throw invalidArgument(`too many session ids (${ids.length}, at most ${MAX_IDS})`);
  }
  for (const id of ids) checkSessionId(id);
  if (byTags) checkTags(tags, "tags", false);
  const erase = engine.erase?.bind(engine);
  const record = engine.recordErasure?.bind(engine);
  if (erase === undefined || record === undefined) {
    throw unimplemented(
      `erasure is not implemented on the ${engine.kind} engine yet (memory and JSONL erase)`,
    );
  }

  const roots = await engine.listRoots(workspace, byTags ? { tags } : undefined);
  let targets: string[];
  if (byIds) {
    const known = new Set(roots.map((r) => r.sessionId));
    for (const id of ids) {
      if (!known.has(id)) {
        throw notFound(`session ${quote(id)} not found in workspace ${quote(workspace)}`);
      }
    }
    targets = [...new Set(ids)];
  } else if (byTags) {
    // The hint may keep sessions whose tags do not match: their folded tags decide.
    const records = await engine.list(
      workspace,
      roots.map((r) => r.sessionId),
    );
    targets = records.filter((r) => hasTags(r.tags, tags)).map((r) => r.sessionId);
  } else {
    targets = roots.map((r) => r.sessionId);
  }
  targets.sort();

  // Every target with its subagents, recursively (a subagent's parent may be a target too).
  const all = byTags ? await engine.listRoots(workspace) : roots;
  const order: string[] = [];
  const seen = new Set<string>();
  for (const t of targets) {
    for (const id of familyOf(all, t)) {
      if (seen.has(id)) continue;
      seen.add(id);
      order.push(id);
    }
  }

  // The blobs they reference, read before their content is gone: after the
  // erasure those no other session references are deleted (SPEC §12). A blob
  // used in the last minute is left to the periodic collection: an append in
  // another process may be about to reference it.
  const blobCandidates = await blobsReferencedBy(engine, workspace, order);
  const blobsUntouchedBefore = now.getTime() - 60_000;
  const at = toTimestamp(now);
  const marker = withheldMarker(WithheldReason.ERASED, by, at, why);
  let entries = 0;
  let newlyErased = 0;
  const erased: string[] = [];
  for (const sessionId of order) {
    try {
      const r = await erase({ workspace, sessionId }, marker);
      entries += r.entries;
      newlyErased += r.changed;
      erased.push(sessionId);
    } catch (err) {
      // Deleted meanwhile: nothing left to erase.
      if (err instanceof Error && "code" in err && err.code === "NOT_FOUND") continue;
      throw err;
    }
  }
  await deleteErasedBlobs(engine, workspace, blobCandidates, blobsUntouchedBefore);
  // A whole workspace erased: its blob key is destroyed too, with its sealed blobs (SPEC §12).
  if (input.all === true) await engine.blobs.destroyKey?.(workspace);
  const request: ErasureRecord["request"] = byIds
    ? { sessionIds: [...ids] }
    : byTags
      ? { tags: { ...tags } }
      : { all: true };
  const out: ErasureRecord = {
    format: "sessiond-erasure",
    version: 1,
    at: now.toISOString(),
    by,
    why,
    workspace,
    request,
    sessionIds: erased,
    sessions: erased.length,
    entries,
    newlyErased,
  };
  await record(workspace, JSON.stringify(out));
  return out;
}

/** The workspace's erasure audit records, oldest first. */
export async function readErasures(
  engine: StorageEngine,
  workspaceIn: string,
): Promise<ErasureRecord[]> {
  const workspace = checkWorkspace(workspaceIn);
  if (engine.erasures === undefined) {
    throw unimplemented(`erasure is not implemented on the ${engine.kind} engine yet`);
  }
  return (await engine.erasures(workspace)).map((line) => JSON.parse(line) as ErasureRecord);
}
