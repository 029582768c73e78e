package io.github.sessiond.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.net.ConnectException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test interceptor that runs once per attempt (a {@link
 * SessiondClient.Builder#attemptInterceptor}): it counts the attempts of one
 * method and can fail some of them. "lose" lets the attempt reach the server
 * and then reports UNAVAILABLE, as a reply lost with the connection would;
 * "refuse" reports UNAVAILABLE caused by a ConnectException without sending,
 * as a refused connection does.
 */
final class AttemptProbe implements ClientInterceptor {
  private final String method;
  private final List<String> plan;
  final AtomicInteger attempts = new AtomicInteger();

  AttemptProbe(MethodDescriptor<?, ?> method, String... plan) {
    this.method = method.getFullMethodName();
    this.plan = List.of(plan);
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> m, CallOptions options, Channel next) {
    if (!m.getFullMethodName().equals(method)) {
      return next.newCall(m, options);
    }
    int i = attempts.getAndIncrement();
    String step = i < plan.size() ? plan.get(i) : "";
    if (step.equals("refuse")) {
      return new Refused<>();
    }
    ClientCall<ReqT, RespT> call = next.newCall(m, options);
    if (!step.equals("lose")) {
      return call;
    }
    return new SimpleForwardingClientCall<ReqT, RespT>(call) {
      @Override
      public void start(Listener<RespT> listener, Metadata headers) {
        super.start(
            new SimpleForwardingClientCallListener<RespT>(listener) {
              @Override
              public void onMessage(RespT message) {
                // the reply is lost
              }

              @Override
              public void onClose(Status status, Metadata trailers) {
                super.onClose(
                    status.isOk()
                        ? Status.UNAVAILABLE.withDescription("test: reply lost after the server acted")
                        : status,
                    trailers);
              }
            },
            headers);
      }
    };
  }

  /** An attempt whose connection was refused: nothing is sent. */
  private static final class Refused<ReqT, RespT> extends ClientCall<ReqT, RespT> {
    @Override
    public void start(Listener<RespT> listener, Metadata headers) {
      Thread t =
          new Thread(
              () ->
                  listener.onClose(
                      Status.UNAVAILABLE
                          .withDescription("test: connection refused")
                          .withCause(new ConnectException("Connection refused")),
                      new Metadata()));
      t.start();
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void cancel(String message, Throwable cause) {}

    @Override
    public void halfClose() {}

    @Override
    public void sendMessage(ReqT message) {}
  }
}
