import type { SessionKey } from "../engine.js";
import {
  checkOf,
  checkpointEntry,
  type SealedSegment,
  SegmentPacker,
  setCheck,
} from "../seal/checkpoint-segments.js";
import { SEALED_KINDS, type SessionSealer, sealedTextBounds } from "../seal/sealed-payload.js";
import { fromBase64Bytes } from "./base64-bytes.js";
import type { PgContext, Q } from "./context.js";

/**
 * The checkpoint of a sealed session on PostgreSQL: the JSONL engine's
 * (jsonl/checkpoint.ts), its segments (seal/checkpoint-segments.ts) in
 * rows of sessiond_checkpoints (migration 18) instead of a file, so that
 * a cold read opens a few large sealed segments instead of every row.
 *
 * Rows stay the truth: a row's opened JSON is taken from the checkpoint
 * only when the row is the very one the entry was made of. The entry's
 * check (seal/checkpoint-segments.ts) is the row version it was made
 * from: the row's xmin, the transaction that wrote that version of the
 * row, which every UPDATE (and a DELETE and INSERT again, a dump and
 * restore) changes. So a cold read gets each covered row short, its seq
 * and xmin only (no payload, ~10 bytes), and takes the entry when the
 * xmins agree. A row whose xmin differs (appended since, rewritten, moved
 * from another entry or session, a restored database) is read whole and
 * compared byte for byte with the entry (the same clear part, base64
 * length, nonce and tag): the same row bytes under a new version are
 * taken and the entry restamped with it in the next checkpoint; any other
 * row is opened as before, and a moved payload still fails to open
 * (DATA_LOSS). A checkpoint of schema 18 before row versions (check 0,
 * never an xmin) is read that way once and written again.
 * Segments are sealed under the session's data key and bound to
 * (workspace, session, first seq, last seq): one copied from another
 * session, or altered, does not open and is skipped. No clear content.
 *
 * Written after a cold read that opened at least `checkpointAfter` sealed
 * rows one by one (the texts are at hand then: no row is opened again),
 * off the read's path, in a transaction that holds the session row FOR
 * KEY SHARE at the incarnation the read saw: a redaction, erasure or
 * sealing (which lock the row FOR UPDATE, give a new incarnation and
 * delete the checkpoint in their own transaction) either waits for it and
 * then deletes it, or has committed and the write finds another
 * incarnation and writes nothing. Optimistic appends (an UPDATE of the
 * row: FOR NO KEY UPDATE) do not wait for it; a locked append (FOR
 * UPDATE) waits for its INSERT. Deleted with the session (foreign key).
 */

/** A row of sessiond_checkpoints as read. */
export interface SegmentRow {
  first_seq: number;
  last_seq: number;
  /** The sealed segment (stored as base64 text: schema.ts, migration 18). */
  segment: Buffer;
}

/**
 * A sealed row of a cold read, for the next checkpoint: its row version
 * (xmin) and its entry as the checkpoint held it, or the row and its text
 * as opened.
 */
export type KeptRow =
  | { readonly seq: number; readonly version: string; readonly entry: Buffer }
  | {
      readonly seq: number;
      readonly version: string;
      readonly payload: string;
      readonly text: string;
    };

/** The session's checkpoint segments, in seq order (none: an empty list). */
export async function readCheckpoint(ctx: PgContext, key: SessionKey): Promise<SegmentRow[]> {
  // Raw: the columns' bytes, not strings (base64-bytes.ts says why).
  const rows = await ctx.db("reading a checkpoint", () =>
    ctx.sql`
      SELECT first_seq, last_seq, segment FROM sessiond_checkpoints
      WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
      ORDER BY first_seq`.raw(),
  );
  return rows.map(([first, last, segment]) => ({
    first_seq: Number((first as Buffer).toString("latin1")),
    last_seq: Number((last as Buffer).toString("latin1")),
    segment: fromBase64Bytes(segment as Buffer),
  }));
}

/** Deletes the session's checkpoint in `tx`: with every rewrite of its sealed payloads or key. */
export async function dropCheckpoint(tx: Q, key: SessionKey): Promise<void> {
  await tx`
    DELETE FROM sessiond_checkpoints
    WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`;
}

/** The kinds whose rows a checkpoint may hold. */
const KINDS = [...SEALED_KINDS];

/**
 * The cold read's join of the last seq the session's checkpoint covers
 * (`ck.covered`, NULL: none), on the session row `s`.
 */
export function coveredJoin(ctx: PgContext) {
  return ctx.sql`LEFT JOIN LATERAL (
      SELECT max(c.last_seq) AS covered FROM sessiond_checkpoints c
      WHERE c.workspace = s.workspace AND c.session_id = s.session_id) ck ON true`;
}

/**
 * The cold read's payload column, after `coveredJoin` and the entries `e`:
 * NULL for a row of a sealed kind that the checkpoint may hold (a short
 * row: its version, `rowVersion`, is what a reader compares with the
 * checkpoint's entry). A short row moves ~10 bytes instead of ~1 KB; its
 * first 256 characters and last 27 bytes, as compared before row
 * versions, cost a sealed read ~30 ms of 10,000 rows more than a clear one.
 */
