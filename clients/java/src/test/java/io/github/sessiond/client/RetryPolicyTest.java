package io.github.sessiond.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.net.ConnectException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
  @Test
  void backoffDoublesUpToTheCapWithJitter() {
    RetryPolicy p = RetryPolicy.DEFAULT;
    assertEquals(5, p.maxAttempts());
    assertEquals(Duration.ofMillis(50), p.delayAfter(1));
    assertEquals(Duration.ofMillis(100), p.delayAfter(2));
    assertEquals(Duration.ofMillis(800), p.delayAfter(5));
    assertEquals(Duration.ofSeconds(2), p.delayAfter(7));
    assertEquals(Duration.ofSeconds(2), p.delayAfter(100));
    for (int attempt = 1; attempt < 10; attempt++) {
      long d = p.delayAfter(attempt).toNanos();
      for (int i = 0; i < 100; i++) {
        long j = p.jitteredNanosAfter(attempt);
        assertTrue(j >= d / 2 && j <= d, j + " outside [" + d / 2 + ", " + d + "]");
      }
    }
    assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(0, Duration.ofMillis(1), Duration.ofMillis(1)));
    assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(2, Duration.ofMillis(2), Duration.ofMillis(1)));
  }

  @Test
  void onlyUnavailableAndCancelledAreRetryable() {
    for (Status.Code c : Status.Code.values()) {
      assertEquals(
          c == Status.Code.UNAVAILABLE || c == Status.Code.CANCELLED,
          RetryInterceptor.retryable(c),
          c.name());
    }
  }

  @Test
  void aRefusedConnectionProvesNothingWasSent() {
    assertTrue(
        RetryInterceptor.neverSent(
            Status.UNAVAILABLE.withCause(new RuntimeException(new ConnectException("refused")))));
    assertEquals(false, RetryInterceptor.neverSent(Status.UNAVAILABLE.withDescription("shutting down")));
  }
}
