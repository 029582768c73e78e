import type postgres from "postgres";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { decodeEntry } from "../../core/codec/entry-from-json.js";
import { entryJson } from "../../core/codec/entry-to-json.js";
import { dataLoss, invalidArgument, isSessiondError } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { applyTagChanges, type Tags } from "../../core/tags.js";
import type { RootRecord, SessionKey, SessionRecord } from "../engine.js";
import { rootRecordOfEntry } from "../session-record.js";
import type { Q } from "./context.js";
import { erasedMarkOf, type Keying, openPayload } from "./sealing.js";
import type { StoredPayloads } from "./search-bloom.js";

/**
 * Row <-> entry mapping. An entry is stored as its canonical proto JSON
 * (byte for byte the JSONL engine's payload, so both engines fold the same
 * data and `sessiond copy` moves payloads unchanged), next to the few
 * columns queries need (id, parent_id, kind). Reading decodes with the
 * JSONL engine's decoder for the same reason.
 */

/** One row of sessiond_entries as written. */
/** An entry's row as the inserts' JSON carries it (json_to_recordset's x.q, x.i, ...). */
export interface EntryRow {
  q: number;
  i: string;
  p: string | null;
  k: string | null;
  j: string;
  /** The search Bloom filter (search-bloom.ts), as bytea text. */
  b: string | null;
}

/**
 * Decodes a stored payload; DATA_LOSS naming the row when it is not a valid
 * entry. A sealed payload is opened with `keying` (sealing.ts: DATA_LOSS
 * when it does not open, FAILED_PRECONDITION without a key); an erased
 * session's reads as its kind emptied, with the erasure's marker.
 */
export function decodePayload(
  k: SessionKey,
  seq: number,
  payload: string,
  keying?: Keying,
  /** The payload's canonical JSON when the caller opened it already (openPayload). */
  opened?: string,
): Entry {
  try {
    const entry = decodeEntry(JSON.parse(opened ?? openPayload(k, seq, payload, keying)), {
      ignoreUnknownFields: true,
    });
    const erased = erasedMarkOf(payload, keying);
    if (erased !== undefined && entry.withheld === undefined) entry.withheld = erased;
    return entry;
  } catch (err) {
    if (isSessiondError(err)) throw err;
    throw dataLoss(
      `session ${quote(k.sessionId)} in workspace ${quote(k.workspace)} is corrupt at seq ${seq}: payload is not a valid entry (${err instanceof Error ? err.message : String(err)})`,
      err,
    );
  }
}

