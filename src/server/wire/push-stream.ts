/**
 * A server stream that a transport may either iterate (connect-node does)
 * or have pushed to it (the grpc-js front does, for WatchEntries): the same
 * messages and the same ending either way. Pushed, a stream that waits for
 * news costs the objects that hold its state, not a chain of suspended
 * async generators, promises and timers per stream, and a message reaches
 * the wire with no promise hop per layer.
 */

/** Where a pushed stream's messages go. */
export interface PushSink<T> {
  /** The next message. Returning false pauses the stream until the control's `resume`. */
  message(message: T): boolean;
  /** The stream ended with this error (a pushed stream has no other end). Never after `close`. */
  end(err: unknown): void;
}

/** A started push. */
export interface PushControl {
  /** Goes on after the sink returned false. */
  resume(): void;
  /** Ends the stream; its sink hears nothing more. */
  close(): void;
}

/** Both ways to take a server stream's messages. */
export interface PushSource<T> extends AsyncIterable<T> {
  /** Starts pushing to `sink`, instead of being iterated. */
  push(sink: PushSink<T>): PushControl;
}

export function isPushSource(value: unknown): value is PushSource<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { push?: unknown }).push === "function" &&
    Symbol.asyncIterator in value
  );
}
