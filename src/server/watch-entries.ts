import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import {
  type WatchEntriesResponse,
  WatchEntriesResponseSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";
import { invalidArgument } from "../core/errors.js";
import { quote } from "../core/ids.js";
import type { SessionKey, StorageEngine } from "../storage/engine.js";
import type { EventHub } from "./event-hub.js";
import { Wakeup } from "./wakeup.js";

export interface WatchEntriesOptions {
  engine: StorageEngine;
  hub: EventHub;
  key: SessionKey;
  afterSeq: number;
  signal: AbortSignal;
  heartbeatMs: number;
  pageSize: number;
  /**
   * Negative control (tests only): replay first, subscribe after, and never
   * re-read at heartbeats: the classic bug where an append that lands
   * between the replay and the subscription is not seen until another one.
   */
  noSubscribeFirst?: boolean;
}

function heartbeat(headSeq: number): WatchEntriesResponse {
  return create(WatchEntriesResponseSchema, {
    event: { case: "heartbeat", value: { headSeq: BigInt(headSeq), time: timestampNow() } },
  });
}

/**
 * The WatchEntries loop. Order matters: subscribe FIRST, then replay from
 * the log, then wait for wake-ups; a notification that arrives during the
 * replay leaves the wake-up flag set, so nothing falls between replay and
 * live. Notifications carry no data: every entry is read back from the
 * engine by seq (only durable entries are readable), and the cursor `last`
 * drops anything already sent, so each entry goes out exactly once, in seq
 * order. A slow consumer holds at most one page in memory (the generator
 * only reads on demand). A heartbeat with the head seq is sent once the
 * backlog is replayed and after every quiet interval; each interval also
 * re-reads the log, which picks up appends made by other processes. A
 * deleted session ends the stream with NOT_FOUND (thrown by the read).
 */
export async function* watchEntries(
  opts: WatchEntriesOptions,
): AsyncGenerator<WatchEntriesResponse> {
  const { engine, key, signal, pageSize } = opts;
  const wake = new Wakeup();
  const late = opts.noSubscribeFirst === true;
  let replayed = late ? await engine.read(key, opts.afterSeq, pageSize) : undefined;
  const { tail, stop } = opts.hub.watch(key, () => wake.notify());
  try {
    let last = opts.afterSeq;
    let beat = true;
    // After a wake-up the hub's tail usually has the new entries; the first
    // pass and every quiet interval read the engine (which also notices
    // appends made by other processes).
    let fromTail = false;
    for (let first = true; ; first = false) {
      const page =
        replayed ??
        (fromTail ? tail.slice(last, pageSize) : undefined) ??
        (await engine.read(key, last, pageSize));
      replayed = undefined;
      if (first && last > page.headSeq) {
        throw invalidArgument(
          `after_seq ${last} is beyond the head seq ${page.headSeq} of session ${quote(key.sessionId)}`,
        );
      }
      for (const entry of page.entries) {
        const seq = Number(entry.seq);
        if (seq <= last) continue;
        last = seq;
        yield create(WatchEntriesResponseSchema, { event: { case: "entry", value: entry } });
      }
      if (page.entries.length >= pageSize) {
        fromTail = false;
        continue;
      }
      if (beat) yield heartbeat(Math.max(page.headSeq, last));
      let woke = await wake.wait(opts.heartbeatMs, signal);
      while (late && woke === "timeout") {
        yield heartbeat(last);
        woke = await wake.wait(opts.heartbeatMs, signal);
      }
      if (woke === "aborted") throw signal.reason;
      beat = woke === "timeout";
      fromTail = woke === "notified";
    }
  } finally {
    stop();
  }
}
