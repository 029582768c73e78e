package io.github.sessiond.client;

import com.google.protobuf.Timestamp;
import io.github.sessiond.v1.AppendRequest;
import io.github.sessiond.v1.CreateSessionRequest;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.ForkSessionRequest;
import io.github.sessiond.v1.ImportSessionRequest;
import io.github.sessiond.v1.ResetRequest;
import io.github.sessiond.v1.RewindRequest;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.function.Supplier;

/**
 * Ids chosen by the client before a request is sent.
 *
 * <p>A call whose reply is lost (a timeout, a dropped connection, a server
 * restart) has an unknown outcome: the server may have stored it. Retrying it
 * is safe only when the retry carries the same ids as the first attempt, which
 * the server then recognises and de-duplicates. So every id the server would
 * otherwise pick at random is picked here, once, before the first attempt:
 * {@link #fill} returns the request with them set, the client's interceptor
 * calls it for requests that arrive unfilled, and callers that want to know
 * (or log, or resend) the ids call it themselves first.
 *
 * <p>A session id the interceptor draws for a call and the server finds taken
 * by another session is drawn again by the client (see {@link
 * RetryInterceptor}); one that {@link #fill} chose before the call is the
 * caller's, and is not.
 */
public final class Ids {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final HexFormat HEX = HexFormat.of();
  private static final DateTimeFormatter SESSION_TIME =
      DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);

  private Ids() {}

  /** A random entry id: 16 lowercase hex characters (64 random bits), as the server makes them. */
  public static String newEntryId() {
    return randomHex(8);
  }

  /** A session id for now: {@code YYYYMMDD-HHMMSS-<8 hex>} in UTC, so ids sort by creation time. */
  public static String newSessionId() {
    return newSessionId(Instant.now());
  }

  /** A session id for the given time: {@code YYYYMMDD-HHMMSS-<8 hex>} in UTC. */
  public static String newSessionId(Instant at) {
    return SESSION_TIME.format(at) + "-" + randomHex(4);
  }

  private static String randomHex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HEX.formatHex(b);
  }

  /**
   * The request with the ids it leaves to the server filled in; the request
   * itself when there is nothing to fill (protobuf messages are immutable).
   *
   * <ul>
   *   <li>{@link AppendRequest}: every entry with an empty id gets a new one;
   *   <li>{@link RewindRequest}, {@link ResetRequest}: {@code entry_id} when unset;
   *   <li>{@link CreateSessionRequest}, {@link ForkSessionRequest}: {@code session_id}
   *       when unset;
   *   <li>{@link ImportSessionRequest}: {@code session_id} when unset (the id its root
   *       SessionInfo records, else a new one), and every entry's id and timestamp
   *       when empty, so that a retry sends the very same log.
   * </ul>
   *
   * <p>A value the caller set, including an explicit empty string on an optional
   * field, is kept. Any other message is returned unchanged.
   */
  public static <T extends com.google.protobuf.Message> T fill(T request) {
    com.google.protobuf.Message out = fillMessage(request);
    @SuppressWarnings("unchecked") // fillMessage returns a message of the class it was given
    T filled = (T) out;
    return filled;
  }

  static com.google.protobuf.Message fillMessage(com.google.protobuf.Message request) {
    return fillMessage(request, Ids::newSessionId);
  }

  /**
   * {@link #fill}, with the session ids it draws from {@code sessionIds}
   * (called only when a session id is drawn: not for one the request sets or
   * an import's root records).
   */
  static com.google.protobuf.Message fillMessage(
      com.google.protobuf.Message request, Supplier<String> sessionIds) {
    if (request instanceof AppendRequest r) {
      return fillAppend(r);
    }
    if (request instanceof RewindRequest r) {
      return r.hasEntryId() ? r : r.toBuilder().setEntryId(newEntryId()).build();
    }
    if (request instanceof ResetRequest r) {
      return r.hasEntryId() ? r : r.toBuilder().setEntryId(newEntryId()).build();
    }
    if (request instanceof CreateSessionRequest r) {
      return r.hasSessionId() ? r : r.toBuilder().setSessionId(sessionIds.get()).build();
    }
    if (request instanceof ForkSessionRequest r) {
      return r.hasSessionId() ? r : r.toBuilder().setSessionId(sessionIds.get()).build();
    }
    if (request instanceof ImportSessionRequest r) {
      return fillImport(r, sessionIds);
    }
    return request;
  }

  private static AppendRequest fillAppend(AppendRequest r) {
    AppendRequest.Builder b = null;
    for (int i = 0; i < r.getEntriesCount(); i++) {
      if (r.getEntries(i).getId().isEmpty()) {
        if (b == null) {
          b = r.toBuilder();
        }
        b.getEntriesBuilder(i).setId(newEntryId());
      }
    }
    return b == null ? r : b.build();
  }

  private static ImportSessionRequest fillImport(ImportSessionRequest r, Supplier<String> sessionIds) {
    ImportSessionRequest.Builder b = r.toBuilder();
    boolean changed = false;
    if (!r.hasSessionId()) {
      String recorded =
          r.getEntriesCount() > 0 ? r.getEntries(0).getSessionInfo().getSessionId() : "";
      b.setSessionId(recorded.isEmpty() ? sessionIds.get() : recorded);
      changed = true;
    }
    Instant now = Instant.now();
    Timestamp stamp =
        Timestamp.newBuilder().setSeconds(now.getEpochSecond()).setNanos(now.getNano()).build();
    for (int i = 0; i < r.getEntriesCount(); i++) {
      Entry e = r.getEntries(i);
      if (e.getId().isEmpty()) {
        b.getEntriesBuilder(i).setId(newEntryId());
        changed = true;
      }
      if (!e.hasTimestamp()) {
        b.getEntriesBuilder(i).setTimestamp(stamp);
        changed = true;
      }
    }
    return changed ? b.build() : r;
  }
}
