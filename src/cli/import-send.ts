import { clone, equals, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import type { Connection } from "./client-flags.js";

/**
 * Bytes per request: an imported transcript is often larger than a
 * server's message limit (4 MiB by default), so it travels in parts this
 * size, or half the client's --max-message-bytes when that is smaller (the
 * other half is room for the request's framing); one entry larger than that
 * still goes alone.
 */
const PART_BYTES = 1024 * 1024;

function partBytes(conn: Connection): number {
  return Math.min(PART_BYTES, Math.floor(conn.maxMessageBytes / 2));
}
/** Entries per Append, the store's default limit being 1000. */
const PART_ENTRIES = 500;

/** What sending a log did. */
export type SendOutcome = "imported" | "extended" | "unchanged";

/** How `import` reports an outcome, before the session id. */
export const OUTCOME_WORDS: Record<SendOutcome, string> = {
  imported: "imported",
  extended: "extended, its start already imported:",
  unchanged: "unchanged, already imported:",
};

/**
 * Splits entries into parts of at most PART_ENTRIES entries and about
 * `maxBytes`, the first holding at least `firstAtLeast` entries.
 */
function parts(entries: readonly Entry[], maxBytes: number, firstAtLeast = 0): Entry[][] {
  const out: Entry[][] = [];
  let part: Entry[] = [];
  let bytes = 0;
  for (const [i, e] of entries.entries()) {
    const size = toBinary(EntrySchema, e).length;
    const full = part.length >= PART_ENTRIES || bytes + size > maxBytes;
    if (part.length > 0 && full && i >= firstAtLeast) {
      out.push(part);
      part = [];
      bytes = 0;
    }
    part.push(e);
    bytes += size;
  }
  if (part.length > 0) out.push(part);
  return out;
}

async function storedLog(conn: Connection, session: string): Promise<Entry[]> {
  const out: Entry[] = [];
  for (;;) {
    const page = await conn.client.session.getEntries({
      workspace: conn.workspace,
      session,
      afterSeq: BigInt(out.length),
    });
    if (page.entries.length === 0) return out;
    out.push(...page.entries);
  }
}

/**
 * Whether `stored` and `wanted` agree on their common start as the server
 * stores it: each entry equal once its seq is its position (and the root's
 * spawn depth, which the server derives from the parent session, is the
 * stored one). Then one is the start of the other: the server holds an
 * import cut short or an older version of a file that grew (extend it), or
 * a longer version of this file (nothing to do).
 */
function sameStart(stored: readonly Entry[], wanted: readonly Entry[]): boolean {
  return stored.slice(0, wanted.length).every((s, i) => {
    const w = clone(EntrySchema, wanted[i] as Entry);
    w.seq = BigInt(i + 1);
    if (w.kind.case === "sessionInfo" && s.kind.case === "sessionInfo" && i === 0) {
      w.kind.value.sessionId = s.kind.value.sessionId;
      w.kind.value.spawnDepth = s.kind.value.spawnDepth;
    }
    return equals(EntrySchema, s, w);
  });
}

/**
 * Stores a log: its first part with ImportSession (every Leaf entry in it:
 * Append could not write them), the rest with Append in parts, each
 * expecting the head the previous left (nobody else writes an imported
 * session). The result is the log ImportSession would store in one call.
 * When the server already holds a start of this log (an import cut short,
 * or a source file that grew since), only what follows is appended; when it
 * holds this log and more (an older version of a file imported after a
 * newer one), nothing is; a log that differs leaves the server's
 * ALREADY_EXISTS.
 */
export async function sendLog(
  conn: Connection,
  sessionId: string,
  entries: readonly Entry[],
): Promise<SendOutcome> {
  let lastLeaf = -1;
  entries.forEach((e, i) => {
    if (e.kind.case === "leaf") lastLeaf = i;
  });
  const [first = [], ...rest] = parts(entries, partBytes(conn), lastLeaf + 1);
  let done: number;
  let created = false;
  try {
    const res = await conn.client.store.importSession({
      workspace: conn.workspace,
      sessionId,
      entries: first,
    });
    created = res.created;
    done = first.length;
  } catch (err) {
    if (!(err instanceof ConnectError) || err.code !== Code.AlreadyExists) throw err;
    const stored = await storedLog(conn, sessionId);
    if (!sameStart(stored, entries)) throw err;
    // The server holds all of this log (and more: a later version of the file).
    if (stored.length >= entries.length) return "unchanged";
    done = stored.length;
  }
  if (rest.length === 0 && done === entries.length) return created ? "imported" : "unchanged";
  let head = BigInt(done);
  for (const part of parts(entries.slice(done), partBytes(conn))) {
    const res = await conn.client.session.append({
      workspace: conn.workspace,
      session: sessionId,
      entries: part,
      expectedSeq: head,
    });
    head = res.headSeq;
  }
  return created ? "imported" : done === entries.length ? "unchanged" : "extended";
}
