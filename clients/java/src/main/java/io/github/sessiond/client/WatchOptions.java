package io.github.sessiond.client;

import io.grpc.Status;
import java.time.Duration;
import java.util.function.BiConsumer;

/**
 * How a resumable watch ({@link EntryWatch}) reconnects.
 *
 * @param baseDelay the wait before the first reconnect, doubled after each failed one
 *     (default 100 ms; each wait is drawn from [d/2, d]; an entry or heartbeat
 *     resets it)
 * @param maxDelay the longest wait (default 5 s)
 * @param onReconnect called with the status that broke the stream and the
 *     after_seq the watch resumes from, before each reconnect (for logging);
 *     may be null. It runs on a gRPC thread: keep it short.
 */
public record WatchOptions(
    Duration baseDelay, Duration maxDelay, BiConsumer<Status, Long> onReconnect) {
  /** 100 ms doubling to 5 s, no callback. */
  public static final WatchOptions DEFAULT =
      new WatchOptions(Duration.ofMillis(100), Duration.ofSeconds(5), null);

  /** Checks the delays. */
  public WatchOptions {
    if (baseDelay == null || baseDelay.isNegative() || baseDelay.isZero()) {
      throw new IllegalArgumentException("baseDelay must be positive");
    }
    if (maxDelay == null || maxDelay.compareTo(baseDelay) < 0) {
      throw new IllegalArgumentException("maxDelay must not be below baseDelay");
    }
  }

  /** These options with other reconnect delays. */
  public WatchOptions withDelays(Duration base, Duration max) {
    return new WatchOptions(base, max, onReconnect);
  }

  /** These options with a reconnect callback. */
  public WatchOptions withOnReconnect(BiConsumer<Status, Long> callback) {
    return new WatchOptions(baseDelay, maxDelay, callback);
  }
}
