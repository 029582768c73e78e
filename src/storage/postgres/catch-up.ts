import { dataLoss } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { SessionLog } from "../../core/session-log.js";
import type { SessionKey } from "../engine.js";
import {
  coveredJoin,
  readCheckpoint,
  rowVersion,
  type SegmentRow,
  shortPayload,
  wholeRows,
  writeCheckpointLater,
} from "./checkpoint.js";
import { CheckpointReader, type ColdRow } from "./checkpoint-reader.js";
import { missing, type PgContext, type Q } from "./context.js";
import { decodePayload } from "./rows.js";
import type { KeyColumns } from "./sealing.js";
import { type Cached, cacheKey } from "./session-cache.js";

/**
 * Catch-up: bringing a replica's cached log up to what is stored. Other
 * replicas append to the same sessions, so a cached log is never trusted
 * as is: every use reads the stored head and the rows past the cached one.
 * A session deleted and created again elsewhere has a new incarnation; its
 * cached log is then dropped and read again from seq 1.
 */

/** Applies stored rows (seq order) to `log`; DATA_LOSS when they break the log. */
function applyRows(
  key: SessionKey,
  c: Cached,
  rows: readonly { seq: number; payload: string | null }[],
  /** The rows' canonical JSON, opened already (a cold read's, checkpoint-reader.ts). */
  texts?: readonly string[],
): void {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as { seq: number; payload: string | null };
    c.log.apply(decodePayload(key, r.seq, r.payload ?? "", c.keying, texts?.[i]));
  }
}

/** The key row's columns, read along with the session row while the cache has no keying. */
function keyColumns(ctx: PgContext, withKeys: boolean) {
  // Without the join the columns are absent (undefined): only read when it was made.
  return withKeys ? ctx.sql`, k.key_id, k.key_version, k.wrapped, k.erased` : ctx.sql``;
}

/**
 * For a cold read (every row of the session): the session row's columns
 * (and the key row's, `withKeys`), on its first row only (the first entry past
 * `after`, or the one row without an entry; `firstJoin`): the same on every
 * row, and the driver makes a string of each non-null column of each row
 * (a cold read of 10,000 sealed rows spent ~20 ms on the copies).
 */
function sessionColumns(ctx: PgContext, withKeys: boolean) {
  const first = ctx.sql`(e.seq IS NULL OR e.seq = fs.first_seq)`;
  const keys = withKeys
    ? ctx.sql`,
      CASE WHEN ${first} THEN k.key_id END AS key_id,
      CASE WHEN ${first} THEN k.key_version END AS key_version,
      CASE WHEN ${first} THEN k.wrapped END AS wrapped,
      CASE WHEN ${first} THEN k.erased END AS erased`
    : ctx.sql``;
  return ctx.sql`CASE WHEN ${first} THEN s.incarnation END AS incarnation,
    CASE WHEN ${first} THEN s.head_seq END AS head_seq ${keys}`;
}

/** The join sessionColumns needs: `fs.first_seq`, the first seq past `after`. */
function firstJoin(ctx: PgContext, after: number) {
  return ctx.sql`CROSS JOIN LATERAL (
      SELECT min(f.seq) AS first_seq FROM sessiond_entries f
      WHERE f.workspace = s.workspace AND f.session_id = s.session_id AND f.seq > ${after}) fs`;
}

function keyJoin(ctx: PgContext, withKeys: boolean) {
  return withKeys
    ? ctx.sql`LEFT JOIN sessiond_session_keys k
        ON k.workspace = s.workspace AND k.session_id = s.session_id`
    : ctx.sql``;
}

function headMismatch(key: SessionKey, stored: number, have: number) {
  return dataLoss(
    `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}: head seq ${stored} but ${have} entries stored`,
  );
}

/**
 * The session's log caught up with the tables, outside a transaction:
 * ONE statement (one snapshot, one round trip when nothing changed) reads
 * the session row LEFT JOIN the rows past the cached head, so the head and
 * the rows agree. A cold read (nothing cached) with encryption configured
 * reads the session's checkpoint alongside (checkpoint.ts): a sealed
 * session's rows are taken from it where they are the rows it was made
 * of, and a new one is written after a read that opened at least
 * `checkpointAfter` rows one by one. Call in the session's turn
 * (`cache.withKey`).
 */
