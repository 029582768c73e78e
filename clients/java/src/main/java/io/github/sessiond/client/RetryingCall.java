package io.github.sessiond.client;

import io.github.sessiond.v1.StoreServiceGrpc;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One unary call as the caller sees it, made of one or more attempts (see
 * {@link RetryInterceptor}). It records what the caller sends (headers,
 * flow-control credits, the request, half-close) and replays it on a new call
 * for each attempt; the caller's listener hears only from the attempt that
 * ends the call: its headers, its response and its status.
 *
 * <p>Every field is guarded by {@code this}. The caller's listener is called
 * outside the lock, on the thread of the attempt that ended the call (the
 * call's executor), or on the caller's thread for a cancellation between
 * attempts.
 *
 * <p>A call whose session id was drawn by {@link IdsInterceptor} ({@link
 * SessionIdDraw} in its options) is sent again under a new id when that id
 * turns out to be another session's (see {@link RetryInterceptor}): the
 * request recorded is replaced, and the new draw has attempts of its own.
 */
final class RetryingCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {
  private static final String DELETE_SESSION =
      StoreServiceGrpc.getDeleteSessionMethod().getFullMethodName();

  private final MethodDescriptor<ReqT, RespT> method;
  private final CallOptions options;
  private final Channel next;
  private final RetryPolicy policy;
  private final ScheduledExecutorService scheduler;
  private final Runnable beforeRetry;
  private final Context context;
  /** The session id drawn for this call, or null: nothing to draw again. */
  private final SessionIdDraw draw;
  private final Context.CancellationListener onContextCancelled =
      ctx -> cancel("the caller's context was cancelled", ctx.cancellationCause());

  private Listener<RespT> listener;
  private Metadata headers;
  private int requested;
  private ReqT message;
  private boolean halfClosed;
  private boolean cancelled;
  private boolean finished;
  private ClientCall<ReqT, RespT> current;
  /** The attempt under the current session id, 1-based. */
  private int attempt;
  /** Session ids drawn for the request so far (when {@link #draw} is set). */
  private int draws = 1;
  /** An attempt under the current session id may have reached the server: its reply was lost. */
  private boolean outcomeUnknown;
  private ScheduledFuture<?> pending;

  RetryingCall(
      MethodDescriptor<ReqT, RespT> method,
      CallOptions options,
      Channel next,
      RetryPolicy policy,
      ScheduledExecutorService scheduler,
      Runnable beforeRetry,
      Context context) {
    this.method = method;
    this.options = options;
    this.next = next;
    this.policy = policy;
    this.scheduler = scheduler;
    this.beforeRetry = beforeRetry;
    this.context = context;
    this.draw = SessionIdDraw.of(method, options);
  }

  @Override
  public void start(Listener<RespT> responseListener, Metadata requestHeaders) {
    boolean cancelledBefore;
    synchronized (this) {
      listener = responseListener;
      headers = requestHeaders;
      attempt = 1;
      cancelledBefore = cancelled;
      if (!cancelledBefore) {
        startAttempt();
      }
    }
    if (cancelledBefore) {
      finish(Status.CANCELLED.withDescription("cancelled before start"), new Metadata(), null, null);
      return;
    }
    context.addListener(onContextCancelled, Runnable::run);
  }

  /** Makes the next attempt and replays what the caller has sent so far. */
  private synchronized void startAttempt() {
    pending = null;
    if (cancelled || finished) {
      return;
    }
    ClientCall<ReqT, RespT> call = next.newCall(method, options);
    current = call;
    Metadata h = new Metadata();
    h.merge(headers);
    call.start(new AttemptListener(call), h);
    if (requested > 0) {
      call.request(requested);
    }
    if (message != null) {
      call.sendMessage(message);
    }
    if (halfClosed) {
      call.halfClose();
    }
  }

  /** A repeated attempt, from the scheduler: in the caller's context (deadline, cancellation). */
  private void retry() {
    try {
      beforeRetry.run();
    } catch (RuntimeException e) {
      // resetConnectBackoff on a channel being shut down: the attempt reports it.
    }
    context.run(this::startAttempt);
  }

  @Override
  public synchronized void request(int numMessages) {
    requested += numMessages;
    if (current != null) {
      current.request(numMessages);
    }
  }

  @Override
  public synchronized void sendMessage(ReqT m) {
    message = m;
    if (current != null) {
      current.sendMessage(m);
    }
  }

  @Override
  public synchronized void halfClose() {
    halfClosed = true;
    if (current != null) {
      current.halfClose();
    }
  }

  @Override
  public void cancel(String why, Throwable cause) {
    boolean between;
    synchronized (this) {
      if (cancelled || finished) {
        return;
      }
      cancelled = true;
      between = current == null && listener != null;
      if (current != null) {
        current.cancel(why, cause); // its onClose ends the call with CANCELLED
      }
      if (pending != null) {
        pending.cancel(false);
        pending = null;
      }
    }
    if (between) {
      finish(Status.CANCELLED.withDescription(why).withCause(cause), new Metadata(), null, null);
    }
  }

  @Override
  public synchronized boolean isReady() {
    return current != null && current.isReady();
  }

  @Override
  public synchronized void setMessageCompression(boolean enabled) {
    if (current != null) {
      current.setMessageCompression(enabled);
    }
  }

  @Override
  public synchronized Attributes getAttributes() {
    return current != null ? current.getAttributes() : Attributes.EMPTY;
  }

  /** The earlier of the call's and the context's deadline, or null. */
  private Deadline deadline() {
    Deadline a = options.getDeadline();
    Deadline b = context.getDeadline();
    if (a == null) {
      return b;
    }
    return b == null ? a : a.minimum(b);
  }

  /**
   * An attempt ended: end the call with its outcome, schedule the next
   * attempt, or send the request again at once under a new session id.
   */
  private void attemptClosed(
      ClientCall<ReqT, RespT> call, Status status, Metadata trailers, Metadata h, RespT response) {
    Status outStatus = status;
    Metadata outTrailers = trailers;
    RespT outResponse = response;
    boolean redrawn = false;
    synchronized (this) {
      if (call != current || finished) {
        return;
      }
      current = null;
      if (takenByAnother(status, response)) {
        message = draw.redraw(message);
        draws++;
        attempt = 1;
        outcomeUnknown = false; // the attempts so far were under the other id
        redrawn = true;
      } else if (!status.isOk()) {
        if (outcomeUnknown
            && status.getCode() == Status.Code.NOT_FOUND
            && DELETE_SESSION.equals(method.getFullMethodName())) {
          // A lost attempt deleted the session: the caller's wish is met.
          outStatus = Status.OK;
          outTrailers = new Metadata();
          outResponse = method.parseResponse(new ByteArrayInputStream(new byte[0]));
        } else if (!cancelled
            && !context.isCancelled()
            && attempt < policy.maxAttempts()
            && RetryInterceptor.retryable(status.getCode())) {
          long wait = policy.jitteredNanosAfter(attempt);
          Deadline d = deadline();
          if (d == null || d.timeRemaining(TimeUnit.NANOSECONDS) > wait) {
            try {
              pending = scheduler.schedule(this::retry, wait, TimeUnit.NANOSECONDS);
              if (!RetryInterceptor.neverSent(status)) {
                outcomeUnknown = true;
              }
              attempt++;
              return;
            } catch (RejectedExecutionException e) {
              // The client is closing: report this attempt's failure.
            }
          }
        }
      }
    }
    if (redrawn) {
      // No wait: the server is fine, the id was taken. A cancellation meanwhile
      // ends the call (cancel() sees no attempt) and startAttempt does nothing.
      context.run(this::startAttempt);
      return;
    }
    finish(outStatus, outTrailers, h, outResponse);
  }

  /**
   * Whether the attempt's answer shows that the session id this call drew is
   * another session's: ALREADY_EXISTS, or a CreateSession or ImportSession
   * answered created=false, while no attempt under the id may have reached
   * the server (after a lost reply it is our own attempt's session). False when
   * the id is not one this call drew, after {@link SessionIdDraw#MAX_DRAWS}
   * draws, when the caller cancelled, or past the deadline.
   */
  private boolean takenByAnother(Status status, RespT response) {
    if (draw == null
        || draws >= SessionIdDraw.MAX_DRAWS
        || cancelled
        || context.isCancelled()
        || !draw.drew(message)) {
      return false;
    }
    Deadline d = deadline();
    if (d != null && d.isExpired()) {
      return false;
    }
    if (outcomeUnknown) {
      // The session under the id is most likely our own lost attempt's: a
      // created=false answers it, and a fork of the current leaf retried
      // after the leaf moved is refused ALREADY_EXISTS by our own fork.
      return false;
    }
    return status.getCode() == Status.Code.ALREADY_EXISTS
        || (status.isOk() && SessionIdDraw.foundExisting(response));
  }

  /** Ends the call for the caller, once. */
  private void finish(Status status, Metadata trailers, Metadata h, RespT response) {
    Listener<RespT> l;
    synchronized (this) {
      if (finished) {
        return;
      }
      finished = true;
      l = listener;
    }
    context.removeListener(onContextCancelled);
    if (h != null) {
      l.onHeaders(h);
    }
    if (status.isOk() && response != null) {
      l.onMessage(response);
    }
    l.onClose(status, trailers);
  }

  /** Listens to one attempt; only the attempt that ends the call reaches the caller. */
  private final class AttemptListener extends Listener<RespT> {
    private final ClientCall<ReqT, RespT> call;
    private Metadata headers;
    private RespT response;

    AttemptListener(ClientCall<ReqT, RespT> call) {
      this.call = call;
    }

    @Override
    public void onHeaders(Metadata h) {
      headers = h;
    }

    @Override
    public void onMessage(RespT m) {
      response = m;
    }

    @Override
    public void onReady() {
      Listener<RespT> l;
      synchronized (RetryingCall.this) {
        if (call != current || finished) {
          return;
        }
        l = listener;
      }
      l.onReady();
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      attemptClosed(call, status, trailers, headers, response);
    }
  }
}
