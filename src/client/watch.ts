import { Code, ConnectError } from "@connectrpc/connect";
import type { WatchEntriesResponse } from "../../gen/sessiond/v1/session_service_pb.js";
import type { SessiondClient } from "./sessiond-client.js";

export interface ResumableWatchOptions {
  workspace?: string;
  session: string;
  /** Start after this seq (0 = the whole log). */
  afterSeq?: bigint | number;
  signal?: AbortSignal;
  /** Backoff between reconnects, ms (default 100, doubling up to 5 s). */
  retryDelayMs?: number;
  /** Called on each reconnect, e.g. for logging. */
  onReconnect?: (err: ConnectError, afterSeq: bigint) => void;
}

/**
 * Errors after which a watch is resumed instead of ended. CANCELED is one of
 * them because the caller's own abort is handled before this check: any
 * other CANCELED is the peer resetting the stream (connect-node reports an
 * HTTP/2 RST_STREAM CANCEL from a dying server that way), as ABORTED is a
 * reset connection (ECONNRESET).
 */
const RESUMABLE = new Set([
  Code.Unavailable,
  Code.Internal,
  Code.Unknown,
  Code.DeadlineExceeded,
  Code.Aborted,
  Code.Canceled,
]);

/**
 * WatchEntries that survives disconnects and server restarts: it remembers
 * the last seq it delivered and reconnects with it, so the caller sees every
 * entry exactly once, in order. Heartbeats are passed through. Ends when the
 * signal aborts; NOT_FOUND (session deleted) and other errors end it by
 * throwing.
 */
export async function* watchEntriesResumable(
  client: SessiondClient,
  opts: ResumableWatchOptions,
): AsyncGenerator<WatchEntriesResponse> {
  let last = BigInt(opts.afterSeq ?? 0);
  const base = opts.retryDelayMs ?? 100;
  let delay = base;
  // Leaving the loop early (break, return, a throw in the caller's loop body)
  // must end the server stream too: connect's response iterator does not
  // cancel the call when it is returned, so the stream (and the process) would
  // live on.
  const left = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, left.signal]) : left.signal;
  try {
    while (!signal.aborted) {
      try {
        const stream = client.session.watchEntries(
          { workspace: opts.workspace ?? "", session: opts.session, afterSeq: last },
          { signal },
        );
        for await (const msg of stream) {
          delay = base;
          if (msg.event.case === "entry") {
            if (msg.event.value.seq <= last) continue;
            last = msg.event.value.seq;
          }
          yield msg;
        }
        // A clean end (e.g. a proxy closing the stream): reconnect after a pause.
        await new Promise((r) => setTimeout(r, delay));
      } catch (err) {
        const ce = ConnectError.from(err);
        if (signal.aborted) return;
        if (!RESUMABLE.has(ce.code)) throw ce;
        opts.onReconnect?.(ce, last);
        await new Promise((r) => setTimeout(r, delay / 2 + Math.random() * (delay / 2)));
        delay = Math.min(delay * 2, 5000);
      }
    }
  } finally {
    left.abort();
  }
}
