import type postgres from "postgres";
import type { Candidate, CandidateQuery, RootRecord } from "../engine.js";
import type { SessionSealer } from "../seal/sealed-payload.js";
import { BloomCache, type BloomRow, type SessionBlooms } from "./bloom-cache.js";
import type { PgContext } from "./context.js";
import { decodePayload, type RootRow, rootRecordOfRow } from "./rows.js";
import { type KeyColumns, type Keying, openPayload } from "./sealing.js";
import { needleBits, needlesCodes } from "./search-bloom.js";

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
  /** Its session's root row, when the query that read it brought it along. */
  root?: RootRow;
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

/** A sealed session in the search's order, with its key row, incarnation and head. */
interface SealedSessionRow extends KeyColumns {
  session_id: string;
  created_at_ms: string;
  /** bigint: the driver hands it over as a string. */
  incarnation: string;
  head_seq: number;
}

/**
 * The sealed sessions (with a key: erased ones hold nothing) from the one
 * of `q.after` on, that one included, in the search's order: the sessions
 * whose filters a filtered search asks for next.
 */
function sealedSessionsQuery(
  sql: postgres.Sql,
  workspace: string,
  q: CandidateQuery,
  count: number,
) {
  const desc = q.order === "desc";
  const from =
    q.after === undefined
      ? sql``
      : sql`AND (s.created_at_ms, s.session_id COLLATE "C") ${desc ? sql`<=` : sql`>=`}
          (${q.after.createdMs}::bigint, ${q.after.id}::text)`;
  return sql<SealedSessionRow[]>`
    SELECT s.session_id, s.created_at_ms, s.incarnation, s.head_seq,
      k.key_id, k.key_version, k.wrapped, k.erased
    FROM sessiond_sessions s
    JOIN sessiond_session_keys k
      ON k.workspace = s.workspace AND k.session_id = s.session_id AND k.wrapped IS NOT NULL
    WHERE s.workspace = ${workspace} AND s.parent_session_id = ${q.parentSessionId}
      ${from}
    ORDER BY ${keyset(sql, q).order}
    LIMIT ${count}`;
}

/**
 * The search filters (search-bloom.ts) of the sealed messages of some
 * sessions, each session's rows after `a` up to its head `h`, by session
 * (`ord`: its place in `ranges`, from 1) and seq: from the narrow covering
 * index of migration 17, and the rows without a filter (written before it:
 * `bloom` null) from its other index.
 */
function bloomRowsQuery(
  sql: postgres.Sql,
  workspace: string,
  ranges: readonly { s: string; a: number; h: number }[],
) {
  return sql<{ ord: string; seq: number; bloom: Buffer | null }[]>`
    SELECT q.ordinality AS ord, f.seq, f.bloom
    FROM ROWS FROM (json_to_recordset(${JSON.stringify(ranges)}::text::json)
        AS (s text, a integer, h integer)) WITH ORDINALITY AS q
    CROSS JOIN LATERAL (
      SELECT t.seq, t.search_bloom AS bloom FROM sessiond_entries t
      WHERE t.workspace = ${workspace} AND t.session_id = q.s AND t.seq > q.a AND t.seq <= q.h
        AND t.search_bloom IS NOT NULL
      UNION ALL
      SELECT u.seq, NULL FROM sessiond_entries u
      WHERE u.workspace = ${workspace} AND u.session_id = q.s AND u.seq > q.a AND u.seq <= q.h
        AND u.kind = 'message' AND u.search_bloom IS NULL
        AND u.payload ~ '[{]"@sealed":"[^"]*"[}][}]$'
    ) f
    ORDER BY q.ordinality, f.seq`;
}

/**
 * The payloads of some entries, each with its session's root payload (one
 * round trip for both): `ord` is a row's place in `rows`, from 1; a row
 * gone is left out.
 */