export async function catchUp(ctx: PgContext, key: SessionKey): Promise<SessionLog> {
  const k = cacheKey(key);
  let cached = ctx.cache.get(k);
  // False once short rows could not be used (no key, the session rewritten meanwhile).
  let shortRows = true;
  for (let attempt = 0; ; attempt++) {
    const after = cached?.log.headSeq ?? 0;
    const withKeys = ctx.keys.encrypts && cached?.keying === undefined;
    const cold = cached === undefined && ctx.keys.encrypts;
    const short = cold && shortRows;
    // Read along with the rows; a failed read of it is only a slower read.
    const segments: Promise<SegmentRow[]> | undefined = cold
      ? readCheckpoint(ctx, key).catch(() => [])
      : undefined;
    const rows = await ctx.db(
      "reading a session",
      () => ctx.sql<
        ({
          incarnation: string;
          head_seq: number;
          seq: number | null;
          payload: string | null;
        } & Omit<ColdRow, "seq" | "payload"> &
          KeyColumns)[]
      >`
        SELECT ${cached === undefined ? sessionColumns(ctx, withKeys) : ctx.sql`s.incarnation, s.head_seq ${keyColumns(ctx, withKeys)}`},
          e.seq, ${short ? shortPayload(ctx) : ctx.sql`e.payload`} ${cold ? ctx.sql`, ${rowVersion(ctx)}` : ctx.sql``}
        FROM sessiond_sessions s
        ${cached === undefined ? firstJoin(ctx, after) : ctx.sql``}
        ${keyJoin(ctx, withKeys)}
        ${short ? coveredJoin(ctx) : ctx.sql``}
        LEFT JOIN sessiond_entries e
          ON e.workspace = s.workspace AND e.session_id = s.session_id AND e.seq > ${after}
        WHERE s.workspace = ${key.workspace} AND s.session_id = ${key.sessionId}
        ORDER BY e.seq`,
    );
    const first = rows[0];
    if (first === undefined) {
      ctx.cache.drop(k);
      throw missing(key);
    }
    if (cached !== undefined && cached.incarnation !== first.incarnation) {
      // Deleted and created again (by another replica): start over.
      ctx.cache.drop(k);
      cached = undefined;
      if (attempt === 0) continue;
    }
    const c: Cached = cached ?? {
      incarnation: first.incarnation,
      log: new SessionLog(key.sessionId),
    };
    const fresh = rows.filter((r) => r.seq !== null) as ColdRow[];
    let reader: CheckpointReader | undefined;
    try {
      if (withKeys) c.keying = await ctx.keys.keyingOf(key, first);
      let texts: string[] | undefined;
      if (segments !== undefined && c.keying?.sealer !== undefined) {
        reader = new CheckpointReader(key, c.keying, c.keying.sealer, await segments);
        texts = await reader.texts(fresh, (seqs) => wholeRows(ctx, key, first.incarnation, seqs));
      }
      if (texts === undefined && fresh.some((r) => r.payload === null)) {
        // Short rows but no key to use the checkpoint with, or the session
        // rewritten before the rows it did not hold were read: read it whole.
        shortRows = false;
        continue;
      }
      applyRows(key, c, fresh, texts);
      if (c.log.headSeq !== first.head_seq) throw headMismatch(key, first.head_seq, c.log.headSeq);
    } catch (err) {
      ctx.cache.drop(k);
      throw err;
    }
    ctx.cache.remember(k, c);
    if (reader !== undefined && reader.uncovered + reader.restamped >= ctx.checkpointAfter) {
      writeCheckpointLater(ctx, key, c.incarnation, reader.sealer, reader.kept());
    }
    return c.log;
  }
}

/**
 * In the append transaction `tx`: locks the session row (`SELECT ... FOR
 * UPDATE`, which serialises writers of the session across replicas) and
 * brings the cached log up to the stored head. NOT_FOUND when the row is
 * gone. The caller drops the cached log when the transaction fails.
 */
export async function lockAndCatchUp(ctx: PgContext, tx: Q, key: SessionKey): Promise<Cached> {
  const k = cacheKey(key);
  const [row] = await tx<({ incarnation: string; head_seq: number } & KeyColumns)[]>`
    SELECT s.incarnation, s.head_seq ${keyColumns(ctx, ctx.keys.encrypts)}
    FROM sessiond_sessions s
    ${keyJoin(ctx, ctx.keys.encrypts)}
    WHERE s.workspace = ${key.workspace} AND s.session_id = ${key.sessionId}
    FOR UPDATE OF s`;
  if (row === undefined) {
    ctx.cache.drop(k);
    throw missing(key);
  }
  let c = ctx.cache.get(k);
  if (c === undefined || c.incarnation !== row.incarnation) {
    c = { incarnation: row.incarnation, log: new SessionLog(key.sessionId) };
  }
  if (ctx.keys.encrypts) c.keying = await ctx.keys.keyingOf(key, row);
  // The cache is dropped on any failure of the transaction (see append.ts).
  ctx.cache.remember(k, c);
  if (c.log.headSeq < row.head_seq) {
    const rows = await tx<{ seq: number; payload: string }[]>`
      SELECT seq, payload FROM sessiond_entries
      WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId} AND seq > ${c.log.headSeq}
      ORDER BY seq`;
    applyRows(key, c, rows);
  }
  if (c.log.headSeq !== row.head_seq) throw headMismatch(key, row.head_seq, c.log.headSeq);
  return c;
}
