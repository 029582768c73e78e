import { Health, type SessionMeta } from "../../gen/sessiond/v1/session_pb.js";
import { timestampMillis } from "../core/entry.js";
import { isSessiondError } from "../core/errors.js";
import { checkWorkspace } from "../core/ids.js";
import { type Expiry, expired, type RetentionPolicy } from "../core/retention.js";
import type { SessionStore } from "./session-store.js";

/**
 * Applying a retention policy to one workspace of a store (the server's
 * background sweep; `sessiond gc` does the same over the API):
 *
 * 1. Judge: read every top-level session's metadata and pick what the
 *    policy removes (core/retention.ts).
 * 2. Remove each judged session only if it is unchanged since it was
 *    judged: a delete conditional on the head seq seen, checked by the
 *    engine under the session's write lock, after any append in flight.
 *    A session written to in between is kept (a writer never loses a
 *    session under it), and judged again at the next sweep.
 * 3. Its subagent sessions go with it, right after it. A crash in between
 *    leaves them as DeleteSession without subagents leaves them (subagents
 *    of a deleted session, listed by its full id); they are not removed
 *    later, since nothing tells them from subagents kept on purpose.
 */

export interface ExpireOptions {
  readonly nowMs: number;
  /** Judge only; remove nothing. */
  readonly dryRun?: boolean | undefined;
}

export interface ExpiredSession extends Expiry {
  /** Every session removed with it (its subagents, recursively), itself first; empty on a dry run. */
  readonly removed: readonly string[];
}

export interface ExpireReport {
  readonly workspace: string;
  /** Sessions the policy removed (on a dry run: would remove). */
  readonly expired: readonly ExpiredSession[];
  /** Judged but written to since: kept. */
  readonly changed: readonly string[];
}

/** Every top-level session of a workspace, page by page. */
async function topLevel(store: SessionStore, workspace: string): Promise<SessionMeta[]> {
  const out: SessionMeta[] = [];
  let pageToken = "";
  do {
    const page = await store.list({
      workspace,
      pageToken,
      pageSize: store.limits.maxPageSize,
    });
    out.push(...page.sessions);
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return out;
}

export async function expireSessions(
  store: SessionStore,
  workspaceIn: string,
  policy: RetentionPolicy,
  o: ExpireOptions,
): Promise<ExpireReport> {
  const workspace = checkWorkspace(workspaceIn);
  const sessions = await topLevel(store, workspace);
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const verdicts = expired(
    sessions.map((s) => ({
      id: s.id,
      updatedMs: timestampMillis(s.updatedAt),
      corrupt: s.health === Health.CORRUPT,
    })),
    policy,
    o.nowMs,
  );
  const report = { workspace, expired: [] as ExpiredSession[], changed: [] as string[] };
  if (o.dryRun) {
    return { ...report, expired: verdicts.map((v) => ({ ...v, removed: [] })) };
  }
  for (const v of verdicts) {
    const ifHeadSeq = Number((byId.get(v.id) as SessionMeta).headSeq);
    try {
      const removed = await store.delete(workspace, v.id, { includeSubagents: true, ifHeadSeq });
      report.expired.push({ ...v, removed });
    } catch (err) {
      if (isSessiondError(err, "ABORTED")) report.changed.push(v.id);
      // Deleted by someone else meanwhile: nothing left to do.
      else if (!isSessiondError(err, "NOT_FOUND")) throw err;
    }
  }
  return report;
}
