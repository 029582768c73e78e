package io.github.sessiond.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.sessiond.v1.AppendRequest;
import io.github.sessiond.v1.AppendResponse;
import io.github.sessiond.v1.CreateSessionRequest;
import io.github.sessiond.v1.CreateSessionResponse;
import io.github.sessiond.v1.DeleteSessionRequest;
import io.github.sessiond.v1.DeleteSessionResponse;
import io.github.sessiond.v1.ForkSessionRequest;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.ForkSessionResponse;
import io.github.sessiond.v1.ImportSessionRequest;
import io.github.sessiond.v1.ImportSessionResponse;
import io.github.sessiond.v1.ResetRequest;
import io.github.sessiond.v1.RewindRequest;
import io.github.sessiond.v1.SessionInfo;
import io.github.sessiond.v1.SessionMeta;
import io.github.sessiond.v1.SessionServiceGrpc;
import io.github.sessiond.v1.StoreServiceGrpc;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.HashSet;
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

  /** A CreateSession answer: the session {@code id}, created or found. */
  static CreateSessionResponse createAnswer(String id, boolean created) {
    return CreateSessionResponse.newBuilder()
        .setSession(SessionMeta.newBuilder().setId(id))
        .setCreated(created)
        .build();
  }

  /** The session ids of the CreateSession requests the server got, in order. */
  List<String> createIdsSent() {
    return server.requestsOf(CreateSessionRequest.class).stream().map(CreateSessionRequest::getSessionId).toList();
  }

  @Test
  void aTakenDrawnSessionIdIsDrawnAgainEightTimesAtMost() {
    for (int i = 1; i <= 8; i++) {
      server.answer(StoreServiceGrpc.getCreateSessionMethod(), Status.ALREADY_EXISTS.withDescription("taken " + i));
    }
    ScriptedDrawer ids = ScriptedDrawer.first();
    try (SessiondClient c = server.client().retry(FAST).sessionIds(ids).build()) {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> c.store().createSession(CreateSessionRequest.getDefaultInstance()));
      assertEquals(Status.Code.ALREADY_EXISTS, e.getStatus().getCode());
      assertEquals("taken 8", e.getStatus().getDescription(), "the 8th draw's answer, as it is");
      assertEquals(8, ids.drawn().size());
      assertEquals(8, new HashSet<>(ids.drawn()).size());
      assertEquals(ids.drawn(), createIdsSent(), "one attempt per draw, each under its id");
    }

    // Retries off: the same, one attempt per draw; created=false (another
    // caller's equal session) 8 times over is returned as it is.
    for (int i = 1; i <= 8; i++) {
      server.answer(StoreServiceGrpc.getCreateSessionMethod(), createAnswer("other-" + i, false));
    }
    ScriptedDrawer more = ScriptedDrawer.first();
    try (SessiondClient c = server.client().retry(RetryPolicy.NONE).sessionIds(more).build()) {
      CreateSessionResponse r = c.store().createSession(CreateSessionRequest.getDefaultInstance());
      assertFalse(r.getCreated());
      assertEquals("other-8", r.getSession().getId());
      assertEquals(8, more.drawn().size());
      assertEquals(more.drawn(), createIdsSent().subList(8, 16));
    }
  }

  @Test
  void createdFalseIsAnotherSessionUnlessAnAttemptUnderTheIdMayHaveReachedTheServer() {
    // A refused connection sent nothing: created=false after it is another's.
    server.answer(StoreServiceGrpc.getCreateSessionMethod(), createAnswer("other", false));
    AttemptProbe refuse = new AttemptProbe(StoreServiceGrpc.getCreateSessionMethod(), "refuse");
    ScriptedDrawer ids = ScriptedDrawer.first();
    try (SessiondClient c = server.client().retry(FAST).attemptInterceptor(refuse).sessionIds(ids).build()) {
      CreateSessionResponse r = c.store().createSession(CreateSessionRequest.getDefaultInstance());
      assertTrue(r.getCreated());
      assertEquals(2, ids.drawn().size());
      assertEquals(ids.drawn().get(1), r.getSession().getId());
      assertEquals(ids.drawn(), createIdsSent());
      assertEquals(3, refuse.attempts.get(), "refused, created=false, created");
    }

    // A reply lost after the server acted: created=false is that attempt's
    // session, the caller's own, returned (the idempotent retry).
    server.answer(
        StoreServiceGrpc.getCreateSessionMethod(), createAnswer("lost", true), createAnswer("mine", false));
    AttemptProbe lose = new AttemptProbe(StoreServiceGrpc.getCreateSessionMethod(), "lose");
    ScriptedDrawer once = ScriptedDrawer.first();
    try (SessiondClient c = server.client().retry(FAST).attemptInterceptor(lose).sessionIds(once).build()) {
      CreateSessionResponse r = c.store().createSession(CreateSessionRequest.getDefaultInstance());
      assertFalse(r.getCreated());
      assertEquals("mine", r.getSession().getId());
      assertEquals(1, once.drawn().size(), "not drawn again");
      assertEquals(List.of(once.drawn().get(0), once.drawn().get(0)), createIdsSent().subList(2, 4));
    }

    // After a lost reply, ALREADY_EXISTS is most likely that attempt's session
    // too (a fork of the current leaf retried after the leaf moved is refused
    // by our own fork): the call ends with it, the id not drawn again.
    server.answer(
        StoreServiceGrpc.getCreateSessionMethod(),
        createAnswer("lost", true),
        Status.ALREADY_EXISTS.withDescription("other parameters"));
    AttemptProbe lose2 = new AttemptProbe(StoreServiceGrpc.getCreateSessionMethod(), "lose");
    ScriptedDrawer one = ScriptedDrawer.first();
    try (SessiondClient c = server.client().retry(FAST).attemptInterceptor(lose2).sessionIds(one).build()) {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> c.store().createSession(CreateSessionRequest.getDefaultInstance()));
      assertEquals(Status.Code.ALREADY_EXISTS, e.getStatus().getCode());
      assertEquals(1, one.drawn().size(), "not drawn again");
      assertEquals(List.of(one.drawn().get(0), one.drawn().get(0)), createIdsSent().subList(4, 6));
    }
  }

  @Test
  void forkAndImportAreDrawnAgainTooAlsoWithRetriesOff() {
    server.answer(StoreServiceGrpc.getForkSessionMethod(), Status.ALREADY_EXISTS.withDescription("taken"));
    server.answer(
        StoreServiceGrpc.getImportSessionMethod(),
        ImportSessionResponse.newBuilder().setSession(SessionMeta.newBuilder().setId("other")).build());
    ScriptedDrawer ids = ScriptedDrawer.first("taken-by-a-fork", "fork-2", "taken-by-an-import", "import-2");
    try (SessiondClient c = server.client().retry(RetryPolicy.NONE).sessionIds(ids).build()) {
      ForkSessionResponse f = c.store().forkSession(ForkSessionRequest.newBuilder().setSession("s").build());
      assertEquals("fork-2", f.getSession().getId());
      ImportSessionRequest imp =
          ImportSessionRequest.newBuilder()
              .addEntries(Entry.newBuilder().setSessionInfo(SessionInfo.getDefaultInstance()))
              .addEntries(Messages.userMessage("hi"))
              .build();
      ImportSessionResponse i = c.store().importSession(imp);
      assertTrue(i.getCreated());
      assertEquals("import-2", i.getSession().getId());
      assertEquals(
          List.of("taken-by-a-fork", "fork-2"),
          server.requestsOf(ForkSessionRequest.class).stream().map(ForkSessionRequest::getSessionId).toList());
      List<ImportSessionRequest> sent = server.requestsOf(ImportSessionRequest.class);
      assertEquals(List.of("taken-by-an-import", "import-2"), sent.stream().map(ImportSessionRequest::getSessionId).toList());
      assertEquals(
          sent.get(0).toBuilder().clearSessionId().build(),
          sent.get(1).toBuilder().clearSessionId().build(),
          "the same log, entry ids and timestamps: only the session id is new");
    }
  }

  @Test
  void aSessionIdTheCallerGaveIsNeverDrawnAgain() {
    server.answer(
        StoreServiceGrpc.getCreateSessionMethod(),
        Status.ALREADY_EXISTS.withDescription("other parameters"),
        createAnswer("given", false),
        Status.ALREADY_EXISTS.withDescription("filled before the call"));
    server.answer(StoreServiceGrpc.getForkSessionMethod(), Status.ALREADY_EXISTS.withDescription("fork"));
    server.answer(StoreServiceGrpc.getImportSessionMethod(), Status.ALREADY_EXISTS.withDescription("another log"));
    ScriptedDrawer ids = ScriptedDrawer.first();
    try (SessiondClient c = server.client().retry(FAST).sessionIds(ids).build()) {
      CreateSessionRequest given = CreateSessionRequest.newBuilder().setSessionId("given").build();
      assertEquals(
          "other parameters",
          assertThrows(StatusRuntimeException.class, () -> c.store().createSession(given)).getStatus().getDescription());
      CreateSessionResponse again = c.store().createSession(given);
      assertFalse(again.getCreated(), "an equal session under the caller's id: the idempotent answer");
      assertEquals("given", again.getSession().getId());
      CreateSessionRequest filled = Ids.fill(CreateSessionRequest.getDefaultInstance());
      assertEquals(
          "filled before the call",
          assertThrows(StatusRuntimeException.class, () -> c.store().createSession(filled)).getStatus().getDescription());
      assertEquals(
          Status.Code.ALREADY_EXISTS,
          assertThrows(
                  StatusRuntimeException.class,
                  () -> c.store().forkSession(ForkSessionRequest.newBuilder().setSession("s").setSessionId("given").build()))
              .getStatus()
              .getCode());
      ImportSessionRequest recorded =
          ImportSessionRequest.newBuilder()
              .addEntries(Entry.newBuilder().setSessionInfo(SessionInfo.newBuilder().setSessionId("from-root")))
              .build();
      assertEquals(
          Status.Code.ALREADY_EXISTS,
          assertThrows(StatusRuntimeException.class, () -> c.store().importSession(recorded)).getStatus().getCode());
      assertEquals(List.of(), ids.drawn(), "nothing drawn");
      assertEquals(List.of("given", "given", filled.getSessionId()), createIdsSent());
      assertEquals(1, server.requestsOf(ForkSessionRequest.class).size());
      assertEquals(1, server.requestsOf(ImportSessionRequest.class).size());
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
