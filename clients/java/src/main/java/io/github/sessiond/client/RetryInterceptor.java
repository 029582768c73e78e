package io.github.sessiond.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Retries unary calls that failed with UNAVAILABLE (the server is restarting
 * or shutting down, the connection was refused or lost) or with a CANCELLED
 * the caller did not ask for (the peer reset the stream), with exponential
 * backoff and jitter ({@link RetryPolicy}), and never past the call's
 * deadline.
 *
 * <p>Retrying is safe because {@link IdsInterceptor}, which runs outside this
 * one, has fixed every id before the first attempt: the server de-duplicates
 * the repeats. ABORTED (an {@code expected_leaf_id} / {@code expected_seq}
 * conflict) is never retried: the server decided it, a repeat would fail the
 * same way, and silently winning a race the caller lost would be worse. Every
 * other code is returned at once too.
 *
 * <p>DeleteSession has no id to de-duplicate by: a DeleteSession that gets
 * NOT_FOUND after an attempt whose outcome is unknown (a lost reply, not a
 * refused connection) succeeds with an empty response. The lost attempt
 * deleted the session; the caller asked for it to be gone, and it is.
 *
 * <p>A session id {@link IdsInterceptor} drew for this call (CreateSession,
 * ForkSession, ImportSession; marked in the call's options) that turns out to
 * be another session's is drawn again and the call sent again at once, with
 * its own attempts: when the server answers ALREADY_EXISTS, or created=false
 * while no attempt under that id may have reached the server (after a lost
 * reply, created=false is that attempt's session: the caller's, returned).
 * 8 draws at most, the last answer returned as it is; also with retries off
 * ({@link RetryPolicy#NONE}: one attempt per draw).
 *
 * <p>Streams pass through untouched: {@link EntryWatch} resumes WatchEntries
 * by seq, which a blind replay could not do.
 */
public final class RetryInterceptor implements ClientInterceptor {
  private final RetryPolicy policy;
  private final ScheduledExecutorService scheduler;
  private final Runnable beforeRetry;

  /**
   * A retry interceptor.
   *
   * @param policy attempts and backoff
   * @param scheduler runs the delayed attempts (the caller keeps and shuts it down)
   * @param beforeRetry runs before each repeated attempt; {@link SessiondClient}
   *     passes {@code ManagedChannel::resetConnectBackoff}, so that a retry after a
   *     server restart connects at once instead of waiting out grpc-java's own
   *     reconnect backoff (1 s and growing), which would fail the attempt unsent
   */
  public RetryInterceptor(
      RetryPolicy policy, ScheduledExecutorService scheduler, Runnable beforeRetry) {
    this.policy = policy;
    this.scheduler = scheduler;
    this.beforeRetry = beforeRetry;
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
    if (method.getType() != MethodDescriptor.MethodType.UNARY
        || (policy.maxAttempts() <= 1 && SessionIdDraw.of(method, callOptions) == null)) {
      return next.newCall(method, callOptions);
    }
    return new RetryingCall<>(
        method, callOptions, next, policy, scheduler, beforeRetry, Context.current());
  }

  /**
   * Whether a failed attempt may be repeated: UNAVAILABLE, or CANCELLED (the
   * caller's own cancellation is checked apart: it is never retried).
   */
  static boolean retryable(Status.Code code) {
    return code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED;
  }

  /**
   * Whether a failure proves the request never reached a server (no
   * connection could be made), as opposed to one that may have been acted on
   * before the reply was lost. grpc-java reports both as UNAVAILABLE; the
   * cause tells them apart.
   */
  static boolean neverSent(Status status) {
    Throwable t = status.getCause();
    for (int depth = 0; t != null && depth < 10; depth++, t = t.getCause()) {
      if (t instanceof ConnectException
          || t instanceof UnknownHostException
          || t instanceof NoRouteToHostException) {
        return true;
      }
    }
    return false;
  }
}
