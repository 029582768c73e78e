package io.github.sessiond.client;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * A failed call: the gRPC status code and the server's message, which names
 * what was wrong (the offending entry id, the session, the line of a corrupt
 * log).
 *
 * <p>It is unchecked, and it <em>is</em> a {@link StatusRuntimeException}: the
 * generated blocking stubs throw plain {@code StatusRuntimeException}s (grpc-java
 * builds those itself, no interceptor can change their class), the client's own
 * methods ({@link SessiondClient#readState}, {@link EntryWatch}, ...) throw this
 * subclass, and one {@code catch (StatusRuntimeException e)} takes both. {@link
 * #from(Throwable)} turns anything a call or a future failed with into one of
 * these, so that code and message are read the same way everywhere.
 */
public class SessiondException extends StatusRuntimeException {
  private static final long serialVersionUID = 1L;

  /** A failure with this status and the trailers that came with it (may be null). */
  public SessiondException(Status status, Metadata trailers) {
    super(status, trailers);
  }

  /** A failure with this code and message (for failures the client itself detects). */
  public SessiondException(Status.Code code, String message) {
    this(code.toStatus().withDescription(message), null);
  }

  /** The gRPC status code, e.g. {@code NOT_FOUND}, {@code ABORTED}, {@code UNAVAILABLE}. */
  public Status.Code code() {
    return getStatus().getCode();
  }

  /** The server's message (the status description), or "" when there was none. */
  public String serverMessage() {
    String d = getStatus().getDescription();
    return d == null ? "" : d;
  }

  /**
   * The SessiondException behind any failure of a call: a {@link
   * StatusRuntimeException} or {@link StatusException} (the stubs), the cause
   * of an {@link ExecutionException} or {@link CompletionException} (the future
   * stubs), or anything else as UNKNOWN with it as the cause.
   */
  public static SessiondException from(Throwable t) {
    Throwable e = t;
    while ((e instanceof ExecutionException || e instanceof CompletionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    if (e instanceof SessiondException se) {
      return se;
    }
    if (e instanceof StatusRuntimeException sre) {
      return new SessiondException(keepCause(sre.getStatus(), sre), sre.getTrailers());
    }
    if (e instanceof StatusException se) {
      return new SessiondException(keepCause(se.getStatus(), se), se.getTrailers());
    }
    return new SessiondException(
        keepCause(Status.fromThrowable(e), e), Status.trailersFromThrowable(e));
  }

  /** The status with {@code e} as its cause unless it has one already (the stack of the failure). */
  private static Status keepCause(Status status, Throwable e) {
    return status.getCause() == null ? status.withCause(e) : status;
  }
}
