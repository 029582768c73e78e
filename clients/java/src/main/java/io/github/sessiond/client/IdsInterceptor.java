package io.github.sessiond.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.MethodDescriptor;

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
 */
public final class IdsInterceptor implements ClientInterceptor {
  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
    return new SimpleForwardingClientCall<ReqT, RespT>(next.newCall(method, callOptions)) {
      @Override
      public void sendMessage(ReqT message) {
        super.sendMessage(filled(message));
      }
    };
  }

  private static <ReqT> ReqT filled(ReqT message) {
    if (!(message instanceof com.google.protobuf.Message m)) {
      return message;
    }
    @SuppressWarnings("unchecked") // Ids.fillMessage returns a message of the class it was given
    ReqT out = (ReqT) Ids.fillMessage(m);
    return out;
  }
}
