package io.github.sessiond.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How often and how patiently unary calls are retried after UNAVAILABLE.
 *
 * <p>The defaults (5 attempts, 50 ms doubling to 2 s) are the same in every
 * sessiond client: enough to ride out a server restart or a dropped connection,
 * short enough that a server that is really gone is reported within seconds.
 * Each wait is drawn from [d/2, d] so that clients cut off by the same restart
 * do not all come back in the same millisecond.
 *
 * @param maxAttempts every attempt counts, the first included (1 = no retry)
 * @param baseDelay the wait after the first attempt, doubled after each further one
 * @param maxDelay the longest wait
 */
public record RetryPolicy(int maxAttempts, Duration baseDelay, Duration maxDelay) {
  /** 5 attempts, 50 ms doubling to 2 s. */
  public static final RetryPolicy DEFAULT =
      new RetryPolicy(5, Duration.ofMillis(50), Duration.ofSeconds(2));

  /** One attempt: nothing is retried (ids are still chosen before send). */
  public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ofMillis(50), Duration.ofSeconds(2));

  /** Checks the values: at least one attempt, positive delays, base not above max. */
  public RetryPolicy {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
    }
    if (baseDelay == null || maxDelay == null || baseDelay.isNegative() || baseDelay.isZero()) {
      throw new IllegalArgumentException("baseDelay must be positive");
    }
    if (maxDelay.compareTo(baseDelay) < 0) {
      throw new IllegalArgumentException("maxDelay must not be below baseDelay");
    }
  }

  /**
   * The un-jittered wait after attempt {@code attempt} (1-based) failed:
   * baseDelay doubled attempt-1 times, at most maxDelay.
   */
  public Duration delayAfter(int attempt) {
    Duration d = baseDelay;
    for (int i = 1; i < attempt && d.compareTo(maxDelay) < 0; i++) {
      d = d.multipliedBy(2);
    }
    return d.compareTo(maxDelay) > 0 ? maxDelay : d;
  }

  /** The wait after attempt {@code attempt} failed, in nanoseconds, drawn from [d/2, d]. */
  public long jitteredNanosAfter(int attempt) {
    return jitter(delayAfter(attempt).toNanos());
  }

  /** A wait drawn from [d/2, d]. */
  static long jitter(long nanos) {
    long half = nanos / 2;
    return half + ThreadLocalRandom.current().nextLong(nanos - half + 1);
  }
}
