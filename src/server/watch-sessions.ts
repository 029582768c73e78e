import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import {
  SessionEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { isSessiondError } from "../core/errors.js";
import type { StorageEvent } from "../storage/engine.js";
import type { SessionStore } from "../store/session-store.js";
import type { SessionFeed } from "./session-feed.js";
import { Wakeup } from "./wakeup.js";

export interface WatchSessionsOptions {
  store: SessionStore;
  feed: SessionFeed;
  workspace: string;
  afterCursor: string;
  signal: AbortSignal;
  heartbeatMs: number;
}

const TYPES = {
  created: SessionEventType.CREATED,
  appended: SessionEventType.UPDATED,
  deleted: SessionEventType.DELETED,
} as const;

/**
 * The WatchSessions loop: subscribe to the feed first, then either resume
 * after the given cursor or (unknown cursor: restart or too old) send a
 * snapshot of every session as UPDATED events, then live events. Metadata is
 * read when the event is sent, so a watcher always gets the latest state.
 * A heartbeat carries the newest cursor, so an idle watcher can resume
 * without replaying.
 */
export async function* watchSessions(
  opts: WatchSessionsOptions,
): AsyncGenerator<WatchSessionsResponse> {
  const { store, feed, workspace, signal } = opts;
  const wake = new Wakeup();
  const unsubscribe = feed.onEvent(() => wake.notify());
  try {
    let last = feed.head;
    if (opts.afterCursor !== "") {
      const resume = feed.resumePoint(opts.afterCursor);
      if (resume !== undefined) last = resume;
      else {
        for (const id of await store.engine.listIds(workspace)) {
          const msg = await eventMessage(
            opts,
            { type: "appended", workspace, sessionId: id, headSeq: 0 },
            last,
          );
          if (msg !== undefined) yield msg;
        }
      }
    }
    yield heartbeat(feed.cursor(last));
    // The first pass runs without waiting: a resumed watcher gets the events
    // after its cursor at once, not after the next wake-up or heartbeat.
    let woke: "notified" | "timeout" | "aborted" = "notified";
    for (;;) {
      const head = feed.head;
      const events = feed.after(workspace, last);
      for (const { n, event } of events) {
        last = n;
        const msg = await eventMessage(opts, event, n);
        if (msg !== undefined) yield msg;
      }
      if (woke === "timeout") {
        last = Math.max(last, head);
        yield heartbeat(feed.cursor(last));
      }
      woke = await wake.wait(opts.heartbeatMs, signal);
      if (woke === "aborted") throw signal.reason;
    }
  } finally {
    unsubscribe();
  }
}

function heartbeat(cursor: string): WatchSessionsResponse {
  return create(WatchSessionsResponseSchema, { cursor, time: timestampNow() });
}

/** The message for one event; undefined when the session vanished before it could be described. */
async function eventMessage(
  opts: WatchSessionsOptions,
  event: StorageEvent,
  n: number,
): Promise<WatchSessionsResponse | undefined> {
  const base = {
    type: TYPES[event.type],
    sessionId: event.sessionId,
    cursor: opts.feed.cursor(n),
    time: timestampNow(),
  };
  if (event.type === "deleted") return create(WatchSessionsResponseSchema, base);
  try {
    const session = await opts.store.get(opts.workspace, event.sessionId);
    return create(WatchSessionsResponseSchema, { ...base, session });
  } catch (err) {
    if (isSessiondError(err, "NOT_FOUND")) return undefined;
    throw err;
  }
}
