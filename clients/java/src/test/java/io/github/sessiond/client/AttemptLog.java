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
import java.util.ArrayList;
import java.util.List;

/**
 * A test interceptor that runs once per attempt (a {@link
 * SessiondClient.Builder#attemptInterceptor}) and logs the calls the client
 * makes, as the client sees them: the method's bare name when an attempt
 * starts ("PutBlob", "Append"), and "Append: CANCELLED" when one fails, so an
 * attempt that never reached the server (a retry) is counted too.
 */
final class AttemptLog implements ClientInterceptor {
  private final List<String> log = new ArrayList<>();

  /** What was logged since the last take, in order; the log is emptied. */
  synchronized List<String> take() {
    List<String> l = List.copyOf(log);
    log.clear();
    return l;
  }

  private synchronized void add(String s) {
    log.add(s);
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next) {
    String name = method.getBareMethodName();
    add(name);
    return new SimpleForwardingClientCall<ReqT, RespT>(next.newCall(method, options)) {
      @Override
      public void start(Listener<RespT> listener, Metadata headers) {
        super.start(
            new SimpleForwardingClientCallListener<RespT>(listener) {
              @Override
              public void onClose(Status status, Metadata trailers) {
                if (!status.isOk()) {
                  add(name + ": " + status.getCode());
                }
                super.onClose(status, trailers);
              }
            },
            headers);
      }
    };
  }
}
