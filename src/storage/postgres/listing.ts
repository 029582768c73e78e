import type postgres from "postgres";
import type { Tags } from "../../core/tags.js";
import type {
  RootPageQuery,
  RootRecord,
  RootsHint,
  SessionKey,
  SessionRecord,
  WorkspacePageQuery,
  WorkspaceRecord,
} from "../engine.js";
import type { PgContext } from "./context.js";
import type { RowRecords } from "./row-records.js";
import {
  type PageRow,
  type RecordRow,
  type RootRow,
  rootRecordOfRow,
  sessionRecordOfRow,
  tagColumns,
} from "./rows.js";

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

/**
 * The query of `idsByRef`, not yet run (the tests EXPLAIN it): the ids a
 * reference prefixes, and, for a reference that can be one (4 to 8
 * lower-case hex), the generated ids whose random part it prefixes
 * (`matchesSessionRef` in core/ids.ts). Each half is a range scan of an
 * index of migration 3: a prefix is the range [ref, ref + U+007F), as ids
 * are ASCII below U+007F, compared COLLATE "C" like the indexes; the
 * generated-id pattern is written out literally so that the planner can
 * match it with the partial index's predicate.
 */
export function idsByRefQuery(
  sql: postgres.Sql,
  workspace: string,
  ref: string,
  limit: number,
): postgres.PendingQuery<{ session_id: string }[]> {
  const end = `${ref}\u007f`;
  const byId = sql`
    (SELECT session_id FROM sessiond_sessions
    WHERE workspace = ${workspace}
      AND session_id COLLATE "C" >= ${ref} AND session_id COLLATE "C" < ${end}
    ORDER BY session_id COLLATE "C"
    LIMIT ${limit})`;
  if (!/^[0-9a-f]{4,8}$/.test(ref)) return sql<{ session_id: string }[]>`${byId}`;
  return sql<{ session_id: string }[]>`
    ${byId}
    UNION
    (SELECT session_id FROM sessiond_sessions
    WHERE workspace = ${workspace}
      AND session_id ~ '^[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$'
      AND right(session_id, 8) COLLATE "C" >= ${ref} AND right(session_id, 8) COLLATE "C" < ${end}
    ORDER BY session_id COLLATE "C"
    LIMIT ${limit})`;
}

/** See `StorageEngine.idsByRef` and `idsByRefQuery`. */
export async function idsByRef(
  ctx: PgContext,
  workspace: string,
  ref: string,
  limit: number,
): Promise<string[]> {
  const rows = await ctx.db("looking up a session", () =>
    idsByRefQuery(ctx.sql, workspace, ref, limit),
  );
  const ids = rows.map((r) => r.session_id);
  return ids.sort().slice(0, limit);
}

/**
 * The roots of a workspace; with `tags`, only of the sessions whose folded
 * tags hold them or are not known to (columns `tags` and `tags_head`,
 * migration 7), as StorageEngine.listRoots allows: what costs is reading
 * 10,000 roots and records, not looking at 10,000 session rows. Hinted,
 * the folded rows that hold the tags come from their GIN index (migration
 * 8) and the rows not folded at their head from a test of two integers per
 * row (no index can hold that without making appends non-HOT: the two
 * halves are a UNION ALL, as an OR of them would test every row's tags);
 * the kept sessions' records are read in the same statement and left in
 * `memo` for the `list` of the same ids that the store's filtered listing
 * makes right after; their roots are the ones `made` holds for their
 * incarnations, and only the others' are read, in a second query by
 * primary key (withRoots): a warm filtered page is one statement that
 * reads no entry. With `hint.page` (RootsHint), the folded half is that
 * page's keyset query as well (hintedRootsQuery): the first `limit` folded rows
 * that hold the tags, from the GIN index or the page index as the planner
 * finds cheaper, not every one of them; the unfolded half stays whole.
 */
export async function listRoots(
  ctx: PgContext,
  workspace: string,
  hint: RootsHint | undefined,
  memo: PageMemo,
  made: RowRecords,
): Promise<RootRecord[]> {
  const sql = ctx.sql;
  const tags = hint?.tags;
  if (tags !== undefined && Object.keys(tags).length > 0) {
    const rows = await ctx.db("listing sessions", () =>
      hintedRootsQuery(sql, workspace, tags, hint?.page),
    );
    const rooted = await withRoots(ctx, workspace, rows, made);
    return rootsOfPage(workspace, rooted.rows, memo, made, rooted.roots);
  }
  const rows = await ctx.db(
    "listing sessions",
    () =>
      sql<RootRow[]>`
      SELECT s.session_id, s.created_at_ms, s.parent_session_id, e.payload
      FROM sessiond_sessions s
      JOIN sessiond_entries e
        ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq = 1
      WHERE s.workspace = ${workspace}`,
  );
  return rows.map((r) => rootRecordOfRow(workspace, r));
}

