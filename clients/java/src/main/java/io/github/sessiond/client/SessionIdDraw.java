package io.github.sessiond.client;

import io.github.sessiond.v1.CreateSessionRequest;
import io.github.sessiond.v1.CreateSessionResponse;
import io.github.sessiond.v1.ForkSessionRequest;
import io.github.sessiond.v1.ImportSessionRequest;
import io.github.sessiond.v1.ImportSessionResponse;
import io.github.sessiond.v1.StoreServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The session id one CreateSession, ForkSession or ImportSession call drew
 * ({@link IdsInterceptor}), handed to the retry layer ({@link RetryingCall})
 * in the call's options under {@link #KEY}, so that it can draw again when
 * the id turns out to be another session's.
 *
 * <p>A drawn id is {@code YYYYMMDD-HHMMSS-<8 hex>}: two clients making
 * sessions in the same second draw the same one once in 2^32 pairs. The
 * server then answers ALREADY_EXISTS (another session with other parameters)
 * or, for an equal CreateSession or ImportSession, created=false with the
 * other caller's session, as it would a retry of ours. Only an id drawn in
 * this call is drawn again (never one the caller set, an import's root
 * records, or {@link Ids#fill} filled in before the call), and at most
 * {@link #MAX_DRAWS} times in all.
 */
final class SessionIdDraw {
  /** Where the interceptor puts a call's draw; absent for every other call. */
  static final CallOptions.Key<SessionIdDraw> KEY = CallOptions.Key.create("sessiond.session-id-draw");

  /** Draws of one call at most, the first included. */
  static final int MAX_DRAWS = 8;

  private static final Set<String> METHODS =
      Set.of(
          StoreServiceGrpc.getCreateSessionMethod().getFullMethodName(),
          StoreServiceGrpc.getForkSessionMethod().getFullMethodName(),
          StoreServiceGrpc.getImportSessionMethod().getFullMethodName());

  private final Supplier<String> drawer;
  /** The id last drawn, null before the first draw (or when the request brought its own). */
  private volatile String drawn;

  SessionIdDraw(Supplier<String> drawer) {
    this.drawer = drawer;
  }

  /** Whether the method's request has a session id the client may draw. */
  static boolean drawsFor(MethodDescriptor<?, ?> method) {
    return METHODS.contains(method.getFullMethodName());
  }

  /**
   * The draw of a call, or null: none, or the call is not one that draws (a
   * PutBlob of an import's upload is made with the import's options).
   */
  static SessionIdDraw of(MethodDescriptor<?, ?> method, CallOptions options) {
    return drawsFor(method) ? options.getOption(KEY) : null;
  }

  /** A new session id, remembered as this call's. */
  String draw() {
    String id = drawer.get();
    drawn = id;
    return id;
  }

  /** Whether {@code request} carries the id this call drew (so: not one the caller gave). */
  boolean drew(Object request) {
    String id = drawn;
    return id != null && id.equals(sessionIdOf(request));
  }

  /** The request under a newly drawn session id. */
  <ReqT> ReqT redraw(ReqT request) {
    Object out;
    if (request instanceof CreateSessionRequest r) {
      out = r.toBuilder().setSessionId(draw()).build();
    } else if (request instanceof ForkSessionRequest r) {
      out = r.toBuilder().setSessionId(draw()).build();
    } else if (request instanceof ImportSessionRequest r) {
      out = r.toBuilder().setSessionId(draw()).build();
    } else {
      throw new IllegalArgumentException("no session id to draw in " + request.getClass().getName());
    }
    @SuppressWarnings("unchecked") // a message of the request's own class
    ReqT same = (ReqT) out;
    return same;
  }

  /**
   * Whether the answer is an existing session (CreateSession or ImportSession
   * with created=false): another caller's when no attempt under this id may
   * have reached the server.
   */
  static boolean foundExisting(Object response) {
    return response instanceof CreateSessionResponse r && !r.getCreated()
        || response instanceof ImportSessionResponse r2 && !r2.getCreated();
  }

  private static String sessionIdOf(Object request) {
    if (request instanceof CreateSessionRequest r) {
      return r.getSessionId();
    }
    if (request instanceof ForkSessionRequest r) {
      return r.getSessionId();
    }
    if (request instanceof ImportSessionRequest r) {
      return r.getSessionId();
    }
    return null;
  }
}
