import { View } from "../../gen/sessiond/v1/session_pb.js";
import { invalidArgument } from "../core/errors.js";
import type { SessionKey } from "../storage/engine.js";
import { badPageToken, decodeToken, encodeToken } from "./page-token.js";

/**
 * Page tokens of GetTree and GetState. A log only grows, so the head seq
 * and the current leaf of the first page name a snapshot that later pages
 * can still be cut from, however many entries are appended in between; the
 * token carries that snapshot, where the next page starts, and the session
 * it belongs to (a token is never applied to another session).
 */
export interface Snapshot {
  /** Head seq when the first page was read: later entries are left out. */
  readonly headSeq: number;
  /** The current leaf when the first page was read. */
  readonly leafId: string;
}

/** Where the next page of a tree starts. */
export interface TreeCursor extends Snapshot {
  /** The next page holds the entries with seq > afterSeq. */
  readonly afterSeq: number;
}

/** Where the next page of a state starts. */
export interface StateCursor extends Snapshot {
  /** The entry folded to (at_entry_id, or the snapshot's leaf). */
  readonly at: string;
  readonly view: View.CONTEXT | View.HISTORY;
  /**
   * Index in the fold's messages of the next page's first message; with
   * `fromEnd`, of the message after its last (pages run backwards).
   */
  readonly offset: number;
  /** Pages run from the end of the state backwards (GetState from_end); unset: forwards. */
  readonly fromEnd?: true | undefined;
}

/** A seq or an offset: Number.isSafeInteger is false for anything but a number. */
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** The fields shared by both tokens, checked against the session the request names. */
function snapshotOf(fields: unknown[], kind: string, key: SessionKey): Snapshot {
  const [tag, workspace, sessionId, headSeq, leafId] = fields;
  if (tag !== kind || !isCount(headSeq) || typeof leafId !== "string" || leafId === "") {
    throw badPageToken();
  }
  if (workspace !== key.workspace || sessionId !== key.sessionId) {
    throw invalidArgument("invalid page_token: it was issued for another session");
  }
  return { headSeq, leafId };
}

export function encodeTreeToken(key: SessionKey, c: TreeCursor): string {
  return encodeToken(["tree", key.workspace, key.sessionId, c.headSeq, c.leafId, c.afterSeq]);
}

export function decodeTreeToken(key: SessionKey, token: string): TreeCursor {
  const fields = decodeToken(token);
  if (fields.length !== 6) throw badPageToken();
  const snapshot = snapshotOf(fields, "tree", key);
  const afterSeq = fields[5];
  if (!isCount(afterSeq) || afterSeq >= snapshot.headSeq) throw badPageToken();
  return { ...snapshot, afterSeq };
}

/** The ninth field of a token whose pages run backwards (forward tokens keep their eight). */
const FROM_END = "end";

export function encodeStateToken(key: SessionKey, c: StateCursor): string {
  const fields = [
    "state",
    key.workspace,
    key.sessionId,
    c.headSeq,
    c.leafId,
    c.at,
    c.view,
    c.offset,
  ];
  return encodeToken(c.fromEnd === true ? [...fields, FROM_END] : fields);
}

export function decodeStateToken(key: SessionKey, token: string): StateCursor {
  const fields = decodeToken(token);
  if (fields.length !== 8 && (fields.length !== 9 || fields[8] !== FROM_END)) throw badPageToken();
  const snapshot = snapshotOf(fields, "state", key);
  const [, , , , , at, view, offset] = fields;
  if (
    typeof at !== "string" ||
    at === "" ||
    (view !== View.CONTEXT && view !== View.HISTORY) ||
    !isCount(offset) ||
    offset === 0
  ) {
    throw badPageToken();
  }
  return { ...snapshot, at, view, offset, ...(fields.length === 9 ? { fromEnd: true } : {}) };
}