/**
 * The query of a hinted `listRoots`, not yet run (the tests EXPLAIN it):
 * the folded rows that hold `tags`, or with `page` only the first
 * `page.limit` of them in its order after its key (the keyset of
 * pageRootsQuery), then every row not folded at its head.
 */
export function hintedRootsQuery(
  sql: postgres.Sql,
  workspace: string,
  tags: Tags,
  page: RootPageQuery | undefined,
): postgres.PendingQuery<PageRow[]> {
  const columns = sql`s.session_id, s.created_at_ms, s.parent_session_id, s.incarnation,
    NULL AS payload, s.head_seq, s.leaf_id, s.message_count, s.title, s.updated_at_ms,
    ${tagColumns(sql)}`;
  const folded = sql`
    SELECT ${columns} FROM sessiond_sessions s
    WHERE workspace = ${workspace} AND tags @> ${JSON.stringify(tags)}::text::jsonb
      AND tags_head = head_seq`;
  const unfolded = sql`
    SELECT ${columns} FROM sessiond_sessions s
    WHERE workspace = ${workspace} AND tags_head IS DISTINCT FROM head_seq`;
  if (page === undefined) return sql<PageRow[]>`${folded} UNION ALL ${unfolded}`;
  return sql<PageRow[]>`
    (${folded} AND s.parent_session_id = ${page.parentSessionId} ${keysetOf(sql, page)})
    UNION ALL (${unfolded})`;
}

/** The keyset condition, order and limit of a page query (see pageRootsQuery). */
function keysetOf(sql: postgres.Sql, q: RootPageQuery): postgres.PendingQuery<postgres.Row[]> {
  const desc = q.order === "desc";
  const key = sql`(s.created_at_ms, s.session_id COLLATE "C")`;
  const after =
    q.after === undefined
      ? sql``
      : sql`AND ${key} ${desc ? sql`<` : sql`>`} (${q.after.createdMs}::bigint, ${q.after.id}::text)`;
  const order = desc
    ? sql`s.created_at_ms DESC, s.session_id COLLATE "C" DESC`
    : sql`s.created_at_ms ASC, s.session_id COLLATE "C" ASC`;
  return sql`${after} ORDER BY ${order} LIMIT ${q.limit}`;
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
): postgres.PendingQuery<PageRow[]> {
  return sql<PageRow[]>`
    SELECT s.session_id, s.created_at_ms, s.parent_session_id, s.incarnation, e.payload,
      s.head_seq, s.leaf_id, s.message_count, s.title, s.updated_at_ms, ${tagColumns(sql)}
    FROM sessiond_sessions s
    JOIN sessiond_entries e
      ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq = 1
    WHERE s.workspace = ${workspace} AND s.parent_session_id = ${q.parentSessionId}
      ${keysetOf(sql, q)}`;
}

/**
 * The records of the sessions whose roots `pageRoots` or a hinted
 * `listRoots` just read, for the `list(workspace, ids)` that the store
 * calls right after it (see session-listing.ts): the root query reads them
 * in the same statement, so a listing page costs ONE query and one decode
 * of each root, not two. Kept until the end of the current turn of the
 * event loop only (cleared by setImmediate): `list` runs in the microtasks
 * that follow the roots' answer, before any other I/O of this process is
 * handled, so the records are exactly as fresh as a second query sent then
 * would not be newer than what a listing may show (the roots and their
 * records from one snapshot). Used only for a `list` of the same workspace
 * asking for some of those ids (the store drops the roots its filter
 * rules out); anything else queries.
 */
export class PageMemo {
  private memo: { workspace: string; records: Map<string, SessionRecord> } | undefined;

  set(workspace: string, records: readonly SessionRecord[]): void {
    const memo = { workspace, records: new Map(records.map((r) => [r.sessionId, r])) };
    this.memo = memo;
    setImmediate(() => {
      if (this.memo === memo) this.memo = undefined;
    });
  }

  /** The records of `ids`, in that order, when the memo holds every one of them; consumed. */
  take(workspace: string, ids: readonly string[]): SessionRecord[] | undefined {
    const memo = this.memo;
    if (memo === undefined || memo.workspace !== workspace || ids.length === 0) return undefined;
    const out: SessionRecord[] = [];
    for (const id of ids) {
      const r = memo.records.get(id);
      if (r === undefined) return undefined;
      out.push(r);
    }
    this.memo = undefined;
    return out;
  }
}

