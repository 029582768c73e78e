import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import {
  type WatchEntriesResponse,
  WatchEntriesResponseSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";
import type { EntryWatchEvent } from "../store/index.js";
import type { Session } from "../store/session.js";
import type { ServiceDeps } from "./deps.js";

/**
 * WatchEntries: the store's watch of one session as protobuf responses,
 * under a watcher slot (per session and in total) held while the stream is
 * open. What the stream guarantees is the store's (src/store/watch).
 */
export async function* watchEntriesResponses(
  deps: ServiceDeps,
  start: () => Promise<{ session: Session; afterSeq: number }>,
  signal: AbortSignal,
): AsyncGenerator<WatchEntriesResponse> {
  const { session, afterSeq } = await start();
  const release = deps.slots.acquire(`${session.workspace}/${session.id}`);
  try {
    const events = session.watch({
      afterSeq,
      signal,
      heartbeatMs: deps.config.heartbeatMs,
      noSubscribeFirst: deps.config.debug?.noSubscribeFirst === true,
    });
    for await (const event of events) yield response(event);
  } finally {
    release();
  }
}

/**
 * One response per stored entry for all the watchers of its session: they
 * get the same Entry object from the store (one read per append), and the
 * edge encodes a response object once (response-size.ts), so a fan-out to a
 * thousand watchers encodes each entry once, not a thousand times.
 */
const entryResponses = new WeakMap<object, WatchEntriesResponse>();

function response(event: EntryWatchEvent): WatchEntriesResponse {
  if (event.type === "entry") {
    let r = entryResponses.get(event.entry);
    if (r === undefined) {
      r = create(WatchEntriesResponseSchema, { event: { case: "entry", value: event.entry } });
      entryResponses.set(event.entry, r);
    }
    return r;
  }
  return create(WatchEntriesResponseSchema, {
    event: { case: "heartbeat", value: { headSeq: BigInt(event.headSeq), time: timestampNow() } },
  });
}
