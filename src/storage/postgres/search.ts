import type postgres from "postgres";
import type { Candidate, CandidateQuery, RootRecord } from "../engine.js";
import type { PgContext } from "./context.js";
import { decodePayload, type RootRow, rootRecordOfRow } from "./rows.js";

/** A candidate row: its session's root row and the entry's own seq and payload. */
interface CandidateRow extends RootRow {
  seq: number;
  entry_payload: string;
}

/** A needle as a LIKE pattern that holds it anywhere: its % and _ taken literally. */
export function likePattern(needle: string): string {
  return `%${needle.replace(/[%_\\]/g, "\\$&")}%`;
}

/**
 * The query of `searchCandidates`, not yet run (the tests EXPLAIN it). The
 * needles, ILIKE'd against the payload (the canonical proto JSON), are what
 * the trigram index of migration 5 answers, restricted to message entries
 * (its WHERE); the rest filters and orders the few rows it finds. The
 * order and the keyset are the search's: sessions by (created_at_ms,
 * session_id COLLATE "C") ascending or descending, each session's entries
 * by seq ascending, and a position is a session plus the seq after which
 * its entries go on.
 */
export function candidatesQuery(
  sql: postgres.Sql,
  workspace: string,
  q: CandidateQuery,
): postgres.PendingQuery<CandidateRow[]> {
  const desc = q.order === "desc";
  const key = sql`(s.created_at_ms, s.session_id COLLATE "C")`;
  const after =
    q.after === undefined
      ? sql``
      : sql`AND (${key} ${desc ? sql`<` : sql`>`} (${q.after.createdMs}::bigint, ${q.after.id}::text)
          OR (s.created_at_ms = ${q.after.createdMs}::bigint AND s.session_id = ${q.after.id}
            AND e.seq > ${q.after.seq}))`;
  const order = desc
    ? sql`s.created_at_ms DESC, s.session_id COLLATE "C" DESC`
    : sql`s.created_at_ms ASC, s.session_id COLLATE "C" ASC`;
  let needles = sql``;
  for (const n of q.needles) needles = sql`${needles} AND e.payload ILIKE ${likePattern(n)}`;
  return sql<CandidateRow[]>`
    SELECT s.session_id, s.created_at_ms, s.parent_session_id, r.payload,
      e.seq, e.payload AS entry_payload
    FROM sessiond_entries e
    JOIN sessiond_sessions s ON s.workspace = e.workspace AND s.session_id = e.session_id
    JOIN sessiond_entries r
      ON r.workspace = s.workspace AND r.session_id = s.session_id AND r.seq = 1
    WHERE e.workspace = ${workspace} AND e.kind = 'message'
      AND s.parent_session_id = ${q.parentSessionId}
      ${needles}
      ${after}
    ORDER BY ${order}, e.seq ASC
    LIMIT ${q.limit}`;
}

/**
 * The candidates of a text search in one indexed query. A session's root
 * is decoded once per call however many of its entries are candidates; an
 * entry whose payload does not decode comes back without its entry (the
 * store reports the session as damaged).
 */
export async function searchCandidates(
  ctx: PgContext,
  workspace: string,
  q: CandidateQuery,
): Promise<Candidate[]> {
  const rows = await ctx.db("searching entries", () => candidatesQuery(ctx.sql, workspace, q));
  const roots = new Map<string, RootRecord>();
  return rows.map((r) => {
    let root = roots.get(r.session_id);
    if (root === undefined) {
      root = rootRecordOfRow(workspace, r);
      roots.set(r.session_id, root);
    }
    let entry: Candidate["entry"];
    try {
      entry = decodePayload({ workspace, sessionId: r.session_id }, r.seq, r.entry_payload);
    } catch {
      entry = undefined;
    }
    return { root, seq: r.seq, entry };
  });
}
