import type { SessionKey } from "../engine.js";
import {
  checkpointEntry,
  FIXED,
  HEAD_AT,
  HEAD_CHARS,
  OpenedSegments,
  prefixLength,
  SegmentPacker,
  sealedLength,
  TAIL_AT,
  TAIL_CHARS,
  textLength,
} from "../seal/checkpoint-segments.js";
import { type SessionSealer, sealedTextBounds } from "../seal/sealed-payload.js";
import type { PgContext, Q } from "./context.js";
import { type Keying, openPayload } from "./sealing.js";

/**
 * The checkpoint of a sealed session on PostgreSQL: the JSONL engine's
 * (jsonl/checkpoint.ts), its segments (seal/checkpoint-segments.ts) in
 * rows of sessiond_checkpoints (migration 18) instead of a file, so that
 * a cold read opens a few large sealed segments instead of every row.
 *
 * Rows stay the truth: a row's opened JSON is taken from the checkpoint
 * only when the row is the very one the entry was made of (same seq, the
 * same clear part, the same base64 length, nonce and tag); any other row
 * (appended since, rewritten, moved from another entry or session) is
 * opened as before, and a moved payload still fails to open (DATA_LOSS).
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
 * incarnation and writes nothing. Appends (FOR NO KEY UPDATE) do not wait.
 * Deleted with the session (foreign key).
 */

/** A row of sessiond_checkpoints as read. */
export interface SegmentRow {
  first_seq: number;
  last_seq: number;
  /** base64 of the sealed segment (schema.ts, migration 18). */
  segment: string;
}

/** A sealed row of a cold read, with its canonical JSON opened. */
interface OpenedRow {
  readonly seq: number;
  readonly payload: string;
  readonly text: string;
}

/** The session's checkpoint segments, in seq order (none: an empty list). */
export function readCheckpoint(ctx: PgContext, key: SessionKey): Promise<SegmentRow[]> {
  return ctx.db(
    "reading a checkpoint",
    () => ctx.sql<SegmentRow[]>`
      SELECT first_seq, last_seq, segment FROM sessiond_checkpoints
      WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}
      ORDER BY first_seq`,
  );
}

/** Deletes the session's checkpoint in `tx`: with every rewrite of its sealed payloads or key. */
export async function dropCheckpoint(tx: Q, key: SessionKey): Promise<void> {
  await tx`
    DELETE FROM sessiond_checkpoints
    WHERE workspace = ${key.workspace} AND session_id = ${key.sessionId}`;
}

/** What a sealed payload's base64 is between: `{"@sealed":"` before, `"}}` after. */
const SEALED_KEY = '{"@sealed":"';
const SEALED_CLOSE = '"}}';

/**
 * A cold read's opener of a sealed session's rows: each row's canonical
 * JSON from the checkpoint when the row is the one checkpointed, else
 * opened (openPayload). With `keep`, keeps every sealed row's text, for
 * a new checkpoint.
 */
export class CheckpointReader {
  private readonly opened: OpenedSegments;
  /** Every sealed row read, in seq order, with its opened text (with `keep`). */
  readonly sealedRows: OpenedRow[] = [];
  /** Sealed rows opened one by one (the checkpoint did not hold them). */
  uncovered = 0;

  constructor(
    private readonly key: SessionKey,
    private readonly keying: Keying,
    readonly sealer: SessionSealer,
    segments: readonly SegmentRow[],
    /** Decides, given the last seq the checkpoint covers, whether to keep the texts. */
    keepAfter: (covered: number) => boolean,
  ) {
    this.opened = new OpenedSegments(sealer);
    for (const s of segments) {
      this.opened.add(s.first_seq, s.last_seq, Buffer.from(s.segment, "base64"));
    }
    this.keep = keepAfter(this.opened.covered);
  }

  /** Whether the texts are kept (a new checkpoint may be written after the read). */
  readonly keep: boolean;