export function shortPayload(ctx: PgContext) {
  return ctx.sql`CASE WHEN e.seq <= ck.covered AND e.kind IN ${ctx.sql(KINDS)}
    THEN NULL ELSE e.payload END AS payload`;
}

/**
 * The cold read's row version column (`version`: the xmin of each row of
 * a session with a key row `k`, for the checkpoint; NULL on a clear
 * session's, which never has one).
 */
export function rowVersion(ctx: PgContext) {
  return ctx.sql`CASE WHEN k.session_id IS NOT NULL THEN e.xmin END AS version`;
}

/**
 * The payloads and versions of rows `seqs` of the session, read again
 * whole (short rows the checkpoint did not hold at their version), while its incarnation is still
 * `incarnation`: undefined when it is not (rewritten since the first read).
 */
export async function wholeRows(
  ctx: PgContext,
  key: SessionKey,
  incarnation: string,
  seqs: readonly number[],
): Promise<Map<number, WholeRow> | undefined> {
  const rows = await ctx.db(
    "reading rows again",
    () => ctx.sql<{ seq: number | null; payload: string | null; version: string | null }[]>`
      SELECT e.seq, e.payload, e.xmin AS version FROM sessiond_sessions s
      LEFT JOIN sessiond_entries e
        ON e.workspace = s.workspace AND e.session_id = s.session_id
          AND e.seq IN (SELECT v::int FROM json_array_elements_text(${JSON.stringify(seqs)}::text::json) AS v)
      WHERE s.workspace = ${key.workspace} AND s.session_id = ${key.sessionId}
        AND s.incarnation = ${incarnation}::bigint`,
  );
  if (rows.length === 0) return undefined;
  const out = new Map<number, WholeRow>();
  for (const r of rows) {
    if (r.seq !== null && r.payload !== null && r.version !== null) {
      out.set(r.seq, { payload: r.payload, version: r.version });
    }
  }
  return out;
}

/** A row read again whole: its payload and version (xmin). */
export interface WholeRow {
  payload: string;
  version: string;
}

/** Sealed rows between two turns of the event loop while a checkpoint is built. */
const YIELD_EVERY = 256;

/**
 * Writes the checkpoint of `rows` (every sealed row of the session, seq
 * order) after the current turn of the event loop, in the background: `ctx.db` keeps it in the engine's calls in flight (close
 * waits for it). A failure (a concurrent write of the same checkpoint,
 * the database gone) leaves the previous one, or none: a checkpoint is
 * only a faster read.
 */
export function writeCheckpointLater(
  ctx: PgContext,
  key: SessionKey,
  incarnation: string,
  sealer: SessionSealer,
  rows: readonly KeptRow[],
): void {
  ctx
    .db("writing a checkpoint", async () => {
      const sealed = await checkpointSegments(sealer, rows);
      if (sealed.length === 0) return;
      const segments = sealed.map((s) => ({
        workspace: key.workspace,
        session_id: key.sessionId,
        first_seq: s.first,
        last_seq: s.last,
        segment: s.sealed.toString("base64"),
      }));
      await ctx.sql.begin(async (tx) => {
        const [same] = await tx`
          SELECT 1 FROM sessiond_sessions
          WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
            AND incarnation = ${incarnation}::bigint
          FOR KEY SHARE`;
        // Rewritten (redaction, erasure, sealing) or deleted since the read.
        if (same === undefined) return;
        await dropCheckpoint(tx, key);
        await tx`INSERT INTO sessiond_checkpoints ${tx(segments, "workspace", "session_id", "first_seq", "last_seq", "segment")}`;
      });
    })
    .catch(() => undefined);
}

/**
 * The sealed segments of a checkpoint of `rows` (every sealed row of the
 * session, seq order), each entry stamped with its row's version; yields
 * to the event loop every YIELD_EVERY rows.
 */
export async function checkpointSegments(
  sealer: SessionSealer,
  rows: readonly KeptRow[],
): Promise<SealedSegment[]> {
  const packer = new SegmentPacker(sealer);
  for (let i = 0; i < rows.length; i++) {
    if (i % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r));
    const r = rows[i] as KeptRow;
    const entry =
      "entry" in r ? stamped(r.entry, r.version) : entryOf(r.seq, r.version, r.payload, r.text);
    if (entry !== undefined) packer.add(r.seq, entry);
  }
  packer.flush();
  return packer.segments;
}

/** A checkpoint entry with row version `version` as its check (a copy when it had another). */
function stamped(entry: Buffer, version: string): Buffer {
  const v = Number(version);
  if (checkOf(entry, 0) === v) return entry;
  const out = Buffer.from(entry);
  setCheck(out, 0, v);
  return out;
}

/** The checkpoint entry of an opened sealed row (undefined: not one the readers could match). */
function entryOf(seq: number, version: string, payload: string, text: string): Buffer | undefined {
  const b = sealedTextBounds(payload);
  if (b === undefined) return undefined;
  const head = payload.slice(0, b.valueStart);
  if (!text.startsWith(head)) return undefined;
  const stored = Buffer.from(payload.slice(b.sealedStart, b.sealedEnd), "latin1");
  const sealed = {
    stored,
    sealedStart: 0,
    sealedEnd: stored.length,
    prefix: Buffer.byteLength(head),
  };
  return checkpointEntry(seq, Number(version), sealed, Buffer.from(text));
}