/** The payload of an entry; INVALID_ARGUMENT when protobuf cannot write it as JSON. */
export function jsonOf(e: Entry): string {
  try {
    return entryJson(e);
  } catch (err) {
    throw invalidArgument(
      `entry ${quote(e.id)} cannot be stored: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** The rows of `entries[start, end)` with their payloads and search filters (same order). */
export function entryRows(
  entries: readonly Entry[],
  stored: StoredPayloads,
  start = 0,
  end = entries.length,
): EntryRow[] {
  const rows: EntryRow[] = [];
  for (let i = start; i < end; i++) {
    const e = entries[i] as Entry;
    rows.push({
      q: Number(e.seq),
      i: e.id,
      p: e.parentId ?? null,
      k: e.kind.case ?? null,
      j: stored.json[i] as string,
      b: stored.blooms[i] ?? null,
    });
  }
  return rows;
}

/**
 * Inserts `entries` (with their payloads and search filters, same order) in
 * statements of at most `chunk` rows: one statement per chunk keeps a big
 * create or import to a few round trips. The rows travel as one JSON array
 * (json_to_recordset, as appends' do): the driver runs without fetching
 * types (postgres-engine.ts), so it cannot send a parameter of an array or bit type.
 */
export async function insertEntries(
  tx: Q,
  key: SessionKey,
  entries: readonly Entry[],
  stored: StoredPayloads,
  chunk: number,
): Promise<void> {
  for (let start = 0; start < entries.length; start += chunk) {
    const rows = entryRows(entries, stored, start, Math.min(entries.length, start + chunk));
    await tx`
      INSERT INTO sessiond_entries
        (workspace, session_id, seq, id, parent_id, kind, payload, search_bloom)
      SELECT ${key.workspace}, ${key.sessionId}, x.q, x.i, x.p, x.k, x.j, x.b
      FROM json_to_recordset(${JSON.stringify(rows)}::text::json)
        AS x(q integer, i text, p text, k text, j text, b bytea)`;
  }
}

/** A session row joined with its seq-1 entry, as the root listings read it. */
export interface RootRow {
  session_id: string;
  /** bigint: the driver hands it over as a string. */
  created_at_ms: string;
  parent_session_id: string;
  payload: string;
}

/**
 * The root record of a row; a payload that does not decode gives a corrupt
 * record. The sort key (created_at_ms, parent_session_id) comes from the
 * row's columns, written from the root at create and never changed: they
 * are what the SQL page query (pageRoots) orders and filters on, so
 * `listRoots` and `pageRoots` agree even on a session whose root was
 * damaged after it was created (it keeps its place rather than moving to
 * the top level at time 0).
 */
export function rootRecordOfRow(workspace: string, r: RootRow): RootRecord {
  const createdAtMs = Number(r.created_at_ms);
  const parentSessionId = r.parent_session_id;
  try {
    const root = decodePayload({ workspace, sessionId: r.session_id }, 1, r.payload);
    return { ...rootRecordOfEntry(r.session_id, root), createdAtMs, parentSessionId };
  } catch (err) {
    return {
      sessionId: r.session_id,
      root: undefined,
      createdAtMs,
      parentSessionId,
      health: "corrupt",
      healthDetail: err instanceof Error ? err.message : String(err),
    };
  }
}

/** A session row (counters kept current by every append) joined with its seq-1 entry. */
export interface RecordRow {
  session_id: string;
  head_seq: number;
  leaf_id: string;
  message_count: number;
  title: string | null;
  /** bigint: the driver hands it over as a string. */
  updated_at_ms: string;
  payload: string;
  /**
   * The session's folded tags as JSON when the row holds them folded at its
   * head (migration 7), else null (tagColumns).
   */
  folded_tags: string | null;
  /**
   * When the tags are not folded at the head: the payloads of the
   * SessionInfo entries after the root, in seq order, as a JSON array
   * (tagColumns); else null.
   */
  info_payloads: string | null;
}

/**
 * A row of the page queries (listing.ts): the root and the session's
 * listing record, from one snapshot, and the incarnation of the session
 * (changed only by a delete and create under the same id) that the root
 * belongs to. Payload null: not read, because the reader held the root of
 * that incarnation already (RowRecords).
 */
export type PageRow = Omit<RootRow & RecordRow, "payload"> & {
  /** bigint: the driver hands it over as a string. */
  incarnation: string;
  payload: string | null;
};

/**
 * The listing record of a row: no entry but the root is read. `decoded`:
 * the root as already decoded from this row's payload (or the error that
 * decoding gave), so that the page query decodes each root once.
 */
export function sessionRecordOfRow(
  workspace: string,
  r: Omit<RecordRow, "payload"> & { payload: string | null },
  decoded?: Entry | Error,
): SessionRecord {
  let root: Entry | undefined;
  let healthDetail = "";
  if (decoded instanceof Error) healthDetail = decoded.message;
  else if (decoded !== undefined) root = decoded;
  else {
    try {
      root = decodePayload({ workspace, sessionId: r.session_id }, 1, r.payload ?? "");
    } catch (err) {
      healthDetail = err instanceof Error ? err.message : String(err);
    }
  }
  return {
    workspace,
    sessionId: r.session_id,
    root,
    title: r.title ?? undefined,
    tags: root === undefined ? {} : tagsOf(workspace, r, root),
    headSeq: r.head_seq,
    leafId: r.leaf_id,
    messageCount: r.message_count,
    updatedAtMs: Number(r.updated_at_ms),
    health: root === undefined ? "corrupt" : "ok",
    healthDetail,
  };
}

/**
 * The tag columns of a record row (`s`: the sessions table): the folded
 * tags where the row holds them at its head (written by every append since
 * migration 7), else the SessionInfo payloads to fold here (a row from
 * before the migration, or written by an older replica): a listing of 200
 * sessions then reads 200 small values rather than every entry of each.
 */
export function tagColumns(sql: postgres.Sql): postgres.PendingQuery<postgres.Row[]> {
  return sql`CASE WHEN s.tags_head = s.head_seq THEN s.tags::text END AS folded_tags,
    CASE WHEN s.tags_head IS DISTINCT FROM s.head_seq THEN
      (SELECT json_agg(i.payload ORDER BY i.seq)::text FROM sessiond_entries i
        WHERE i.workspace = s.workspace AND i.session_id = s.session_id
          AND i.kind = 'sessionInfo' AND i.seq > 1)
    END AS info_payloads`;
}

/**
 * The tags of a record row: the folded column, or the root's with the
 * later SessionInfo entries' changes (core/tags.ts). An entry that does not decode leaves the tags of
 * the entries before it (the session's log read whole says DATA_LOSS).
 */
function tagsOf(workspace: string, r: Omit<RecordRow, "payload">, root: Entry): Tags {
  // JSON text of the jsonb column this code writes (a string map).
  if (r.folded_tags !== null) return JSON.parse(r.folded_tags) as Tags;
  const k = root.kind;
  let tags: Tags = k.case === "sessionInfo" ? k.value.tags : {};
  // JSON text, parsed here: the connection parses no array types (fetch_types off).
  const payloads = r.info_payloads === null ? [] : (JSON.parse(r.info_payloads) as string[]);
  for (const payload of payloads) {
    try {
      const e = decodePayload({ workspace, sessionId: r.session_id }, 0, payload);
      if (e.kind.case === "sessionInfo") tags = applyTagChanges(tags, e.kind.value.tags);
    } catch {
      break;
    }
  }
  return tags;
}
