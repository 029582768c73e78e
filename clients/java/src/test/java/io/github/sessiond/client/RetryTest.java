package io.github.sessiond.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.sessiond.v1.AppendRequest;
import io.github.sessiond.v1.AppendResponse;
import io.github.sessiond.v1.CreateSessionRequest;
import io.github.sessiond.v1.DeleteSessionRequest;
import io.github.sessiond.v1.DeleteSessionResponse;
import io.github.sessiond.v1.ForkSessionRequest;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.ImportSessionRequest;
import io.github.sessiond.v1.ResetRequest;
import io.github.sessiond.v1.RewindRequest;
import io.github.sessiond.v1.SessionInfo;
import io.github.sessiond.v1.SessionServiceGrpc;
import io.github.sessiond.v1.StoreServiceGrpc;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The client's interceptors against an in-process server that fails on command. */
class RetryTest {
  static final RetryPolicy FAST = new RetryPolicy(5, Duration.ofMillis(5), Duration.ofMillis(20));

  FakeServer server;

  @BeforeEach
  void start() throws Exception {
    server = new FakeServer();
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
  }

  static AppendRequest twoMessages() {
    return AppendRequest.newBuilder()
        .setSession("s")
        .addEntries(Messages.userMessage("once"))
        .addEntries(Messages.assistantMessage("only once"))
        .build();
  }

  @Test
  void unavailableIsRetriedWithTheSameIds() {
    server.answer(SessionServiceGrpc.getAppendMethod(), Status.UNAVAILABLE, Status.UNAVAILABLE);
    try (SessiondClient c = server.client().retry(FAST).build()) {
      AppendResponse r = c.session().append(twoMessages());
      List<AppendRequest> sent = server.requestsOf(AppendRequest.class);
      assertEquals(3, sent.size());
      String first = sent.get(0).getEntries(0).getId();
      assertTrue(IdsTest.ENTRY_ID.matcher(first).matches(), first);
      for (AppendRequest a : sent) {
        assertEquals(sent.get(0), a, "every attempt sends the ids of the first");
      }
      assertEquals(first, r.getEntries(0).getId());
    }
  }

  @Test
  void theFutureStubIsRetriedToo() throws Exception {
    server.answer(SessionServiceGrpc.getAppendMethod(), Status.UNAVAILABLE);
    try (SessiondClient c = server.client().retry(FAST).build()) {
      AppendResponse r = c.sessionFuture().append(twoMessages()).get(10, TimeUnit.SECONDS);
      assertEquals(3, r.getHeadSeq());
      assertEquals(2, server.requestsOf(AppendRequest.class).size());
    }
  }

