package io.github.sessiond.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Gives every unary call without a deadline of its own (none on the stub, none
 * in the current {@link Context}) one of the configured length, counted from
 * the start of the call and covering all of its retries.
 *
 * <p>Streams get none: a deadline would end every watch after that long,
 * which is never what a watcher wants. It must be the outermost interceptor,
 * so that the deadline is set once for all attempts.
 */
public final class DefaultDeadlineInterceptor implements ClientInterceptor {
  private final long nanos;

  /** A default deadline of {@code timeout} (positive). */
  public DefaultDeadlineInterceptor(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("the default deadline must be positive");
    }
    this.nanos = timeout.toNanos();
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
    if (method.getType() == MethodDescriptor.MethodType.UNARY
        && callOptions.getDeadline() == null
        && Context.current().getDeadline() == null) {
      return next.newCall(method, callOptions.withDeadlineAfter(nanos, TimeUnit.NANOSECONDS));
    }
    return next.newCall(method, callOptions);
  }
}
