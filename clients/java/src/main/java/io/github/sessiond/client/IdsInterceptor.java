package io.github.sessiond.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.MethodDescriptor;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Fills the ids a request leaves empty ({@link Ids#fill}) as it is sent.
 *
 * <p>It runs outside {@link RetryInterceptor}: the retry sees the filled
 * request and sends that same request on every attempt, so a repeat after a
 * lost reply carries the ids of the first attempt and the server de-duplicates
 * it. Protobuf messages are immutable, so the caller's request object does not
 * show the ids; to know them, call {@link Ids#fill} yourself before the call
 * (the interceptor then finds nothing left to fill) or read them from the
 * response.
 *
 * <p>A session id it draws for CreateSession, ForkSession or ImportSession is
 * marked as drawn in the call's options, for the retry interceptor: when the
 * server finds another session under it (ALREADY_EXISTS or created=false,
 * before any attempt could have reached the server), the retry interceptor draws
 * another and sends the call again, 8 draws at most. Without a {@link
 * RetryInterceptor} after it nothing is drawn again.
 */
public final class IdsInterceptor implements ClientInterceptor {
  private final Supplier<String> sessionIds;

  /** Session ids from {@link Ids#newSessionId()}. */
  public IdsInterceptor() {
    this(Ids::newSessionId);
  }

  /** Session ids from {@code sessionIds} (tests: an id that is taken). */
  IdsInterceptor(Supplier<String> sessionIds) {
    this.sessionIds = Objects.requireNonNull(sessionIds, "sessionIds");
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
    CallOptions options = callOptions;
    Supplier<String> ids = sessionIds;
    if (SessionIdDraw.drawsFor(method)) {
      SessionIdDraw draw = new SessionIdDraw(sessionIds);
      options = callOptions.withOption(SessionIdDraw.KEY, draw);
      ids = draw::draw;
    }
    Supplier<String> drawer = ids;
    return new SimpleForwardingClientCall<ReqT, RespT>(next.newCall(method, options)) {
      @Override
      public void sendMessage(ReqT message) {
        super.sendMessage(filled(message, drawer));
      }
    };
  }

  private static <ReqT> ReqT filled(ReqT message, Supplier<String> sessionIds) {
    if (!(message instanceof com.google.protobuf.Message m)) {
      return message;
    }
    @SuppressWarnings("unchecked") // Ids.fillMessage returns a message of the class it was given
    ReqT out = (ReqT) Ids.fillMessage(m, sessionIds);
    return out;
  }
}
