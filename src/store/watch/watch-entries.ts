import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { invalidArgument, notFound } from "../../core/errors.js";
import { checkSessionId, checkWorkspace, quote } from "../../core/ids.js";
import type { SessionKey, StorageEngine } from "../../storage/engine.js";
import type { EventHub } from "./event-hub.js";
import { Wakeup } from "./wakeup.js";

/** What a watch of one session yields: its entries in seq order, and heartbeats. */
export type EntryWatchEvent =
  | { readonly type: "entry"; readonly entry: Entry }
  /** The watch is alive and caught up to `headSeq`, the session's head when it was sent. */
  | { readonly type: "heartbeat"; readonly headSeq: number };

/** How to watch one session; only the cursor and a way out matter to most callers. */
export interface EntryWatchOptions {
  /**
   * Replay the entries with seq > afterSeq first (default 0: the whole log).
   * Pass the seq of the last entry seen to resume with no gap and no
   * duplicate; beyond the head seq is INVALID_ARGUMENT.
   */
  afterSeq?: number | undefined;
  /** Ends the watch: the iterator then throws `signal.reason`. Leaving the loop (`break`) ends it too. */
  signal?: AbortSignal | undefined;
  /** A heartbeat after this long without entries, ms (default DEFAULT_HEARTBEAT_MS). */
  heartbeatMs?: number | undefined;
  /** Entries read from the log at a time while replaying (default: the store's page size). */
  pageSize?: number | undefined;
  /**
   * Negative control for the reliability battery, never set otherwise:
   * replay first, subscribe after, and never re-read at heartbeats, the
   * classic bug where an append that lands between the replay and the
   * subscription is not seen until another one.
   */
  noSubscribeFirst?: boolean | undefined;
}

/** The entries loop's inputs, every default applied (see StoreWatch). */
export interface EntriesLoop {
  readonly engine: StorageEngine;
  readonly hub: EventHub;
  readonly key: SessionKey;
  readonly afterSeq: number;
  readonly signal: AbortSignal;
  readonly heartbeatMs: number;
  readonly pageSize: number;
  readonly noSubscribeFirst: boolean;
}

/**
 * The loop of a watch of one session. Order matters: subscribe FIRST, then
 * replay from the log, then wait for wake-ups; a notification that arrives
 * during the replay leaves the wake-up flag set, so nothing falls between
 * replay and live. Notifications carry no data: every entry is read back
 * from the engine by seq (only durable entries are readable), and the
 * cursor `last` drops anything already sent, so each entry goes out exactly
 * once, in seq order. A slow consumer holds at most one page in memory (the
 * generator only reads on demand). A heartbeat with the head seq goes out
 * once the backlog is replayed and after every quiet interval; each interval
 * also re-reads the log, which picks up appends made by other processes. A
 * deleted session ends the watch with NOT_FOUND (thrown by the read), and
 * so does one deleted and created again between two reads (its head is
 * then below the cursor).
 */
export async function* watchEntries(loop: EntriesLoop): AsyncGenerator<EntryWatchEvent> {
  const { engine, signal, pageSize } = loop;
  // Checked here, so a malformed key is thrown by the iterator, not by the call that made it.
  const key = {
    workspace: checkWorkspace(loop.key.workspace),
    sessionId: checkSessionId(loop.key.sessionId),
  };
  if (loop.afterSeq < 0 || !Number.isSafeInteger(loop.afterSeq)) {
    throw invalidArgument(`after_seq ${loop.afterSeq} is out of range`);
  }
  const wake = new Wakeup();
  const late = loop.noSubscribeFirst;
  const replayed = late ? await engine.read(key, loop.afterSeq, pageSize) : undefined;
  const { tail, stop } = loop.hub.watch(key, () => wake.notify());
  try {
    let last = loop.afterSeq;
    // The first read (subscribed already, unless late) checks the caller's cursor.
    let page = replayed ?? (await engine.read(key, last, pageSize));
    if (last > page.headSeq) {
      throw invalidArgument(
        `after_seq ${last} is beyond the head seq ${page.headSeq} of session ${quote(key.sessionId)}`,
      );
    }
    let beat = true;
    for (;;) {
      for (const entry of page.entries) {
        const seq = Number(entry.seq);
        // Stryker disable next-line ConditionalExpression,EqualityOperator: every page starts after `last` (engine.read and tail.slice both take it), so no entry is ever at or below it; the guard only protects "exactly once" from a misbehaving engine
        if (seq <= last) continue;
        last = seq;
        yield { type: "entry", entry };
      }
      // After a full page the next one is read from the engine at once. After
      // a wake-up the hub's tail usually has the new entries; every quiet
      // interval reads the engine (which also notices appends made by other
      // processes).
      let fromTail = false;
      if (page.entries.length < pageSize) {
        // A page short of pageSize ends at the head its read saw: `last` is that head.
        if (beat) yield { type: "heartbeat", headSeq: last };
        let woke = await wake.wait(loop.heartbeatMs, signal);
        while (late && woke === "timeout") {
          yield { type: "heartbeat", headSeq: last };
          woke = await wake.wait(loop.heartbeatMs, signal);
        }
        if (woke === "aborted") throw signal.reason;
        beat = woke === "timeout";
        fromTail = woke === "notified";
      }
      const sliced = fromTail ? tail.slice(last, pageSize) : undefined;
      page = sliced ?? (await engine.read(key, last, pageSize));
      // The log's head below what was sent: the session was deleted and made
      // again with the same id between two reads (no event told of it, or the
      // wake-up came late). Its entries are not the ones watched; a tail slice
      // is only behind, not another log, so it is not asked.
      if (sliced === undefined && page.headSeq < last) {
        throw notFound(
          `session ${quote(key.sessionId)} was deleted and created again while watched (head seq ${page.headSeq}, ${last} sent); watch it anew from 0`,
        );
      }
    }
  } finally {
    stop();
  }
}