  @Test
  void abortedAndOtherCodesAreNotRetried() {
    server.answer(
        SessionServiceGrpc.getAppendMethod(),
        Status.ABORTED.withDescription("expected seq 7, head is 1"),
        Status.INTERNAL.withDescription("boom"),
        Status.DEADLINE_EXCEEDED);
    try (SessiondClient c = server.client().retry(FAST).build()) {
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class, () -> c.session().append(twoMessages()));
      SessiondException se = SessiondException.from(e);
      assertEquals(Status.Code.ABORTED, se.code());
      assertEquals("expected seq 7, head is 1", se.serverMessage());
      assertEquals(1, server.requestsOf(AppendRequest.class).size());
      assertEquals(
          Status.Code.INTERNAL,
          assertThrows(StatusRuntimeException.class, () -> c.session().append(twoMessages()))
              .getStatus()
              .getCode());
      assertEquals(
          Status.Code.DEADLINE_EXCEEDED,
          assertThrows(StatusRuntimeException.class, () -> c.session().append(twoMessages()))
              .getStatus()
              .getCode());
      assertEquals(3, server.requestsOf(AppendRequest.class).size());
    }
  }

  @Test
  void retryGivesUpAfterMaxAttempts() {
    for (int i = 0; i < 10; i++) {
      server.answer(SessionServiceGrpc.getAppendMethod(), Status.UNAVAILABLE.withDescription("down " + i));
    }
    try (SessiondClient c = server.client().retry(FAST).build()) {
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class, () -> c.session().append(twoMessages()));
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
      assertEquals("down 4", e.getStatus().getDescription(), "the last attempt's error");
      assertEquals(5, server.requestsOf(AppendRequest.class).size());
    }
    try (SessiondClient c = server.client().retry(RetryPolicy.NONE).build()) {
      assertThrows(StatusRuntimeException.class, () -> c.session().append(twoMessages()));
      assertEquals(6, server.requestsOf(AppendRequest.class).size());
    }
  }

  @Test
  void aCancelledTheCallerDidNotAskForIsRetried() {
    server.answer(SessionServiceGrpc.getAppendMethod(), Status.CANCELLED.withDescription("peer reset"));
    try (SessiondClient c = server.client().retry(FAST).build()) {
      c.session().append(twoMessages());
      assertEquals(2, server.requestsOf(AppendRequest.class).size());
    }
  }

  @Test
  void retriesNeverWaitPastTheDeadline() {
    for (int i = 0; i < 10; i++) {
      server.answer(SessionServiceGrpc.getAppendMethod(), Status.UNAVAILABLE);
    }
    RetryPolicy slow = new RetryPolicy(5, Duration.ofSeconds(2), Duration.ofSeconds(4));
    try (SessiondClient c = server.client().retry(slow).build()) {
      long t0 = System.nanoTime();
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> c.session().withDeadlineAfter(300, TimeUnit.MILLISECONDS).append(twoMessages()));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
      assertTrue(ms < 900, "gave up after " + ms + " ms, the deadline was 300 ms");
      assertEquals(1, server.requestsOf(AppendRequest.class).size());
    }
  }

  @Test
  void retriedDeleteAfterAnUnknownOutcomeSucceedsOnNotFound() {
    server.answer(
        StoreServiceGrpc.getDeleteSessionMethod(),
        Status.UNAVAILABLE.withDescription("shutting down"),
        Status.NOT_FOUND.withDescription("session s not found"));
    try (SessiondClient c = server.client().retry(FAST).build()) {
      DeleteSessionResponse r =
          c.store().deleteSession(DeleteSessionRequest.newBuilder().setSession("s").build());
      assertEquals(0, r.getDeletedSessionIdsCount(), "which ids the lost attempt deleted is unknown");
      assertEquals(2, server.requestsOf(DeleteSessionRequest.class).size());
    }
  }

  @Test
  void deleteNotFoundStaysNotFoundUnlessAnAttemptMayHaveDeleted() {
    server.answer(
        StoreServiceGrpc.getDeleteSessionMethod(),
        Status.NOT_FOUND.withDescription("first"),
        Status.NOT_FOUND.withDescription("after refused"));
    AttemptProbe refuse = new AttemptProbe(StoreServiceGrpc.getDeleteSessionMethod(), "", "refuse");
    try (SessiondClient c = server.client().retry(FAST).attemptInterceptor(refuse).build()) {
      DeleteSessionRequest del = DeleteSessionRequest.newBuilder().setSession("s").build();
      StatusRuntimeException first = assertThrows(StatusRuntimeException.class, () -> c.store().deleteSession(del));
      assertEquals("first", first.getStatus().getDescription());
      StatusRuntimeException second = assertThrows(StatusRuntimeException.class, () -> c.store().deleteSession(del));
      assertEquals(Status.Code.NOT_FOUND, second.getStatus().getCode());
      assertEquals("after refused", second.getStatus().getDescription());
      assertEquals(3, refuse.attempts.get());
      assertEquals(2, server.requestsOf(DeleteSessionRequest.class).size(), "the refused attempt sent nothing");
    }
  }

  @Test
  void idsAreFilledForEveryRequestThatHasThem() {
    try (SessiondClient c = server.client().build()) {
      String rw = c.session().rewind(RewindRequest.newBuilder().setSession("s").setTarget("x").build()).getLeafEntryId();
      assertTrue(IdsTest.ENTRY_ID.matcher(rw).matches(), rw);
      String rs = c.session().reset(ResetRequest.newBuilder().setSession("s").build()).getLeafEntryId();
      assertTrue(IdsTest.ENTRY_ID.matcher(rs).matches(), rs);
      String created = c.store().createSession(CreateSessionRequest.getDefaultInstance()).getSession().getId();
      assertTrue(IdsTest.SESSION_ID.matcher(created).matches(), created);
      String forked = c.store().forkSession(ForkSessionRequest.newBuilder().setSession("s").build()).getSession().getId();
      assertTrue(IdsTest.SESSION_ID.matcher(forked).matches(), forked);
      ImportSessionRequest imp =
          ImportSessionRequest.newBuilder()
              .addEntries(
                  io.github.sessiond.v1.Entry.newBuilder()
                      .setSessionInfo(SessionInfo.newBuilder().setSessionId("from-root")))
              .build();
      assertEquals("from-root", c.store().importSession(imp).getSession().getId());
      ImportSessionRequest sent = server.requestsOf(ImportSessionRequest.class).get(0);
      assertTrue(IdsTest.ENTRY_ID.matcher(sent.getEntries(0).getId()).matches());
      assertTrue(sent.getEntries(0).hasTimestamp());
    }
  }

  @Test
  void theCallTimeoutBindsUnaryCallsOnlyAndTheTokenGoesEverywhere() throws Exception {
    try (SessiondClient c =
        server.client().callTimeout(Duration.ofMillis(200)).token("t0ken").build()) {
      long t0 = System.nanoTime();
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> c.session().getState(GetStateRequest.newBuilder().setSession("never-answers").build()));
      assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
      assertTrue((System.nanoTime() - t0) / 1_000_000 < 2000);
      server.watch(null);
      try (EntryWatch w = c.watchEntries(WatchEntriesRequest.newBuilder().setSession("s").build())) {
        assertEquals(null, w.poll(Duration.ofMillis(500)), "the stream outlives the call timeout");
        assertEquals(0, w.reconnects());
      }
      assertEquals(List.of("Bearer t0ken", "Bearer t0ken"), server.authorizations);
    }
  }

  @Test
  void sessiondExceptionFromUnwrapsFutures() {
    StatusRuntimeException sre = Status.NOT_FOUND.withDescription("gone").asRuntimeException();
    SessiondException e = SessiondException.from(new ExecutionException(sre));
    assertEquals(Status.Code.NOT_FOUND, e.code());
    assertEquals("gone", e.serverMessage());
    assertEquals("NOT_FOUND: gone", e.getMessage());
    assertEquals(Status.Code.UNKNOWN, SessiondException.from(new IllegalStateException("x")).code());
  }
}
