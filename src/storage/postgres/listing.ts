import type postgres from "postgres";
import type { RootPageQuery, RootRecord, SessionKey, SessionRecord } from "../engine.js";
import type { PgContext } from "./context.js";
import { type RecordRow, type RootRow, rootRecordOfRow, sessionRecordOfRow } from "./rows.js";

/**
 * Listing queries. They read the sessions table (kept current by every
 * append) and, for the root, the seq-1 entry by primary key: never a scan
 * of a log. They bypass the cache and its turns: a listing is one
 * statement, one snapshot, and sees other replicas' creates and deletes.
 */

export async function listIds(ctx: PgContext, workspace: string): Promise<string[]> {
  const rows = await ctx.db(
    "listing sessions",
    () =>
      ctx.sql<{ session_id: string }[]>`
      SELECT session_id FROM sessiond_sessions WHERE workspace = ${workspace}`,
  );
  return rows.map((r) => r.session_id);
}

/** Whether the session has a row (one primary-key lookup). */
export async function sessionExists(ctx: PgContext, key: SessionKey): Promise<boolean> {
  const rows = await ctx.db(
    "looking up a session",
    () =>
      ctx.sql`
      SELECT 1 FROM sessiond_sessions
      WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`,
  );
  return rows.length > 0;
}

export async function listRoots(ctx: PgContext, workspace: string): Promise<RootRecord[]> {
  const rows = await ctx.db(
    "listing sessions",
    () =>
      ctx.sql<RootRow[]>`
      SELECT s.session_id, s.created_at_ms, s.parent_session_id, e.payload
      FROM sessiond_sessions s
      JOIN sessiond_entries e
        ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq = 1
      WHERE s.workspace = ${workspace}`,
  );
  return rows.map((r) => rootRecordOfRow(workspace, r));
}

/**
 * The page query of `pageRoots`, not yet run (postgres.js queries run when
 * awaited): the tests EXPLAIN this very statement. A keyset query on
 * sessiond_sessions_page (migration 2): equality on (workspace,
 * parent_session_id), then the row comparison with the previous page's
 * last key as an index condition, so a page costs `limit` index entries
 * (plus one primary-key lookup of each root entry) however deep the page
 * and however many sessions the workspace has. Newest first walks the
 * index forwards, oldest first backwards. Every session_id comparison and
 * ORDER BY is COLLATE "C", like the index, so that ids sort bytewise (as
 * JavaScript's < does on ASCII ids) in a database of any collation.
 */
export function pageRootsQuery(
  sql: postgres.Sql,
  workspace: string,
  q: RootPageQuery,
): postgres.PendingQuery<RootRow[]> {
  const desc = q.order === "desc";
  const key = sql`(s.created_at_ms, s.session_id COLLATE "C")`;
  const after =
    q.after === undefined
      ? sql``
      : sql`AND ${key} ${desc ? sql`<` : sql`>`} (${q.after.createdMs}::bigint, ${q.after.id}::text)`;
  const order = desc
    ? sql`s.created_at_ms DESC, s.session_id COLLATE "C" DESC`
    : sql`s.created_at_ms ASC, s.session_id COLLATE "C" ASC`;
  return sql<RootRow[]>`
    SELECT s.session_id, s.created_at_ms, s.parent_session_id, e.payload
    FROM sessiond_sessions s
    JOIN sessiond_entries e
      ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq = 1
    WHERE s.workspace = ${workspace} AND s.parent_session_id = ${q.parentSessionId}
      ${after}
    ORDER BY ${order}
    LIMIT ${q.limit}`;
}

/** One listing page in SQL: see `StorageEngine.pageRoots` and `pageRootsQuery`. */
export async function pageRoots(
  ctx: PgContext,
  workspace: string,
  q: RootPageQuery,
): Promise<RootRecord[]> {
  const rows = await ctx.db("listing sessions", () => pageRootsQuery(ctx.sql, workspace, q));
  return rows.map((r) => rootRecordOfRow(workspace, r));
}

export async function listRecords(
  ctx: PgContext,
  workspace: string,
  sessionIds?: readonly string[],
): Promise<SessionRecord[]> {
  if (sessionIds !== undefined && sessionIds.length === 0) return [];
  const sql = ctx.sql;
  const rows = await ctx.db(
    "listing sessions",
    () =>
      sql<RecordRow[]>`
      SELECT s.session_id, s.head_seq, s.leaf_id, s.message_count, s.title, s.updated_at_ms,
        e.payload
      FROM sessiond_sessions s
      JOIN sessiond_entries e
        ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq = 1
      WHERE s.workspace = ${workspace}
      ${sessionIds === undefined ? sql`` : sql`AND s.session_id IN ${sql([...sessionIds])}`}`,
  );
  return rows.map((r) => sessionRecordOfRow(workspace, r));
}

export async function listWorkspaces(ctx: PgContext): Promise<string[]> {
  const rows = await ctx.db(
    "listing workspaces",
    () => ctx.sql<{ workspace: string }[]>`SELECT DISTINCT workspace FROM sessiond_sessions`,
  );
  return rows.map((r) => r.workspace);
}