/** One listing page in SQL: see `StorageEngine.pageRoots` and `pageRootsQuery`. */
export async function pageRoots(
  ctx: PgContext,
  workspace: string,
  q: RootPageQuery,
  memo: PageMemo,
  made: RowRecords,
): Promise<RootRecord[]> {
  const rows = await ctx.db("listing sessions", () => pageRootsQuery(ctx.sql, workspace, q));
  return rootsOfPage(workspace, rows, memo, made);
}

/**
 * The rows of a hinted listing, read without their roots' payloads, with
 * their roots: those `made` holds for the row's incarnation as they are
 * (a warm filtered page reads no payload: 200 rows of ~1 KB each, and as
 * many index lookups, per call), the rest by primary key in one more
 * query. A root fetched for another incarnation than its row's (the
 * session was deleted and created again between the two queries) or not
 * found (deleted) leaves the row out, as the single join did before:
 * that incarnation is gone.
 */
async function withRoots(
  ctx: PgContext,
  workspace: string,
  rows: readonly PageRow[],
  made: RowRecords,
): Promise<{ rows: readonly PageRow[]; roots: readonly (RootRecord | undefined)[] }> {
  const roots = rows.map((r) => made.rootOf(workspace, r.session_id, r.incarnation));
  const missing = rows.filter((_, i) => roots[i] === undefined).map((r) => r.session_id);
  if (missing.length === 0) return { rows, roots };
  const sql = ctx.sql;
  const read = await ctx.db(
    "listing sessions",
    () =>
      sql<{ session_id: string; incarnation: string; payload: string }[]>`
      SELECT s.session_id, s.incarnation, e.payload
      FROM sessiond_sessions s
      JOIN sessiond_entries e
        ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq = 1
      WHERE s.workspace = ${workspace} AND s.session_id IN ${sql(missing)}`,
  );
  const payloads = new Map(read.map((r) => [r.session_id, r]));
  const out: { rows: PageRow[]; roots: (RootRecord | undefined)[] } = { rows: [], roots: [] };
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as PageRow;
    const root = roots[i];
    if (root === undefined) {
      const p = payloads.get(row.session_id);
      if (p === undefined || p.incarnation !== row.incarnation) continue;
      out.rows.push({ ...row, payload: p.payload });
    } else out.rows.push(row);
    out.roots.push(root);
  }
  return out;
}

/**
 * The roots of rows with records, the records left in `memo` for the `list`
 * that follows. `given[i]`: the root of `rows[i]` when its payload was not read.
 */
function rootsOfPage(
  workspace: string,
  rows: readonly PageRow[],
  memo: PageMemo,
  made: RowRecords,
  given?: readonly (RootRecord | undefined)[],
): RootRecord[] {
  const roots: RootRecord[] = [];
  const records: SessionRecord[] = [];
  for (let i = 0; i < rows.length; i++) {
    const { root, record } = made.of(workspace, rows[i] as PageRow, given?.[i]);
    roots.push(root);
    records.push(record);
  }
  memo.set(workspace, records);
  return roots;
}

export async function listRecords(
  ctx: PgContext,
  workspace: string,
  sessionIds?: readonly string[],
  memo?: PageMemo,
): Promise<SessionRecord[]> {
  if (sessionIds !== undefined && sessionIds.length === 0) return [];
  if (sessionIds !== undefined) {
    const page = memo?.take(workspace, sessionIds);
    if (page !== undefined) return page;
  }
  const sql = ctx.sql;
  const rows = await ctx.db(
    "listing sessions",
    () =>
      sql<RecordRow[]>`
      SELECT s.session_id, s.head_seq, s.leaf_id, s.message_count, s.title, s.updated_at_ms,
        e.payload, ${tagColumns(sql)}
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

/**
 * A page of workspaces with their counts: one aggregate over the sessions
 * table (its rows, never the entries), names compared bytewise (COLLATE
 * "C") like the other engines' string order.
 */
export async function workspacePage(
  ctx: PgContext,
  q: WorkspacePageQuery,
): Promise<WorkspaceRecord[]> {
  if (q.only !== undefined && q.only.size === 0) return [];
  const sql = ctx.sql;
  const rows = await ctx.db(
    "listing workspaces",
    () =>
      sql<{ workspace: string; top: number; sub: number }[]>`
      SELECT workspace,
        (count(*) FILTER (WHERE parent_session_id = ''))::int AS top,
        (count(*) FILTER (WHERE parent_session_id <> ''))::int AS sub
      FROM sessiond_sessions
      WHERE workspace COLLATE "C" > ${q.after}
      ${q.only === undefined ? sql`` : sql`AND workspace IN ${sql([...q.only])}`}
      GROUP BY workspace
      ORDER BY workspace COLLATE "C"
      LIMIT ${q.limit}`,
  );
  return rows.map((r) => ({ name: r.workspace, sessionCount: r.top, subagentCount: r.sub }));
}
