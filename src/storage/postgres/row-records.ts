import type { RootRecord, SessionRecord } from "../engine.js";
import { type PageRow, rootRecordOfRow, sessionRecordOfRow } from "./rows.js";

/** Rows remembered (about 10 pages of 100); each holds its decoded root and records. */
const MAX_ROWS = 1024;

interface Made {
  row: PageRow;
  root: RootRecord;
  record: SessionRecord;
}

/**
 * The records made of listing rows, handed out again while a session's row
 * reads the same: a page read twice gives the same record objects, so the
 * store's metadata of each (store/meta.ts keeps one per record object) and
 * the server's encoding of it (core/codec/response-binary.ts) are made once, not
 * per call, and the root's payload is parsed once. The other engines do
 * the same with their logs (storage/session-record.ts).
 *
 * "The same" is every column the records are made of, compared as read,
 * with the incarnation standing for the root's payload: a session's
 * entries are only ever inserted, so its root (seq 1) is fixed for an
 * incarnation, and a delete and create under the same id makes a new one
 * (the session cache trusts the same fact, cache.ts). A root damaged in
 * the table behind the engine's back is therefore seen only by a reader
 * that did not hold it. An append, a tag change, a delete and re-create
 * all change a column. A bounded LRU: a session it forgot is only decoded
 * again.
 */
export class RowRecords {
  private readonly made = new Map<string, Made>();

  /**
   * The root held for session `id` of `workspace` in `incarnation`, if
   * any: a listing that has it need not read the payload again. The caller
   * keeps what it got and passes it to `of` (the LRU may drop it meanwhile).
   */
  rootOf(workspace: string, id: string, incarnation: string): RootRecord | undefined {
    const known = this.made.get(`${workspace}\n${id}`);
    return known !== undefined && known.row.incarnation === incarnation ? known.root : undefined;
  }

  /**
   * The root and session records of a page row, reused when the row is
   * unchanged. `root`: what `rootOf` gave for the row's incarnation,
   * required when the row's payload was not read.
   */
  of(
    workspace: string,
    row: PageRow,
    root?: RootRecord,
  ): { root: RootRecord; record: SessionRecord } {
    const k = `${workspace}\n${row.session_id}`;
    const known = this.made.get(k);
    if (known !== undefined) {
      this.made.delete(k);
      if (sameRow(known.row, row)) {
        this.made.set(k, known);
        return known;
      }
    }
    let made = root;
    if (made === undefined) {
      if (row.payload === null)
        throw new Error(`the root of ${row.session_id} was neither read nor given`);
      made = rootRecordOfRow(workspace, { ...row, payload: row.payload });
    }
    // The root decoded once, for both records.
    const record = sessionRecordOfRow(workspace, row, made.root ?? new Error(made.healthDetail));
    this.made.set(k, { row, root: made, record });
    if (this.made.size > MAX_ROWS) {
      const oldest = this.made.keys().next().value as string;
      this.made.delete(oldest);
    }
    return { root: made, record };
  }
}

function sameRow(a: PageRow, b: PageRow): boolean {
  return (
    a.incarnation === b.incarnation &&
    a.head_seq === b.head_seq &&
    a.updated_at_ms === b.updated_at_ms &&
    a.leaf_id === b.leaf_id &&
    a.message_count === b.message_count &&
    a.title === b.title &&
    a.created_at_ms === b.created_at_ms &&
    a.parent_session_id === b.parent_session_id &&
    a.folded_tags === b.folded_tags &&
    a.info_payloads === b.info_payloads
  );
}