function payloadsQuery(
  sql: postgres.Sql,
  workspace: string,
  rows: readonly { s: string; q: number }[],
) {
  return sql<{ ord: string; entry_payload: string; root_payload: string }[]>`
    SELECT w.ordinality AS ord, e.payload AS entry_payload, r.payload AS root_payload
    FROM ROWS FROM (json_to_recordset(${JSON.stringify(rows)}::text::json)
        AS (s text, q integer)) WITH ORDINALITY AS w
    JOIN sessiond_entries e ON e.workspace = ${workspace} AND e.session_id = w.s AND e.seq = w.q
    JOIN sessiond_entries r ON r.workspace = ${workspace} AND r.session_id = w.s AND r.seq = 1
    ORDER BY w.ordinality`;
}

/**
 * Whether the searched sessions include one in clear (no key row): only
 * those hold clear messages (a sealed session's messages are sealed from
 * its creation or its `sessiond seal`, both with its key row).
 */
function anyClearQuery(sql: postgres.Sql, workspace: string, q: CandidateQuery) {
  return sql<{ any: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM sessiond_sessions s
      WHERE s.workspace = ${workspace} AND s.parent_session_id = ${q.parentSessionId}
        AND NOT EXISTS (
          SELECT 1 FROM sessiond_session_keys k
          WHERE k.workspace = s.workspace AND k.session_id = s.session_id)
    ) AS any`;
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
 * with a key provider configured the sealed messages of the searched
 * sessions that may hold the needles are read in the search's order and
 * opened here with their session's data key: those whose search filter
 * (search-bloom.ts) has the needles' bits, tested here while the clear
 * query runs; every sealed message when no needle has three characters
 * (then after the clear query, so as to stop at the last clear candidate
 * of a full clear batch). One whose opened JSON lacks a needle (ASCII case
 * ignored: the rule the clear query's ILIKE and the JSONL scan apply, see
 * EntryScan.needles) cannot be a hit and is not a candidate, so only the
 * rest is decoded and handed to the store, which checks the words. The
 * sealed scan goes on until it holds `limit` candidates or runs out of
 * sealed messages. The two lists are merged in the search's order and cut
 * at `limit`: fewer than `limit` then means both are exhausted, as the
 * store expects. Erased sessions are not searched. Without a key provider
 * sealed content is not searched.
 */
export async function searchCandidates(
  ctx: PgContext,
  workspace: string,
  q: CandidateQuery,
): Promise<Candidate[]> {
  const desc = q.order === "desc";
  const clear = () => ctx.db("searching entries", () => candidatesQuery(ctx.sql, workspace, q));
  let rows: Opened[];
  if (!ctx.keys.encrypts) {
    rows = (await clear()).map((r) => ({ r, keying: undefined, opened: undefined }));
  } else if (filtered(q)) {
    // The sealed scan tests its filters while the clear query runs (another
    // connection): a sealed row past a full clear batch is cut below. The
    // clear query only where there are sessions in clear: in a workspace
    // sealed from the start it would walk the trigram index for nothing.
    const [clearRows, sealed] = await Promise.all([
      ctx
        .db("searching entries", () => anyClearQuery(ctx.sql, workspace, q))
        .then(async ([r]): Promise<readonly CandidateRow[]> => (r?.any === true ? clear() : [])),
      sealedMatches(ctx, workspace, q, undefined),
    ]);
    rows = [...clearRows.map((r) => ({ r, keying: undefined, opened: undefined })), ...sealed];
  } else {
    const clearRows = await clear();
    // Opening every sealed message: a full clear batch ends where the store
    // goes on next time, so no sealed row past it is opened.
    const last = clearRows.length === q.limit ? clearRows[clearRows.length - 1] : undefined;
    const sealed = await sealedMatches(ctx, workspace, q, last);
    rows = [...clearRows.map((r) => ({ r, keying: undefined, opened: undefined })), ...sealed];
  }
  if (ctx.keys.encrypts) {
    rows = rows.sort((a, b) => compareRows(a.r, b.r, desc)).slice(0, q.limit);
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

/** A sealed row kept as a candidate: with its keying, and its opened JSON when it opened. */
interface Kept {
  r: SealedRow;
  keying: Keying;
  opened: string | undefined;
}

/** Where a sealed scan is: its query's position, and whether it keeps looking. */
interface SealedScan {
  readonly q: CandidateQuery;
  readonly workspace: string;
  /**
   * The last clear candidate of a full clear batch: no sealed row past it
   * is kept (the opening scan's; the filtered scan runs beside the clear
   * query, without it).
   */
  readonly last: Place | undefined;
  readonly kept: Kept[];
}

/**
 * Opens a sealed row and keeps it when its opened JSON holds every needle
 * (or when it does not open: damage, which the store reports). False when
 * the scan is done: past `last`, or `limit` rows kept.
 */
function consider(scan: SealedScan, r: SealedRow, keying: Keying): boolean {
  const { q, last, kept } = scan;
  if (last !== undefined && compareRows(r, last, q.order === "desc") > 0) return false;
  let opened: string;
  try {
    opened = openPayload(
      { workspace: scan.workspace, sessionId: r.session_id },
      r.seq,
      r.entry_payload,
      keying,
    );
  } catch {
    // Does not open: a candidate without its entry (the session is damaged there).
    kept.push({ r, keying, opened: undefined });
    return kept.length < q.limit;
  }
  const lower = opened.toLowerCase();
  if (!q.needles.every((n) => lower.includes(n))) return true;
  kept.push({ r, keying, opened });
  return kept.length < q.limit;
}

/**
 * The sealed messages after `q.after` (in the search's order) whose opened
 * JSON holds every needle, and those that do not open (damage, which the
 * store reports): at most `q.limit`, none past `last`, each with its
 * session's root. A session deleted while the search runs (no key row or
 * root any more) is left out. With a needle of three characters or more
 * the search filters rule most rows out unopened (`filteredScan`); else every
 * sealed message is opened (`openingScan`).
 */
async function sealedMatches(
  ctx: PgContext,
  workspace: string,
  q: CandidateQuery,
  last: Place | undefined,
): Promise<Opened[]> {
  const scan: SealedScan = { q, workspace, last, kept: [] };
  if (filtered(q)) await filteredScan(ctx, scan);
  else await openingScan(ctx, scan);
  const { kept } = scan;
  if (kept.length === 0) return [];
  // The roots the rows did not come with (the opening scan's).
  const ids = [...new Set(kept.filter((k) => k.r.root === undefined).map((k) => k.r.session_id))];
  const roots = new Map(
    ids.length === 0
      ? []
      : (await ctx.db("reading search roots", () => rootRowsQuery(ctx.sql, workspace, ids))).map(
          (r) => [r.session_id, r],
        ),
  );
  const out: Opened[] = [];
  for (const { r, keying, opened } of kept) {
    const root = r.root ?? roots.get(r.session_id);
    if (root !== undefined) out.push({ r: { ...root, ...r }, keying, opened });
  }
  return out;
}

/** Every sealed message in the search's order, `SEALED_BATCH` a query, each opened. */
async function openingScan(ctx: PgContext, scan: SealedScan): Promise<void> {
  const { q, workspace } = scan;
  const keyings = new Map<string, Keying | undefined>();
  let after = q.after;
  for (;;) {
    const batch = { ...q, after, limit: SEALED_BATCH };
    const rows = await ctx.db("searching sealed entries", () =>
      sealedCandidatesQuery(ctx.sql, workspace, batch),
    );
    await keyingsOf(ctx, workspace, rows, keyings);
    for (const r of rows) {
      const keying = keyings.get(r.session_id);
      if (keying !== undefined && !consider(scan, r, keying)) return;
    }
    const end = rows[rows.length - 1];
    if (rows.length < SEALED_BATCH || end === undefined) return;
    after = { createdMs: Number(end.created_at_ms), id: end.session_id, seq: end.seq };
  }
}

/** True when the search filters can rule sealed rows out: a needle has three characters. */
function filtered(q: CandidateQuery): boolean {
  return q.needles.some((n) => n.length >= 3);
}

/**
 * Sealed sessions whose filters one query asks for, so that a workspace of
 * up to that many sealed sessions is searched in two round trips (its
 * sessions, then the candidates' payloads). Each round trip costs more than
 * it carries on a loaded box (measured with 530 sealed sessions: 256 a
 * query made three pairs of queries and the search 1.74-1.77 x the clear
 * one; 1024, one pair and 1.52-1.62 x).
 */
export const FILTERED_SESSIONS = 1024;
/** A seq after every entry of a session: a position past the whole session. */
const PAST_SESSION = 2 ** 31 - 1;

/**
 * The sealed messages that may hold the needles, by their search filters
 * (search-bloom.ts): `FILTERED_SESSIONS` sealed sessions at a time in the
 * search's order, each session's filters tested here (BloomCache: read
 * once per incarnation, then only the rows appended since), and the
 * payloads of the rows whose filter has every bit of the needles' under
 * the session's key read, `SEALED_BATCH` a query, in the search's order;
 * each is opened and matched as the opening scan does.
 */
async function filteredScan(ctx: PgContext, scan: SealedScan): Promise<void> {
  const { q, workspace } = scan;
  const codes = needlesCodes(q.needles) ?? new Int32Array(0);
  let after = q.after;
  for (;;) {
    const sessions = await ctx.db("searching sealed sessions", () =>
      sealedSessionsQuery(ctx.sql, workspace, { ...q, after }, FILTERED_SESSIONS),
    );
    const asked: { row: SealedSessionRow; keying: Keying; blooms: SessionBlooms | undefined }[] =
      [];
    for (const row of sessions) {
      const key = { workspace, sessionId: row.session_id };
      const keying = ctx.keys.knownKeying(key, row) ?? (await ctx.keys.keyingOf(key, row));
      if (keying.sealer === undefined) continue;
      const blooms = ctx.blooms.get(workspace, row.session_id, row.incarnation);
      asked.push({ row, keying, blooms });
    }
    // The filters of rows past what this replica holds, up to each session's head.
    const behind = asked.filter((a) => (a.blooms?.coveredSeq ?? 0) < a.row.head_seq);
    if (behind.length > 0) {
      const ranges = behind.map((a) => ({
        s: a.row.session_id,
        a: a.blooms?.coveredSeq ?? 0,
        h: a.row.head_seq,
      }));
      const rows = await ctx.db("reading search filters", () =>
        bloomRowsQuery(ctx.sql, workspace, ranges),
      );
      const byOrd = new Map<number, BloomRow[]>();
      for (const r of rows) {
        const list = byOrd.get(Number(r.ord)) ?? [];
        list.push({ seq: r.seq, bloom: r.bloom });
        byOrd.set(Number(r.ord), list);
      }
      behind.forEach((a, i) => {
        const { session_id, incarnation, head_seq } = a.row;
        const read = byOrd.get(i + 1) ?? [];
        a.blooms = ctx.blooms.extend(workspace, session_id, incarnation, a.blooms, read, head_seq);
      });
    }
    // The candidates, in the search's order.
    const wanted: { a: (typeof asked)[number]; seq: number }[] = [];
    for (const a of asked) {
      const from = after !== undefined && after.id === a.row.session_id ? after.seq : 0;
      const bits = needleBits(codes, a.keying.sealer as SessionSealer);
      const blooms = a.blooms as SessionBlooms;
      for (const seq of BloomCache.candidates(blooms, bits, from)) wanted.push({ a, seq });
    }
    for (let i = 0; i < wanted.length; i += SEALED_BATCH) {
      const part = wanted.slice(i, i + SEALED_BATCH);
      const ids = part.map((w) => ({ s: w.a.row.session_id, q: w.seq }));
      const rows = await ctx.db("searching sealed entries", () =>
        payloadsQuery(ctx.sql, workspace, ids),
      );
      for (const r of rows) {
        const w = part[Number(r.ord) - 1];
        if (w === undefined) continue;
        // Every session asked is one of the searched parent's (sealedSessionsQuery).
        const { session_id, created_at_ms } = w.a.row;
        const parent_session_id = q.parentSessionId;
        const root = { session_id, created_at_ms, parent_session_id, payload: r.root_payload };
        const row = { session_id, created_at_ms, seq: w.seq, entry_payload: r.entry_payload, root };
        if (!consider(scan, row, w.a.keying)) return;
      }
    }
    const lastSession = sessions[sessions.length - 1];
    if (sessions.length < FILTERED_SESSIONS || lastSession === undefined) return;
    after = {
      createdMs: Number(lastSession.created_at_ms),
      id: lastSession.session_id,
      seq: PAST_SESSION,
    };
  }
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