  /** The canonical JSON of the row `seq` (DATA_LOSS when a sealed one does not open). */
  textOf(seq: number, payload: string): string {
    let text = this.fromCheckpoint(seq, payload);
    if (text === undefined) {
      if (sealedTextBounds(payload) === undefined) return payload;
      text = openPayload(this.key, seq, payload, this.keying);
      this.uncovered++;
    }
    if (this.keep) this.sealedRows.push({ seq, payload, text });
    return text;
  }

  /**
   * The checkpoint's text of `seq` when `payload` is the row it was made
   * of: the same clear part, then `{"@sealed":"`, base64 of the same
   * length, nonce and tag, and `"}}` (where the checkpoint says the base64
   * is: no search for it through the payload).
   */
  private fromCheckpoint(seq: number, payload: string): string | undefined {
    const seg = this.opened.segment(seq);
    if (seg === undefined) return undefined;
    const at = this.opened.offset(seq);
    const sealedEnd = payload.length - SEALED_CLOSE.length;
    const sealedStart = sealedEnd - sealedLength(seg, at);
    const valueStart = sealedStart - SEALED_KEY.length;
    if (
      valueStart < 0 ||
      !payload.endsWith(SEALED_CLOSE) ||
      !payload.startsWith(SEALED_KEY, valueStart)
    ) {
      return undefined;
    }
    for (let i = 0; i < HEAD_CHARS; i++) {
      if (payload.charCodeAt(sealedStart + i) !== seg[at + HEAD_AT + i]) return undefined;
    }
    const tail = sealedEnd - TAIL_CHARS;
    for (let i = 0; i < TAIL_CHARS; i++) {
      if (payload.charCodeAt(tail + i) !== seg[at + TAIL_AT + i]) return undefined;
    }
    const text = seg.toString("utf8", at + FIXED, at + FIXED + textLength(seg, at));
    // The same clear part: the text starts with it, and it is as long in
    // bytes. (String equality of two slices: startsWith cost 5 × more.)
    const head = payload.slice(0, valueStart);
    if (text.slice(0, valueStart) !== head || prefixLength(seg, at) !== Buffer.byteLength(head)) {
      return undefined;
    }
    this.opened.take(seq);
    return text;
  }
}

/** Sealed rows between two turns of the event loop while a checkpoint is built. */
const YIELD_EVERY = 256;

/**
 * Writes the checkpoint of the sealed rows `read` read (every sealed row
 * of the session, seq order, opened) after the current turn of the event loop, in the
 * background: `ctx.db` keeps it in the engine's calls in flight (close
 * waits for it). A failure (a concurrent write of the same checkpoint,
 * the database gone) leaves the previous one, or none: a checkpoint is
 * only a faster read.
 */
export function writeCheckpointLater(
  ctx: PgContext,
  key: SessionKey,
  incarnation: string,
  read: CheckpointReader,
): void {
  const rows = read.sealedRows;
  ctx
    .db("writing a checkpoint", async () => {
      const packer = new SegmentPacker(read.sealer);
      for (let i = 0; i < rows.length; i++) {
        if (i % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r));
        const entry = entryOf(rows[i] as OpenedRow);
        if (entry !== undefined) packer.add((rows[i] as OpenedRow).seq, entry);
      }
      packer.flush();
      if (packer.segments.length === 0) return;
      const segments = packer.segments.map((s) => ({
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

/** The checkpoint entry of an opened sealed row (undefined: not one the readers could match). */
function entryOf(r: OpenedRow): Buffer | undefined {
  const b = sealedTextBounds(r.payload);
  if (b === undefined) return undefined;
  const head = r.payload.slice(0, b.valueStart);
  if (!r.text.startsWith(head)) return undefined;
  const stored = Buffer.from(r.payload.slice(b.sealedStart, b.sealedEnd), "latin1");
  const sealed = {
    stored,
    sealedStart: 0,
    sealedEnd: stored.length,
    prefix: Buffer.byteLength(head),
  };
  return checkpointEntry(r.seq, 0, sealed, Buffer.from(r.text));
}
