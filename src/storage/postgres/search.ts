import type postgres from "postgres";
import type { Candidate, CandidateQuery, RootRecord } from "../engine.js";
import type { PgContext } from "./context.js";
import { decodePayload, type RootRow, rootRecordOfRow } from "./rows.js";
import type { KeyColumns, Keying } from "./sealing.js";

/** A candidate row: its session's root row, the entry's own seq and payload, its key row. */
interface CandidateRow extends RootRow, KeyColumns {
  seq: number;
  entry_payload: string;
}

/** What every sealed payload holds (sealing.ts): the trigram index finds these too. */
const SEALED_PATTERN = '%{"@sealed":"%';

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
  /** Sealed sessions can be opened: their sealed messages are candidates too (searchCandidates). */
  sealed = false,
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
  let needles = sql`TRUE`;
  for (const n of q.needles) needles = sql`${needles} AND e.payload ILIKE ${likePattern(n)}`;
  const match = sealed ? sql`((${needles}) OR e.payload LIKE ${SEALED_PATTERN})` : needles;
  const keys = sealed
    ? sql`k.key_id, k.key_version, k.wrapped, k.erased`
    : sql`NULL AS key_id, NULL AS key_version, NULL AS wrapped, NULL AS erased`;
  const keyJoin = sealed
    ? sql`LEFT JOIN sessiond_session_keys k
        ON k.workspace = s.workspace AND k.session_id = s.session_id`
    : sql``;
  return sql<CandidateRow[]>`
    SELECT s.session_id, s.created_at_ms, s.parent_session_id, r.payload,
      e.seq, e.payload AS entry_payload, ${keys}
    FROM sessiond_entries e
    JOIN sessiond_sessions s ON s.workspace = e.workspace AND s.session_id = e.session_id
    JOIN sessiond_entries r
      ON r.workspace = s.workspace AND r.session_id = s.session_id AND r.seq = 1
    ${keyJoin}
    WHERE e.workspace = ${workspace} AND e.kind = 'message'
      AND s.parent_session_id = ${q.parentSessionId}
      AND ${match}
      ${after}
    ORDER BY ${order}, e.seq ASC
    LIMIT ${q.limit}`;
}

/**
 * The candidates of a text search in one indexed query. A session's root
 * is decoded once per call however many of its entries are candidates; an
 * entry whose payload does not decode comes back without its entry (the
 * store reports the session as damaged).
 *
 * Sealed sessions (sealing.ts): PostgreSQL cannot look into ciphertext, so
 * with a key provider configured every sealed message of the searched
 * sessions is a candidate (the index finds them by their `{"@sealed":`
 * mark), opened here with its session's data key: the search decrypts as
 * it scans, a batch (`limit` rows) per query, and the store checks the
 * words on the opened entries. An erased session's are candidates that
 * hold nothing. Without a key provider sealed content is not searched.
 */
export async function searchCandidates(
  ctx: PgContext,
  workspace: string,
  q: CandidateQuery,
): Promise<Candidate[]> {
  const sealed = ctx.keys.encrypts;
  const rows = await ctx.db("searching entries", () =>
    candidatesQuery(ctx.sql, workspace, q, sealed),
  );
  const roots = new Map<string, RootRecord>();
  const keyings = new Map<string, Keying | Error>();
  const out: Candidate[] = [];
  for (const r of rows) {
    let root = roots.get(r.session_id);
    if (root === undefined) {
      root = rootRecordOfRow(workspace, r);
      roots.set(r.session_id, root);
    }
    const key = { workspace, sessionId: r.session_id };
    let keying: Keying | undefined;
    if (sealed && r.entry_payload.endsWith('"}}')) {
      let got = keyings.get(r.session_id);
      if (got === undefined) {
        got = await ctx.keys.keyingOf(key, r).catch((err: Error) => err);
        keyings.set(r.session_id, got);
      }
      // Not openable (no such key version, another keyring): the search fails as reads do.
      if (got instanceof Error) throw got;
      keying = got;
    }
    let entry: Candidate["entry"];
    try {
      entry = decodePayload(key, r.seq, r.entry_payload, keying);
    } catch {
      entry = undefined;
    }
    out.push({ root, seq: r.seq, entry });
  }
  return out;
}
