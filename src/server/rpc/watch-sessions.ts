import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import {
  SessionEventType,
  type WatchSessionsResponse,
  WatchSessionsResponseSchema,
} from "../../../gen/sessiond/v1/store_service_pb.js";
import type { SessionWatchEvent } from "../../store/index.js";
import type { ServiceDeps } from "./deps.js";

const TYPES = {
  created: SessionEventType.CREATED,
  updated: SessionEventType.UPDATED,
  deleted: SessionEventType.DELETED,
} as const;

/**
 * WatchSessions: the store's watch of a workspace's sessions as protobuf
 * responses, under a watcher slot (counted in the total) held while the
 * stream is open. What the stream guarantees is the store's (src/store/watch).
 */
export async function* watchSessionsResponses(
  deps: ServiceDeps,
  workspace: string,
  afterCursor: string,
  signal: AbortSignal,
): AsyncGenerator<WatchSessionsResponse> {
  const release = deps.slots.acquire(undefined);
  try {
    const events = deps.store.watchSessions({
      workspace,
      cursor: afterCursor,
      signal,
      heartbeatMs: deps.config.heartbeatMs,
    });
    for await (const event of events) yield response(event);
  } finally {
    release();
  }
}

function response(event: SessionWatchEvent): WatchSessionsResponse {
  const time = timestampNow();
  if (event.type === "heartbeat") {
    return create(WatchSessionsResponseSchema, { cursor: event.cursor, time });
  }
  return create(WatchSessionsResponseSchema, {
    type: TYPES[event.type],
    sessionId: event.sessionId,
    session: event.type === "deleted" ? undefined : event.session,
    cursor: event.cursor,
    time,
  });
}
