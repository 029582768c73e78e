import type postgres from "postgres";
import type { Candidate, CandidateQuery, RootRecord } from "../engine.js";
import type { PgContext } from "./context.js";
import { decodePayload, type RootRow, rootRecordOfRow } from "./rows.js";
import { type KeyColumns, type Keying, openPayload } from "./sealing.js";

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
 * the trigram index answers, restricted to clear message entries (its
 * WHERE since migration 16, written here the same way so that the planner
 * may use it: a sealed payload is never a clear candidate;
 * sealedCandidatesQuery finds those); the rest filters and orders the few rows it finds. The
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
  const { after, order } = keyset(sql, q);
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
      AND e.payload !~ '[{]"@sealed":"[^"]*"[}][}]$'
      AND s.parent_session_id = ${q.parentSessionId}
      ${needles}
      ${after}
    ORDER BY ${order}, e.seq ASC
    LIMIT ${q.limit}`;
}

/** A sealed message in the search's order: where it is, and its payload as stored. */
interface SealedRow {
  session_id: string;
  created_at_ms: string;
  seq: number;
  entry_payload: string;
}

/**
 * The sealed half of a search (sealing.ts): PostgreSQL cannot look into
 * ciphertext, so every message of the sealed sessions (with a key: erased
 * ones hold nothing) is read, in the search's order. Driven by the
 * sessions' order (the listing index) and each session's entries by seq,
 * so a batch reads `limit` rows, not the workspace. Only where each row is
 * and its payload: the key rows and the roots are read once per session
 * (`keyRowsQuery`, `rootRowsQuery`); with them on every row a batch took
 * twice as long.
 */
export function sealedCandidatesQuery(
  sql: postgres.Sql,
  workspace: string,
  q: CandidateQuery,
): postgres.PendingQuery<SealedRow[]> {
  const { after, order } = keyset(sql, q);
  return sql<SealedRow[]>`
    SELECT s.session_id, s.created_at_ms, e.seq, e.payload AS entry_payload
    FROM sessiond_sessions s
    JOIN sessiond_session_keys k
      ON k.workspace = s.workspace AND k.session_id = s.session_id AND k.wrapped IS NOT NULL
    JOIN sessiond_entries e
      ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.kind = 'message'
    WHERE s.workspace = ${workspace} AND s.parent_session_id = ${q.parentSessionId}
      ${after}
    ORDER BY ${order}, e.seq ASC
    LIMIT ${q.limit}`;
}

/** The key rows of sessions. */
function keyRowsQuery(sql: postgres.Sql, workspace: string, ids: readonly string[]) {
  return sql<({ session_id: string } & KeyColumns)[]>`
    SELECT session_id, key_id, key_version, wrapped, erased FROM sessiond_session_keys
    WHERE workspace = ${workspace} AND session_id IN ${sql([...ids])}`;
}

/** The root rows of sessions. */
function rootRowsQuery(sql: postgres.Sql, workspace: string, ids: readonly string[]) {
  return sql<RootRow[]>`
    SELECT s.session_id, s.created_at_ms, s.parent_session_id, r.payload
    FROM sessiond_sessions s
    JOIN sessiond_entries r
      ON r.workspace = s.workspace AND r.session_id = s.session_id AND r.seq = 1
    WHERE s.workspace = ${workspace} AND s.session_id IN ${sql([...ids])}`;
}

/** The search's order and the position after which a batch goes on, as SQL. */
function keyset(sql: postgres.Sql, q: CandidateQuery) {
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
  return { after, order };
}

/** Where a row is in the search's order. */
type Place = Pick<CandidateRow, "session_id" | "created_at_ms" | "seq">;

/** -1, 0 or 1: how two candidate rows compare in the search's order. */
function compareRows(a: Place, b: Place, desc: boolean): number {
  const ms = Number(a.created_at_ms) - Number(b.created_at_ms);
  const id = a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0;
  const bySession = ms !== 0 ? Math.sign(ms) : id;
  if (bySession !== 0) return desc ? -bySession : bySession;
  return a.seq - b.seq;
}

/**
 * Sealed rows read per query while a search looks through sealed sessions:
 * each is opened and most are ruled out by the needles, so a larger batch
 * saves round trips without adding decoded entries.
 */
export const SEALED_BATCH = 1024;

/**
 * The candidates of a text search. The clear entries come from one indexed
 * query. A session's root is decoded once per call however many of its
 * entries are candidates; an entry whose payload does not decode comes back
 * without its entry (the store reports the session as damaged).
 *
 * Sealed sessions (sealing.ts): PostgreSQL cannot look into ciphertext, so
 * with a key provider configured the messages of the searched sealed
 * sessions are read in the search's order (`sealedCandidatesQuery`,
 * `SEALED_BATCH` rows a query) and opened here with their session's data
 * key; one whose opened JSON lacks a needle (ASCII case ignored: the rule
 * the clear query's ILIKE and the JSONL scan apply, see EntryScan.needles)
 * cannot be a hit and is not a candidate, so only the rest is decoded and
 * handed to the store, which checks the words. The scan goes on until it
 * holds `limit` candidates, runs out of sealed messages, or passes the last
 * clear candidate of a full clear batch (what lies beyond is cut below). The
 * two lists are merged in the search's order and cut at `limit`: fewer than
 * `limit` then means both are exhausted, as the store expects. Erased
 * sessions are not searched. Without a key provider sealed content is not
 * searched.
 */
export async function searchCandidates(
  ctx: PgContext,
  workspace: string,
  q: CandidateQuery,
): Promise<Candidate[]> {
  const desc = q.order === "desc";
  const clearRows = await ctx.db("searching entries", () => candidatesQuery(ctx.sql, workspace, q));
  let rows: Opened[] = clearRows.map((r) => ({ r, keying: undefined, opened: undefined }));
  if (ctx.keys.encrypts) {
    // A full clear batch ends where the store goes on next time: no sealed row past it is kept.
    const last = rows.length === q.limit ? rows[rows.length - 1]?.r : undefined;
    const sealed = await sealedMatches(ctx, workspace, q, last);
    rows = [...rows, ...sealed].sort((a, b) => compareRows(a.r, b.r, desc)).slice(0, q.limit);
  }
  const roots = new Map<string, RootRecord>();
  const out: Candidate[] = [];
  for (const { r, keying, opened } of rows) {
    let root = roots.get(r.session_id);
    if (root === undefined) {
      root = rootRecordOfRow(workspace, r);
      roots.set(r.session_id, root);
    }
    let entry: Candidate["entry"];
    try {
      entry = decodePayload(
        { workspace, sessionId: r.session_id },
        r.seq,
        r.entry_payload,
        keying,
        opened,
      );
    } catch {
      entry = undefined;
    }
    out.push({ root, seq: r.seq, entry });
  }
  return out;
}

/** A candidate row with its session's keying and, when sealed and opened, its canonical JSON. */
interface Opened {
  r: CandidateRow;
  keying: Keying | undefined;
  opened: string | undefined;
}

/**
 * The sealed messages after `q.after` (in the search's order) whose opened
 * JSON holds every needle, and those that do not open (damage, which the
 * store reports): at most `q.limit`, none past `last`, each with its
 * session's root. A session deleted while the search runs (no key row or
 * root any more) is left out.
 */
async function sealedMatches(
  ctx: PgContext,
  workspace: string,
  q: CandidateQuery,
  last: Place | undefined,
): Promise<Opened[]> {
  const desc = q.order === "desc";
  const keyings = new Map<string, Keying | undefined>();
  const kept: { r: SealedRow; keying: Keying; opened: string | undefined }[] = [];
  const scan = async (): Promise<void> => {
    let after = q.after;
    for (;;) {
      const batch = { ...q, after, limit: SEALED_BATCH };
      const rows = await ctx.db("searching sealed entries", () =>
        sealedCandidatesQuery(ctx.sql, workspace, batch),
      );
      await keyingsOf(ctx, workspace, rows, keyings);
      for (const r of rows) {
        if (last !== undefined && compareRows(r, last, desc) > 0) return;
        const keying = keyings.get(r.session_id);
        if (keying === undefined) continue;
        let opened: string;
        try {
          opened = openPayload(
            { workspace, sessionId: r.session_id },
            r.seq,
            r.entry_payload,
            keying,
          );
        } catch {
          // Does not open: a candidate without its entry (the session is damaged there).
          kept.push({ r, keying, opened: undefined });
          if (kept.length >= q.limit) return;
          continue;
        }
        const lower = opened.toLowerCase();
        if (!q.needles.every((n) => lower.includes(n))) continue;
        kept.push({ r, keying, opened });
        if (kept.length >= q.limit) return;
      }
      const end = rows[rows.length - 1];
      if (rows.length < SEALED_BATCH || end === undefined) return;
      after = { createdMs: Number(end.created_at_ms), id: end.session_id, seq: end.seq };
    }
  };
  await scan();
  if (kept.length === 0) return [];
  const ids = [...new Set(kept.map((k) => k.r.session_id))];
  const roots = new Map(
    (await ctx.db("reading search roots", () => rootRowsQuery(ctx.sql, workspace, ids))).map(
      (r) => [r.session_id, r],
    ),
  );
  const out: Opened[] = [];
  for (const { r, keying, opened } of kept) {
    const root = roots.get(r.session_id);
    if (root !== undefined) out.push({ r: { ...root, ...r }, keying, opened });
  }
  return out;
}

/**
 * Adds to `keyings` the keying of each session of `rows` not in it yet
 * (undefined: its key row is gone, the session with it). A key version
 * the keyring lacks, or another keyring: the search fails as reads do.
 */
async function keyingsOf(
  ctx: PgContext,
  workspace: string,
  rows: readonly SealedRow[],
  keyings: Map<string, Keying | undefined>,
): Promise<void> {
  const ids = [...new Set(rows.map((r) => r.session_id))].filter((id) => !keyings.has(id));
  if (ids.length === 0) return;
  const keyRows = await ctx.db("reading search keys", () => keyRowsQuery(ctx.sql, workspace, ids));
  const byId = new Map(keyRows.map((k) => [k.session_id, k]));
  for (const id of ids) {
    const k = byId.get(id);
    keyings.set(
      id,
      k === undefined ? undefined : await ctx.keys.keyingOf({ workspace, sessionId: id }, k),
    );
  }
}
