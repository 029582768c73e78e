import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  type WatchEntriesResponse,
  WatchEntriesResponseSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import type { EntrySink, EntryWatchEvent, Session } from "../../store/index.js";
import type { PushControl, PushSink, PushSource } from "../wire/push-stream.js";
import type { ServiceDeps } from "./deps.js";

type Start = () => Promise<{ session: Session; afterSeq: number }>;

/**
 * WatchEntries: the store's watch of one session as protobuf responses,
 * under a watcher slot (per session and in total) held while the stream is
 * open. Iterated (connect-node) it is the store's watch generator; pushed
 * (the grpc-js front) it is the store's follower, so an idle stream holds
 * no suspended generator. What the stream guarantees is the store's
 * (src/store/watch), the same either way.
 */
export function watchEntriesResponses(
  deps: ServiceDeps,
  start: Start,
  signal: AbortSignal,
): PushSource<WatchEntriesResponse> {
  return {
    [Symbol.asyncIterator]: () => iterated(deps, start, signal),
    push(sink) {
      const pushed = new PushedWatch(sink);
      void pushed.open(deps, start, signal);
      return pushed;
    },
  };
}

async function* iterated(
  deps: ServiceDeps,
  start: Start,
  signal: AbortSignal,
): AsyncGenerator<WatchEntriesResponse> {
  const { session, afterSeq } = await start();
  const release = deps.slots.acquire(`${session.workspace}/${session.id}`);
  try {
    const events = session.watch({
      afterSeq,
      signal,
      heartbeatMs: deps.config.heartbeatMs,
    });
    for await (const event of events) yield response(event);
  } finally {
    release();
  }
}

/**
 * A pushed watch: what it holds while open is the sink, the store's
 * follower and its slot (opening it, with the request and handler context,
 * is over once it follows).
 */
class PushedWatch implements EntrySink, PushControl {
  private follower: { resume(): void; close(): void } | undefined;
  private release: (() => void) | undefined;
  private closed = false;

  constructor(private readonly sink: PushSink<WatchEntriesResponse>) {}

  async open(deps: ServiceDeps, start: Start, signal: AbortSignal): Promise<void> {
    try {
      const { session, afterSeq } = await start();
      if (this.closed) return;
      this.release = deps.slots.acquire(`${session.workspace}/${session.id}`);
      this.follower = session.follow(
        {
          afterSeq,
          signal,
          heartbeatMs: deps.config.heartbeatMs,
        },
        this,
      );
    } catch (err) {
      this.end(err);
    }
  }

  entry(entry: Entry): boolean {
    return this.sink.message(entryResponse(entry));
  }

  heartbeat(headSeq: number): boolean {
    return this.sink.message(heartbeatResponse(headSeq));
  }

  withheld(entries: readonly Entry[], headSeq: number): boolean {
    return this.sink.message(withheldResponse(entries, headSeq));
  }

  end(err: unknown): void {
    if (this.closed) return;
    this.close();
    this.sink.end(err);
  }

  resume(): void {
    this.follower?.resume();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.follower?.close();
    this.release?.();
  }
}

/**
 * One response per stored entry for all the watchers of its session: they
 * get the same Entry object from the store (one read per append), and the
 * edge encodes a response object once (response-size.ts), so a fan-out to a
 * thousand watchers encodes each entry once, not a thousand times.
 */
const entryResponses = new WeakMap<object, WatchEntriesResponse>();

function entryResponse(entry: Entry): WatchEntriesResponse {
  let r = entryResponses.get(entry);
  if (r === undefined) {
    r = create(WatchEntriesResponseSchema, { event: { case: "entry", value: entry } });
    entryResponses.set(entry, r);
  }
  return r;
}

/**
 * Heartbeats made in the current millisecond, by head seq. A heartbeat's
 * time has millisecond precision (timestampNow), so one made in the same
 * millisecond for the same head is the same message: the watchers of a
 * session, whose quiet intervals end on the same clock tick, share one
 * response and its encoding instead of one each.
 */
const beats = { ms: 0, byHead: new Map<number, WatchEntriesResponse>() };

function heartbeatResponse(headSeq: number): WatchEntriesResponse {
  const now = Date.now();
  if (now !== beats.ms) {
    beats.ms = now;
    beats.byHead.clear();
  }
  let r = beats.byHead.get(headSeq);
  if (r === undefined) {
    r = create(WatchEntriesResponseSchema, {
      event: { case: "heartbeat", value: { headSeq: BigInt(headSeq), time: timestampFromMs(now) } },
    });
    beats.byHead.set(headSeq, r);
  }
  return r;
}

/** A redaction's event: the entries as they now read. */
function withheldResponse(entries: readonly Entry[], headSeq: number): WatchEntriesResponse {
  return create(WatchEntriesResponseSchema, {
    event: {
      case: "withheldEntries",
      value: { entries: [...entries], headSeq: BigInt(headSeq) },
    },
  });
}

function response(event: EntryWatchEvent): WatchEntriesResponse {
  switch (event.type) {
    case "entry":
      return entryResponse(event.entry);
    case "heartbeat":
      return heartbeatResponse(event.headSeq);
    default:
      return withheldResponse(event.entries, event.headSeq);
  }
}
