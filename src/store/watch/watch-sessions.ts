import type { SessionMeta } from "../../../gen/sessiond/v1/session_pb.js";
import { isSessiondError } from "../../core/errors.js";
import type { StorageEngine, StorageEvent } from "../../storage/engine.js";
import type { SessionFeed } from "./session-feed.js";
import { Wakeup } from "./wakeup.js";

/** A change to one session of the watched workspace; pass `cursor` back to resume after it. */
export type SessionChange =
  | {
      readonly type: "created" | "updated";
      readonly sessionId: string;
      /** The session's metadata when the change was sent (the latest, not the one of the change). */
      readonly session: SessionMeta;
      readonly cursor: string;
    }
  | { readonly type: "deleted"; readonly sessionId: string; readonly cursor: string };

/** What a watch of a workspace's sessions yields: changes, and heartbeats with the newest cursor. */
export type SessionWatchEvent =
  | SessionChange
  | { readonly type: "heartbeat"; readonly cursor: string };

/** How to watch the sessions of a workspace. */
export interface SessionWatchOptions {
  /** Workspace; empty or absent = "default". */
  workspace?: string | undefined;
  /**
   * Resume after this cursor (from an event or heartbeat); absent or empty =
   * from now. A cursor this store cannot resume exactly (another store's,
   * or too old) gets a snapshot first: an "updated" event per session.
   */
  cursor?: string | undefined;
  /** Ends the watch: the iterator then throws `signal.reason`. Leaving the loop (`break`) ends it too. */
  signal?: AbortSignal | undefined;
  /** A heartbeat after this long without changes, ms (default DEFAULT_HEARTBEAT_MS). */
  heartbeatMs?: number | undefined;
}

/** The sessions loop's inputs, every default applied (see StoreWatch). */
export interface SessionsLoop {
  readonly engine: StorageEngine;
  readonly feed: SessionFeed;
  /** The session's metadata; NOT_FOUND when it is gone. */
  readonly meta: (workspace: string, sessionId: string) => Promise<SessionMeta>;
  readonly workspace: string;
  readonly cursor: string;
  readonly signal: AbortSignal;
  readonly heartbeatMs: number;
}

const TYPES = { created: "created", appended: "updated", withheld: "updated" } as const;

/**
 * The loop of a watch of a workspace's sessions: subscribe to the feed
 * first, then either resume after the given cursor or (a cursor the feed
 * cannot resume) send a snapshot of every session as "updated" events, then
 * live events. Metadata is read when the event is sent, so a watcher always
 * gets the latest state. A heartbeat carries the newest cursor, so an idle
 * watcher can resume without replaying.
 */
export async function* watchSessions(loop: SessionsLoop): AsyncGenerator<SessionWatchEvent> {
  const { feed, workspace, signal } = loop;
  const wake = new Wakeup();
  const unsubscribe = feed.onEvent(() => wake.notify());
  try {
    let last = feed.head;
    if (loop.cursor !== "") {
      const resume = feed.resumePoint(loop.cursor);
      if (resume !== undefined) last = resume;
      else {
        for (const id of await loop.engine.listIds(workspace)) {
          const change = await changeOf(
            loop,
            { type: "appended", workspace, sessionId: id, headSeq: 0 },
            last,
          );
          if (change !== undefined) yield change;
        }
      }
    }
    yield { type: "heartbeat", cursor: feed.cursor(last) };
    // The first pass runs without waiting: a resumed watcher gets the events
    // after its cursor at once, not after the next wake-up or heartbeat. A
    // pass after a quiet interval ends with a heartbeat.
    let quiet = false;
    for (;;) {
      const head = feed.head;
      for (const { n, event } of feed.after(workspace, last)) {
        last = n;
        const change = await changeOf(loop, event, n);
        if (change !== undefined) yield change;
      }
      if (quiet) {
        last = Math.max(last, head);
        yield { type: "heartbeat", cursor: feed.cursor(last) };
      }
      const woke = await wake.wait(loop.heartbeatMs, signal);
      if (woke === "aborted") throw signal.reason;
      quiet = woke === "timeout";
    }
  } finally {
    unsubscribe();
  }
}

/** The change for one event; undefined when the session vanished before it could be described. */
async function changeOf(
  loop: SessionsLoop,
  event: StorageEvent,
  n: number,
): Promise<SessionChange | undefined> {
  const { sessionId } = event;
  const cursor = loop.feed.cursor(n);
  if (event.type === "deleted") return { type: "deleted", sessionId, cursor };
  try {
    const session = await loop.meta(loop.workspace, sessionId);
    return { type: TYPES[event.type], sessionId, session, cursor };
  } catch (err) {
    if (isSessiondError(err, "NOT_FOUND")) return undefined;
    throw err;
  }
}
