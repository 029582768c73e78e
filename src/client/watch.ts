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
  /**
   * A stream that sends nothing (no entry, no heartbeat) for this long is
   * given up and reopened from the last seq, ms (default 30,000; 0: never).
   * The server sends a heartbeat right after the replay and after every
   * quiet `--heartbeat-ms` (default 5,000): keep this well above that.
   */
  stallTimeoutMs?: number;
}

/** The default of ResumableWatchOptions.stallTimeoutMs: six of the server's default heartbeats. */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

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

/** What `nextOrStall` gives when the stream sent nothing in time. */
const STALLED = Symbol("stalled");

/**
 * The stream's next message, or STALLED when none came within `ms`. Raced
 * rather than left to the call's abort signal: connect-node 2.1.2 can leave
 * a call whose HTTP/2 stream was cut during a server's graceful shutdown
 * pending for good, abort or not (connectrpc/connect-es#1678; seen here once
 * in the T9 battery: a watcher that reconnected as a replica drained never
 * heard from its new stream again).
 */
async function nextOrStall<T>(
  pending: Promise<IteratorResult<T>>,
  ms: number,
): Promise<IteratorResult<T> | typeof STALLED> {
  if (ms <= 0) return pending;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<typeof STALLED>((resolve) => {
    timer = setTimeout(() => resolve(STALLED), ms);
  });
  try {
    return await Promise.race([pending, stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * WatchEntries that survives disconnects and server restarts: it remembers
 * the last seq it delivered and reconnects with it, so the caller sees every
 * entry exactly once, in order. Heartbeats are passed through. A stream
 * that falls silent for `stallTimeoutMs` is reopened the same way. Ends
 * when the signal aborts; NOT_FOUND (session deleted) and other errors end
 * it by throwing.
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
  const stallMs = opts.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  try {
    while (!signal.aborted) {
      // This stream's own abort: given up when it stalls.
      const attempt = new AbortController();
      try {
        const stream = client.session
          .watchEntries(
            { workspace: opts.workspace ?? "", session: opts.session, afterSeq: last },
            { signal: AbortSignal.any([signal, attempt.signal]) },
          )
          [Symbol.asyncIterator]();
        for (;;) {
          const pending = stream.next();
          const next = await nextOrStall(pending, stallMs);
          if (next === STALLED) {
            pending.catch(() => {}); // settles (if ever) after the abort below
            const err = new ConnectError(
              `no message from the server in ${stallMs} ms (not even a heartbeat): reopening the watch`,
              Code.DeadlineExceeded,
            );
            attempt.abort(err);
            throw err;
          }
          if (next.done) break;
          const msg = next.value;
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
