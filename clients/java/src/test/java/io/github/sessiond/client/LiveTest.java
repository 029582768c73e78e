package io.github.sessiond.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.ByteString;
import io.github.sessiond.v1.AppendRequest;
import io.github.sessiond.v1.AppendResponse;
import io.github.sessiond.v1.BlobPart;
import io.github.sessiond.v1.BlobRef;
import io.github.sessiond.v1.ContentPart;
import io.github.sessiond.v1.CreateSessionRequest;
import io.github.sessiond.v1.CreateSessionResponse;
import io.github.sessiond.v1.DeleteSessionRequest;
import io.github.sessiond.v1.DeleteSessionResponse;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.EntryKind;
import io.github.sessiond.v1.ForkSessionRequest;
import io.github.sessiond.v1.ForkSessionResponse;
import io.github.sessiond.v1.GetEntriesRequest;
import io.github.sessiond.v1.GetEntriesResponse;
import io.github.sessiond.v1.GetSessionRequest;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.GetStateResponse;
import io.github.sessiond.v1.GetTreeRequest;
import io.github.sessiond.v1.GetTreeResponse;
import io.github.sessiond.v1.ImportSessionRequest;
import io.github.sessiond.v1.ImportSessionResponse;
import io.github.sessiond.v1.Label;
import io.github.sessiond.v1.Message;
import io.github.sessiond.v1.ListSessionsRequest;
import io.github.sessiond.v1.ListSessionsResponse;
import io.github.sessiond.v1.ResetRequest;
import io.github.sessiond.v1.ResetResponse;
import io.github.sessiond.v1.Role;
import io.github.sessiond.v1.RewindRequest;
import io.github.sessiond.v1.RewindResponse;
import io.github.sessiond.v1.SearchEntriesRequest;
import io.github.sessiond.v1.SearchEntriesResponse;
import io.github.sessiond.v1.SessionEventType;
import io.github.sessiond.v1.SessionInfo;
import io.github.sessiond.v1.SessionMeta;
import io.github.sessiond.v1.SessionServiceGrpc;
import io.github.sessiond.v1.StateMessage;
import io.github.sessiond.v1.StoreServiceGrpc;
import io.github.sessiond.v1.ToolCall;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.github.sessiond.v1.WatchEntriesResponse;
import io.github.sessiond.v1.WatchSessionsRequest;
import io.github.sessiond.v1.WatchSessionsResponse;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Tests against a live sessiond: SESSIOND_ADDR (host:port) names it,
 * SESSIOND_TOKEN is sent when set, SESSIOND_WORKSPACE picks the workspace
 * (default: a fresh one per run). Without SESSIOND_ADDR every test here is
 * skipped, loudly. SESSIOND_RESTART_DIR (the restart handshake) and
 * SESSIOND_TLS_ADDR / SESSIOND_TLS_CA / SESSIOND_TLS_TOKEN (a second server
 * with TLS and tokens) enable the tests that need them.
 * test/integration/java-client.test.ts runs them against servers it starts.
 */
class LiveTest {
  static final String ADDR = System.getenv("SESSIOND_ADDR");
  static final String WORKSPACE =
      env("SESSIOND_WORKSPACE", "java-" + Ids.newEntryId());
  static final RetryPolicy FAST = new RetryPolicy(5, Duration.ofMillis(10), Duration.ofMillis(50));

  final List<AutoCloseable> cleanup = new ArrayList<>();

  static String env(String name, String otherwise) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? otherwise : v;
  }

  @BeforeAll
  static void warnWhenThereIsNoServer() {
    if (ADDR == null || ADDR.isEmpty()) {
      System.err.println(
          "\n*** SESSIOND_ADDR is not set: every LiveTest test is SKIPPED (start `node"
              + " bin/sessiond.js serve --listen 127.0.0.1:50051 --data-dir /tmp/s` and set"
              + " SESSIOND_ADDR=127.0.0.1:50051) ***\n");
    }
  }

  @BeforeEach
  void needsAServer() {
    Assumptions.assumeTrue(
        ADDR != null && !ADDR.isEmpty(), "*** SKIPPED: SESSIOND_ADDR is not set (no live server) ***");
  }

  @AfterEach
  void closeAll() throws Exception {
    Collections.reverse(cleanup);
    for (AutoCloseable c : cleanup) {
      c.close();
    }
  }

  /** A client of the server under test, closed after the test. */
  SessiondClient live(Consumer<SessiondClient.Builder> options) {
    SessiondClient.Builder b = SessiondClient.builder(ADDR);
    String token = System.getenv("SESSIOND_TOKEN");
    if (token != null && !token.isEmpty()) {
      b.token(token);
    }
    options.accept(b);
    SessiondClient c = b.build();
    cleanup.add(c);
    return c;
  }

  SessiondClient live() {
    return live(b -> {});
  }

  static String newSession(SessiondClient c) {
    return c.store()
        .withDeadlineAfter(20, TimeUnit.SECONDS)
        .createSession(CreateSessionRequest.newBuilder().setWorkspace(WORKSPACE).build())
        .getSession()
        .getId();
  }

  /** The call fails with {@code want} and a message from the server. */
  static SessiondException wantCode(Status.Code want, String what, Executable call) {
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call, what);
    SessiondException se = SessiondException.from(e);
    assertEquals(want, se.code(), what + ": " + e);
    assertFalse(se.serverMessage().isEmpty(), what + ": " + want + " without a message");
    return se;
  }

  @Test
  void storeServiceEveryRpc() throws Exception {
    SessiondClient c = live();

    // WatchSessions first (its first answer is a heartbeat: the watch is
    // registered), so that it sees the create below.
    Context.CancellableContext watchCtx = Context.current().withCancellation();
    cleanup.add(() -> watchCtx.cancel(null));
    Iterator<WatchSessionsResponse> events =
        watchCtx.call(
            () -> c.store().watchSessions(WatchSessionsRequest.newBuilder().setWorkspace(WORKSPACE).build()));
    assertEquals(SessionEventType.SESSION_EVENT_TYPE_UNSPECIFIED, events.next().getType());

    CreateSessionRequest req =
        Ids.fill(CreateSessionRequest.newBuilder().setWorkspace(WORKSPACE).setTitle("java client").build());
    CreateSessionResponse created = c.store().createSession(req);
    String id = created.getSession().getId();
    assertTrue(created.getCreated());
    assertEquals(req.getSessionId(), id, "the id chosen before send");
    assertTrue(IdsTest.SESSION_ID.matcher(id).matches(), id);
    CreateSessionResponse again = c.store().createSession(req);
    assertFalse(again.getCreated(), "the same id and parameters: an idempotent repeat");
    assertEquals(id, again.getSession().getId());

    while (true) {
      WatchSessionsResponse ev = events.next();
      if (ev.getType() == SessionEventType.SESSION_EVENT_TYPE_CREATED && ev.getSessionId().equals(id)) {
        break;
      }
    }
    watchCtx.cancel(null);

    assertEquals(
        "java client",
        c.store()
            .getSession(GetSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id.substring(0, 22)).build())
            .getSession()
            .getTitle(),
        "GetSession by a prefix");

    CreateSessionResponse sub =
        c.store()
            .createSession(
                CreateSessionRequest.newBuilder()
                    .setWorkspace(WORKSPACE)
                    .setParentSessionId(id)
                    .setAgentType("helper")
                    .build());
    assertEquals(1, sub.getSession().getSpawnDepth());
    ListSessionsResponse subs =
        c.store().listSessions(ListSessionsRequest.newBuilder().setWorkspace(WORKSPACE).setParentSessionId(id).build());
    assertEquals(1, subs.getSessionsCount());
    assertEquals(sub.getSession().getId(), subs.getSessions(0).getId());
    ListSessionsResponse top =
        c.store().listSessions(ListSessionsRequest.newBuilder().setWorkspace(WORKSPACE).setPageSize(1000).build());
    assertTrue(top.getSessionsList().stream().anyMatch(s -> s.getId().equals(id)), "ListSessions lists it");

    c.session()
        .append(
            AppendRequest.newBuilder()
                .setWorkspace(WORKSPACE)
                .setSession(id)
                .addEntries(Messages.userMessage("the quokka question"))
                .build());
    SearchEntriesResponse hits =
        c.store().searchEntries(SearchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setQuery("QUOKKA").build());
    assertEquals(1, hits.getHitsCount(), hits.toString());
    assertEquals(id, hits.getHits(0).getSessionId());

    ForkSessionRequest freq = Ids.fill(ForkSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    ForkSessionResponse fork = c.store().forkSession(freq);
    assertEquals(freq.getSessionId(), fork.getSession().getId());
    assertEquals(id, fork.getSession().getForkedFrom().getSessionId());

    GetEntriesResponse log =
        c.session().getEntries(GetEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    ImportSessionRequest imp =
        Ids.fill(ImportSessionRequest.newBuilder().setWorkspace(WORKSPACE).addAllEntries(log.getEntriesList()).build());
    assertEquals(id, imp.getSessionId(), "the id its root records");
    String copyId = Ids.newSessionId();
    ImportSessionRequest copy = imp.toBuilder().setSessionId(copyId).build();
    ImportSessionResponse imported = c.store().importSession(copy);
    assertTrue(imported.getCreated());
    assertEquals(copyId, imported.getSession().getId());
    assertEquals(log.getHeadSeq(), imported.getSession().getHeadSeq());
    assertFalse(c.store().importSession(copy).getCreated(), "an identical import is a repeat");

    DeleteSessionResponse del =
        c.store()
            .deleteSession(
                DeleteSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setIncludeSubagents(true).build());
    assertEquals(2, del.getDeletedSessionIdsCount());
    wantCode(
        Status.Code.NOT_FOUND,
        "GetSession of a deleted session",
        () -> c.store().getSession(GetSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build()));
    assertEquals(
        fork.getSession().getId(),
        c.store()
            .getSession(GetSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(fork.getSession().getId()).build())
            .getSession()
            .getId(),
        "the fork outlives its source");
  }

  @Test
  void sessionServiceEveryRpc() throws Exception {
    SessiondClient c = live();
    String id = newSession(c);

    ToolCall call = Messages.toolCall("call-1", "add", Map.of("a", 2, "b", 2));
    Entry label = Entry.newBuilder().setLabel(Label.newBuilder().setLabel("asked")).build();
    AppendRequest app =
        Ids.fill(
            AppendRequest.newBuilder()
                .setWorkspace(WORKSPACE)
                .setSession(id)
                .addEntries(Messages.userMessage("What is 2+2?"))
                .addEntries(label)
                .addEntries(Messages.assistantMessage("", call))
                .addEntries(Messages.toolResult("call-1", "add", "4", false))
                .addEntries(Messages.assistantMessage("4"))
                .build());
    AppendResponse res = c.session().append(app);
    assertEquals(6, res.getHeadSeq());
    assertEquals(app.getEntries(4).getId(), res.getLeafId());
    assertFalse(res.getDeduplicated());
    for (int i = 0; i < res.getEntriesCount(); i++) {
      assertEquals(app.getEntries(i).getId(), res.getEntries(i).getId());
      assertTrue(IdsTest.ENTRY_ID.matcher(res.getEntries(i).getId()).matches());
      assertEquals(i + 2, res.getEntries(i).getSeq());
    }

    GetStateResponse st =
        c.session().getState(GetStateRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    List<String> texts = new ArrayList<>();
    for (StateMessage m : st.getState().getMessagesList()) {
      texts.add(m.getMessage().getRole() + ":" + Messages.textOf(m));
    }
    assertEquals(
        List.of("ROLE_USER:What is 2+2?", "ROLE_ASSISTANT:", "ROLE_TOOL:4", "ROLE_ASSISTANT:4"), texts);
    assertEquals("asked", st.getState().getLabel());

    // The future stub goes through the same interceptors.
    GetEntriesResponse ents =
        c.sessionFuture()
            .getEntries(
                GetEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setAfterSeq(1).setLimit(2).build())
            .get(20, TimeUnit.SECONDS);
    assertEquals(2, ents.getEntriesCount());
    assertEquals(app.getEntries(0).getId(), ents.getEntries(0).getId());
    assertEquals(6, ents.getHeadSeq());

    GetTreeResponse tree =
        c.session().getTree(GetTreeRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    assertEquals(6, tree.getNodesCount());
    assertEquals(EntryKind.ENTRY_KIND_LABEL, tree.getNodes(2).getKind());
    assertEquals(res.getLeafId(), tree.getLeafId());

    RewindRequest rw = Ids.fill(RewindRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setTarget("asked").build());
    RewindResponse rwRes = c.session().rewind(rw);
    assertEquals(app.getEntries(1).getId(), rwRes.getLeafId());
    assertEquals(rw.getEntryId(), rwRes.getLeafEntryId());
    assertEquals(7, rwRes.getHeadSeq());
    // Without Ids.fill the interceptor chooses the id: the response names it.
    ResetResponse rsRes = c.session().reset(ResetRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    assertEquals(ents.getEntries(0).getParentId(), rsRes.getLeafId(), "the root");
    assertTrue(IdsTest.ENTRY_ID.matcher(rsRes.getLeafEntryId()).matches());
    assertEquals(8, rsRes.getHeadSeq());

    try (EntryWatch w =
        c.watchEntries(WatchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setAfterSeq(5).build())) {
      List<Long> seqs = new ArrayList<>();
      while (seqs.size() < 3) {
        WatchEntriesResponse ev = w.next();
        if (ev.hasEntry()) {
          seqs.add(ev.getEntry().getSeq());
        }
      }
      assertEquals(List.of(6L, 7L, 8L), seqs);
      assertEquals(8, w.lastSeq());
      assertEquals(0, w.reconnects());
    }
  }

  @Test
  void appendRetriedAfterALostReplyIsNotDuplicated() {
    AttemptProbe probe = new AttemptProbe(SessionServiceGrpc.getAppendMethod(), "lose", "refuse");
    SessiondClient c = live(b -> b.attemptInterceptor(probe).retry(FAST));
    String id = newSession(c);

    AppendRequest app =
        AppendRequest.newBuilder()
            .setWorkspace(WORKSPACE)
            .setSession(id)
            .addEntries(Messages.userMessage("once"))
            .addEntries(Messages.assistantMessage("only once"))
            .build();
    AppendResponse res = c.session().append(app);
    assertEquals(3, probe.attempts.get(), "lost reply, refused, success");
    assertTrue(res.getDeduplicated(), "the retry was recognised as a repeat: " + res);
    assertEquals(3, res.getHeadSeq());
    GetEntriesResponse ents =
        c.session().getEntries(GetEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    assertEquals(3, ents.getEntriesCount());
    assertEquals(res.getEntries(0).getId(), ents.getEntries(1).getId());
    assertEquals(res.getEntries(1).getId(), ents.getEntries(2).getId());

    // Negative control: without ids chosen before send (a bare channel, no
    // interceptors), sending the same request twice stores it twice.
    ManagedChannel bare = Grpc.newChannelBuilder(ADDR, InsecureChannelCredentials.create()).build();
    cleanup.add(bare::shutdownNow);
    SessionServiceGrpc.SessionServiceBlockingStub raw = SessionServiceGrpc.newBlockingStub(bare);
    String token = System.getenv("SESSIOND_TOKEN");
    if (token != null && !token.isEmpty()) {
      Metadata h = new Metadata();
      h.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
      raw = raw.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(h));
    }
    AppendRequest dup =
        AppendRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).addEntries(Messages.userMessage("twice")).build();
    raw.append(dup);
    raw.append(dup);
    assertEquals(
        5,
        c.session()
            .getEntries(GetEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build())
            .getEntriesCount(),
        "the bare channel's repeat was not duplicated: the check above proves nothing");
  }

  @Test
  void casConflictIsAbortedAndNotRetried() {
    AttemptProbe probe = new AttemptProbe(SessionServiceGrpc.getAppendMethod());
    SessiondClient c = live(b -> b.attemptInterceptor(probe));
    String id = newSession(c);
    SessiondException e =
        wantCode(
            Status.Code.ABORTED,
            "Append with a stale expected_seq",
            () ->
                c.session()
                    .append(
                        AppendRequest.newBuilder()
                            .setWorkspace(WORKSPACE)
                            .setSession(id)
                            .addEntries(Messages.userMessage("x"))
                            .setExpectedSeq(7)
                            .build()));
    assertEquals(1, probe.attempts.get(), "ABORTED was attempted " + probe.attempts.get() + " times: " + e);
    c.session()
        .append(
            AppendRequest.newBuilder()
                .setWorkspace(WORKSPACE)
                .setSession(id)
                .addEntries(Messages.userMessage("x"))
                .setExpectedSeq(1)
                .build());
    wantCode(
        Status.Code.ABORTED,
        "Reset with a stale expected_leaf_id",
        () ->
            c.session()
                .reset(
                    ResetRequest.newBuilder()
                        .setWorkspace(WORKSPACE)
                        .setSession(id)
                        .setExpectedLeafId("not-the-leaf")
                        .build()));
  }

  @Test
  void notFoundCodes() {
    SessiondClient c = live();
    String missing = "nothere-" + Ids.newEntryId();
    SessiondException e =
        wantCode(
            Status.Code.NOT_FOUND,
            "GetSession",
            () -> c.store().getSession(GetSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(missing).build()));
    assertTrue(e.serverMessage().contains(missing), "the message names the session: " + e.serverMessage());
    wantCode(
        Status.Code.NOT_FOUND,
        "Append",
        () ->
            c.session()
                .append(
                    AppendRequest.newBuilder()
                        .setWorkspace(WORKSPACE)
                        .setSession(missing)
                        .addEntries(Messages.userMessage("x"))
                        .build()));
    wantCode(
        Status.Code.NOT_FOUND,
        "DeleteSession on its first attempt",
        () -> c.store().deleteSession(DeleteSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(missing).build()));
    String id = newSession(c);
    wantCode(
        Status.Code.NOT_FOUND,
        "Rewind to an unknown target",
        () ->
            c.session()
                .rewind(RewindRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setTarget("no-such-label").build()));
    wantCode(
        Status.Code.NOT_FOUND,
        "readState of a missing session (the client's own method)",
        () -> c.readState(GetStateRequest.newBuilder().setWorkspace(WORKSPACE).setSession(missing).build()));
    wantCode(
        Status.Code.INVALID_ARGUMENT,
        "GetSession by a 2-character prefix",
        () -> c.store().getSession(GetSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession("ab").build()));
  }

  @Test
  void deleteRetriedAfterALostReplySucceeds() {
    AttemptProbe probe = new AttemptProbe(StoreServiceGrpc.getDeleteSessionMethod(), "lose");
    SessiondClient c = live(b -> b.attemptInterceptor(probe).retry(FAST));
    String id = newSession(c);
    DeleteSessionResponse res =
        c.store().deleteSession(DeleteSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    assertEquals(2, probe.attempts.get());
    assertEquals(0, res.getDeletedSessionIdsCount());
    wantCode(
        Status.Code.NOT_FOUND,
        "the session after the retried delete",
        () -> c.store().getSession(GetSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build()));
  }

  /** The session {@code id} of the test workspace as GetSession describes it. */
  static SessionMeta meta(SessiondClient c, String id) {
    return c.store().getSession(GetSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build()).getSession();
  }

  /** The ids of the entries of session {@code id}, in order. */
  static List<String> entryIds(SessiondClient c, String id) {
    return c.session()
        .getEntries(GetEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build())
        .getEntriesList()
        .stream()
        .map(Entry::getId)
        .toList();
  }

  /** An import of a log whose root records no session id: the client draws it. */
  static ImportSessionRequest anonymousLog(String text) {
    return ImportSessionRequest.newBuilder()
        .setWorkspace(WORKSPACE)
        .addEntries(Entry.newBuilder().setId("root").setSessionInfo(SessionInfo.newBuilder().setTitle("imported")))
        .addEntries(Messages.userMessage(text).toBuilder().setParentId("root"))
        .build();
  }

  @Test
  void createDrawsAgainWhenItsDrawnSessionIdIsTaken() {
    SessiondClient c = live();
    CreateSessionRequest params = CreateSessionRequest.newBuilder().setWorkspace(WORKSPACE).setTitle("taken").build();
    String taken = c.store().createSession(params).getSession().getId();
    SessionMeta before = meta(c, taken);

    // Equal parameters: the server takes the call for a retry of the taken
    // session's create and answers created=false with it.
    ScriptedDrawer equal = ScriptedDrawer.first(taken);
    CreateSessionResponse r = live(b -> b.sessionIds(equal)).store().createSession(params);
    assertTrue(r.getCreated(), "a new session, not the taken one: " + r);
    assertNotEquals(taken, r.getSession().getId());
    assertEquals(List.of(taken, r.getSession().getId()), equal.drawn());

    // Other parameters: ALREADY_EXISTS.
    ScriptedDrawer other = ScriptedDrawer.first(taken);
    CreateSessionResponse r2 =
        live(b -> b.sessionIds(other)).store().createSession(params.toBuilder().setTitle("mine").build());
    assertTrue(r2.getCreated());
    assertEquals(List.of(taken, r2.getSession().getId()), other.drawn());
    assertEquals("mine", meta(c, r2.getSession().getId()).getTitle());

    assertEquals(before, meta(c, taken), "the taken session is unchanged");
  }

  @Test
  void forkDrawsAgainWhenItsDrawnSessionIdIsTaken() {
    SessiondClient c = live();
    String source = newSession(c);
    c.session()
        .append(AppendRequest.newBuilder().setWorkspace(WORKSPACE).setSession(source).addEntries(Messages.userMessage("fork me")).build());
    String taken = newSession(c);
    SessionMeta before = meta(c, taken);
    List<String> takenEntries = entryIds(c, taken);

    ScriptedDrawer ids = ScriptedDrawer.first(taken);
    ForkSessionResponse fork =
        live(b -> b.sessionIds(ids))
            .store()
            .forkSession(ForkSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(source).build());
    String id = fork.getSession().getId();
    assertNotEquals(taken, id);
    assertEquals(List.of(taken, id), ids.drawn());
    assertEquals(source, fork.getSession().getForkedFrom().getSessionId());
    assertEquals(source, meta(c, id).getForkedFrom().getSessionId());

    assertEquals(before, meta(c, taken), "the taken session is unchanged");
    assertEquals(takenEntries, entryIds(c, taken));
  }

  @Test
  void importDrawsAgainWhenItsDrawnSessionIdIsTaken() {
    SessiondClient c = live();
    ImportSessionRequest log = Ids.fill(anonymousLog("the same log"));
    String taken = log.getSessionId();
    assertTrue(c.store().importSession(log).getCreated());
    SessionMeta before = meta(c, taken);
    List<String> takenEntries = entryIds(c, taken);

    // The same log: the server answers created=false with the taken session.
    ScriptedDrawer same = ScriptedDrawer.first(taken);
    ImportSessionResponse r = live(b -> b.sessionIds(same)).store().importSession(log.toBuilder().clearSessionId().build());
    assertTrue(r.getCreated(), "a new session, not the taken one: " + r);
    assertNotEquals(taken, r.getSession().getId());
    assertEquals(List.of(taken, r.getSession().getId()), same.drawn());
    assertEquals(takenEntries, entryIds(c, r.getSession().getId()), "the same log, under the new id");

    // Another log: ALREADY_EXISTS.
    ScriptedDrawer other = ScriptedDrawer.first(taken);
    ImportSessionResponse r2 = live(b -> b.sessionIds(other)).store().importSession(anonymousLog("another log"));
    assertTrue(r2.getCreated());
    assertEquals(List.of(taken, r2.getSession().getId()), other.drawn());
    assertEquals(2, entryIds(c, r2.getSession().getId()).size());

    assertEquals(before, meta(c, taken), "the taken session is unchanged");
    assertEquals(takenEntries, entryIds(c, taken));
  }

  @Test
  void aCreateWhoseReplyWasLostIsNotDrawnAgain() {
    AttemptProbe probe = new AttemptProbe(StoreServiceGrpc.getCreateSessionMethod(), "lose");
    ScriptedDrawer ids = ScriptedDrawer.first();
    SessiondClient c = live(b -> b.attemptInterceptor(probe).retry(FAST).sessionIds(ids));
    CreateSessionResponse r =
        c.store().createSession(CreateSessionRequest.newBuilder().setWorkspace(WORKSPACE).setTitle("lost reply").build());
    assertEquals(2, probe.attempts.get(), "the lost reply, then the retry");
    assertFalse(r.getCreated(), "the lost attempt created it: the retry found it");
    assertEquals(ids.drawn(), List.of(r.getSession().getId()), "drawn once: the caller's own session");
    assertEquals("lost reply", meta(c, r.getSession().getId()).getTitle());
  }

  @Test
  void aSessionIdTheCallerGaveIsNotDrawnAgain() {
    ScriptedDrawer ids = ScriptedDrawer.first();
    SessiondClient c = live(b -> b.sessionIds(ids));
    CreateSessionRequest given =
        CreateSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSessionId(Ids.newSessionId()).setTitle("given").build();
    String id = given.getSessionId();
    assertTrue(c.store().createSession(given).getCreated());
    CreateSessionResponse again = c.store().createSession(given);
    assertFalse(again.getCreated(), "equal parameters: the idempotent repeat");
    assertEquals(id, again.getSession().getId());
    wantCode(
        Status.Code.ALREADY_EXISTS,
        "CreateSession under the caller's id with other parameters",
        () -> c.store().createSession(given.toBuilder().setTitle("other").build()));
    String source = newSession(c);
    wantCode(
        Status.Code.ALREADY_EXISTS,
        "ForkSession under the caller's id",
        () -> c.store().forkSession(ForkSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(source).setSessionId(id).build()));
    ImportSessionRequest recorded = anonymousLog("recorded");
    ImportSessionRequest.Builder rb = recorded.toBuilder();
    rb.getEntriesBuilder(0).getSessionInfoBuilder().setSessionId(id);
    wantCode(Status.Code.ALREADY_EXISTS, "ImportSession under the id its root records", () -> c.store().importSession(rb.build()));
    assertEquals(List.of(source), ids.drawn(), "only newSession's id was drawn");
    assertEquals("given", meta(c, id).getTitle());
  }

  @Test
  void takenSessionIdsAreDrawnEightTimesAtMost() {
    SessiondClient c = live();
    String taken = newSession(c);
    ScriptedDrawer always = ScriptedDrawer.always(taken);
    AttemptProbe probe = new AttemptProbe(StoreServiceGrpc.getCreateSessionMethod());
    SessiondClient d = live(b -> b.retry(RetryPolicy.NONE).attemptInterceptor(probe).sessionIds(always));
    wantCode(
        Status.Code.ALREADY_EXISTS,
        "CreateSession drawing a taken id every time",
        () -> d.store().createSession(CreateSessionRequest.newBuilder().setWorkspace(WORKSPACE).setTitle("never").build()));
    assertEquals(8, always.drawn().size());
    assertEquals(8, probe.attempts.get(), "retries off: one attempt per draw");
  }

  @Test
  void watchEndsWithNotFoundWhenTheSessionIsDeleted() {
    SessiondClient c = live();
    String id = newSession(c);
    try (EntryWatch w =
        c.watchEntries(WatchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build())) {
      assertEquals(1, w.next().getEntry().getSeq());
      c.store().deleteSession(DeleteSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build());
      SessiondException e =
          assertThrows(
              SessiondException.class,
              () -> {
                while (w.hasNext()) {
                  if (w.next().hasEntry()) {
                    fail("an entry after the delete");
                  }
                }
              });
      assertEquals(Status.Code.NOT_FOUND, e.code());
      assertEquals(0, w.reconnects());
    }
  }

  @Test
  void watchCloseEndsHasNext() throws Exception {
    SessiondClient c = live();
    String id = newSession(c);
    EntryWatch w =
        c.watchEntries(WatchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setAfterSeq(1).build());
    CompletableFuture<Boolean> reader =
        CompletableFuture.supplyAsync(
            () -> {
              while (w.hasNext()) {
                w.next();
              }
              return false;
            });
    Thread.sleep(200);
    assertFalse(reader.isDone());
    w.close();
    assertFalse(reader.get(5, TimeUnit.SECONDS));
  }

  @Test
  void readStateAndReadTreeMergePages() {
    SessiondClient c = live();
    String id = newSession(c);
    AppendRequest.Builder app = AppendRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id);
    for (int i = 0; i < 5; i++) {
      app.addEntries(Messages.userMessage("m" + i));
    }
    AppendRequest sent = Ids.fill(app.build());
    c.session().append(sent);
    GetStateRequest stateReq = GetStateRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setPageSize(2).build();
    GetStateResponse first = c.session().getState(stateReq);
    assertEquals(2, first.getState().getMessagesCount());
    assertFalse(first.getNextPageToken().isEmpty(), "the server does not page: this test proves nothing");
    GetStateResponse st = c.readState(stateReq);
    assertEquals("", st.getNextPageToken());
    assertEquals(5, st.getState().getMessagesCount());
    assertEquals("m4", Messages.textOf(st.getState().getMessages(4)));
    GetTreeResponse tree =
        c.readTree(GetTreeRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setPageSize(2).build());
    assertEquals("", tree.getNextPageToken());
    assertEquals(6, tree.getNodesCount());
    assertEquals(sent.getEntries(4).getId(), tree.getNodes(5).getId());
  }

  /**
   * Appends a user message (a short text and an image) and an assistant
   * message (a thinking part with a signature, then a text).
   */
  static AppendRequest bigAppend(SessiondClient c, String id, ByteString image, String thinking, String text) {
    AppendRequest req =
        Ids.fill(
            AppendRequest.newBuilder()
                .setWorkspace(WORKSPACE)
                .setSession(id)
                .addEntries(
                    Entry.newBuilder()
                        .setMessage(
                            BlobsTest.message(
                                Role.ROLE_USER, Messages.textPart("look at this"), BlobsTest.image("image/png", image))))
                .addEntries(
                    Entry.newBuilder()
                        .setMessage(
                            BlobsTest.message(
                                Role.ROLE_ASSISTANT,
                                BlobsTest.thinking(thinking, "signature-1"),
                                Messages.textPart(text))))
                .build());
    c.session().withDeadlineAfter(60, TimeUnit.SECONDS).append(req);
    return req;
  }

  /** The parts of a user and an assistant message are those bigAppend sent, byte for byte. */
  static void checkParts(String where, AppendRequest sent, Message user, Message assistant) {
    List<ContentPart> want = new ArrayList<>(sent.getEntries(0).getMessage().getContentList());
    want.addAll(sent.getEntries(1).getMessage().getContentList());
    List<ContentPart> got = new ArrayList<>(user.getContentList());
    got.addAll(assistant.getContentList());
    assertEquals(want.size(), got.size(), where + ": parts");
    for (int i = 0; i < want.size(); i++) {
      ContentPart w = want.get(i);
      ContentPart g = got.get(i);
      // Not assertEquals: a message of 5 MiB is not printed.
      assertTrue(
          w.equals(g),
          where + ": part " + i + " is a " + g.getPartCase() + " (" + g.getSerializedSize() + " bytes, "
              + (g.hasBlob() ? g.getBlob().toString().trim() : "") + "), want a " + w.getPartCase() + " ("
              + w.getSerializedSize() + " bytes)");
    }
  }

  /**
   * A 5 MiB image (over the server's 4 MiB message limit: uploaded with
   * PutBlob first), a 360 KB thinking part (over the 256 KiB threshold, but
   * with the image uploaded it fits half of 4 MiB: sent inline) and a 200 KB
   * text (sent inline), both made blobs by the server, come back byte for
   * byte from GetState, readState, GetEntries and the watch; the log read
   * back (over 5 MiB) imports as another session, its large parts uploaded
   * as Append's are.
   */
  @Test
  void blobsComeBackByteForByte() {
    SessiondClient c = live();
    String id = newSession(c);
    ByteString image = BlobsTest.bytes(5 * 1024 * 1024, 1);
    String thinking = "thought. ".repeat(40_000);
    String text = "ß".repeat(100_000);
    AppendRequest sent = bigAppend(c, id, image, thinking, text);
    String userId = sent.getEntries(0).getId();
    String assistantId = sent.getEntries(1).getId();

    GetStateRequest stateReq = GetStateRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build();
    GetStateResponse st = c.session().withDeadlineAfter(60, TimeUnit.SECONDS).getState(stateReq);
    assertEquals(2, st.getState().getMessagesCount());
    checkParts("GetState", sent, st.getState().getMessages(0).getMessage(), st.getState().getMessages(1).getMessage());
    st = c.readState(stateReq);
    checkParts("readState", sent, st.getState().getMessages(0).getMessage(), st.getState().getMessages(1).getMessage());

    GetEntriesResponse entries;
    try {
      entries =
          c.sessionFuture()
              .getEntries(GetEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build())
              .get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw SessiondException.from(e);
    }
    Map<String, Message> byId = new HashMap<>();
    for (Entry e : entries.getEntriesList()) {
      byId.put(e.getId(), e.getMessage());
    }
    checkParts("GetEntries (the future stub)", sent, byId.get(userId), byId.get(assistantId));

    Map<String, Message> seen = new HashMap<>();
    try (EntryWatch w = c.watchEntries(WatchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build())) {
      while (seen.size() < 2) {
        WatchEntriesResponse ev = w.poll(Duration.ofSeconds(60));
        assertTrue(ev != null, "no entry within 60 s");
        if (ev.hasEntry() && (ev.getEntry().getId().equals(userId) || ev.getEntry().getId().equals(assistantId))) {
          seen.put(ev.getEntry().getId(), ev.getEntry().getMessage());
        }
      }
    }
    checkParts("the watch", sent, seen.get(userId), seen.get(assistantId));

    String copyId = Ids.newSessionId();
    ImportSessionResponse imported =
        c.store()
            .withDeadlineAfter(60, TimeUnit.SECONDS)
            .importSession(
                ImportSessionRequest.newBuilder()
                    .setWorkspace(WORKSPACE)
                    .setSessionId(copyId)
                    .addAllEntries(entries.getEntriesList())
                    .build());
    assertEquals(copyId, imported.getSession().getId());
    st = c.readState(GetStateRequest.newBuilder().setWorkspace(WORKSPACE).setSession(copyId).build());
    assertEquals(2, st.getState().getMessagesCount());
    checkParts("the imported copy", sent, st.getState().getMessages(0).getMessage(), st.getState().getMessages(1).getMessage());
  }

  /**
   * A client that keeps references gets them (sha256, size, part, media type,
   * the thinking's signature, a preview of a text) from GetState, GetEntries
   * and the watch, and reads the blob with getBlob, whole and in ranges.
   */
  @Test
  void blobRefsAndGetBlobRanges() {
    SessiondClient c = live();
    SessiondClient refs = live(b -> b.blobRefs(true));
    String id = newSession(c);
    ByteString image = BlobsTest.bytes(2 * 1024 * 1024 + 3, 2);
    String thinking = "hmm ".repeat(70_000);
    String text = "ß".repeat(100_000);
    AppendRequest sent = bigAppend(c, id, image, thinking, text);

    GetStateResponse st =
        refs.session().getState(GetStateRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    assertEquals(2, st.getState().getMessagesCount());
    Message user = st.getState().getMessages(0).getMessage();
    Message assistant = st.getState().getMessages(1).getMessage();
    assertEquals(Messages.textPart("look at this"), user.getContent(0), "a small part stays inline");
    BlobRef img = wantRef("image", user.getContent(1), image, BlobPart.BLOB_PART_IMAGE, "image/png");
    BlobRef th =
        wantRef(
            "thinking",
            assistant.getContent(0),
            ByteString.copyFromUtf8(thinking),
            BlobPart.BLOB_PART_THINKING,
            BlobParts.TEXT_MEDIA_TYPE);
    assertEquals("signature-1", th.getSignature());
    assertFalse(th.getPreview().isEmpty());
    assertTrue(thinking.startsWith(th.getPreview()), th.getPreview());
    BlobRef tx =
        wantRef("text", assistant.getContent(1), ByteString.copyFromUtf8(text), BlobPart.BLOB_PART_TEXT, BlobParts.TEXT_MEDIA_TYPE);
    assertFalse(tx.getPreview().isEmpty());
    assertTrue(text.startsWith(tx.getPreview()), tx.getPreview());
    assertEquals(
        List.of(img),
        BlobParts.blobRefsOf(
            refs.session()
                .getEntries(GetEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build())
                .getEntriesList()
                .stream()
                .filter(e -> e.getId().equals(sent.getEntries(0).getId()))
                .findFirst()
                .orElseThrow()),
        "GetEntries keeps references too");
    try (EntryWatch w = refs.watchEntries(WatchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setAfterSeq(1).build())) {
      assertEquals(List.of(img), BlobParts.blobRefsOf(w.next().getEntry()), "the watch too");
    }
    assertEquals(
        BlobsTest.image("image/png", image),
        BlobParts.resolvedPart(img, refs.getBlob(WORKSPACE, img.getSha256(), 0, 0)),
        "the part back from getBlob");

    assertTrue(image.equals(ByteString.copyFrom(refs.getBlob(WORKSPACE, img.getSha256(), 0, 0))), "the whole blob");
    long[][] ranges = {{1000, 10}, {1024 * 1024 - 5, 10}, {2 * 1024 * 1024, 0}, {5, 2 * 1024 * 1024}};
    for (long[] r : ranges) {
      byte[] got = refs.getBlob(WORKSPACE, img.getSha256(), r[0], r[1]);
      long end = r[1] > 0 ? Math.min(r[0] + r[1], image.size()) : image.size(); // a length past the end reads to the end
      assertTrue(
          image.substring((int) r[0], (int) end).equals(ByteString.copyFrom(got)),
          "getBlob from " + r[0] + ", " + r[1] + " bytes: got " + got.length + " bytes");
    }
    wantCode(Status.Code.INVALID_ARGUMENT, "getBlob from a negative offset", () -> refs.getBlob(WORKSPACE, img.getSha256(), -1, 0));
    wantCode(
        Status.Code.INVALID_ARGUMENT,
        "getBlob from past the end",
        () -> refs.getBlob(WORKSPACE, img.getSha256(), image.size() + 1, 0));
  }

  /** size random bytes: content no earlier run can have stored (a fixed SESSIOND_WORKSPACE). */
  static ByteString randomBytes(int size) {
    byte[] b = new byte[size];
    ThreadLocalRandom.current().nextBytes(b);
    return ByteString.copyFrom(b);
  }

  /**
   * Large parts go up first only when the request cannot carry them (the
   * calls counted per attempt): a 1 MiB image is one Append, no PutBlob; 1.5
   * + 1 + 0.75 MiB images in one Append upload the 1.5 MiB one alone (two
   * PutBlob chunks), then the Append. The server holds all four as blobs
   * (references for a client that keeps them), and all four come back byte
   * for byte.
   */
  @Test
  void largePartsGoUpFirstOnlyWhenTheRequestCannotCarryThem() {
    AttemptLog calls = new AttemptLog();
    SessiondClient c = live(b -> b.attemptInterceptor(calls));
    SessiondClient refs = live(b -> b.blobRefs(true));
    String id = newSession(c);
    int mib = 1024 * 1024;
    List<ByteString> one = List.of(randomBytes(mib));
    calls.take();
    c.session()
        .withDeadlineAfter(60, TimeUnit.SECONDS)
        .append(BlobsTest.imagesAppend(one).toBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    assertEquals(List.of("Append"), calls.take(), "a 1 MiB image fits half of 4 MiB");

    List<ByteString> three = List.of(randomBytes(3 * mib / 2), randomBytes(mib), randomBytes(3 * mib / 4));
    c.session()
        .withDeadlineAfter(60, TimeUnit.SECONDS)
        .append(BlobsTest.imagesAppend(three).toBuilder().setWorkspace(WORKSPACE).setSession(id).build());
    assertEquals(
        List.of("PutBlob", "PutBlob", "Append"),
        calls.take(),
        "3.25 MiB: the 1.5 MiB image goes up alone, in two 1 MiB chunks");

    List<ByteString> all = new ArrayList<>(one);
    all.addAll(three);
    GetStateRequest stateReq = GetStateRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build();
    GetStateResponse st = c.readState(stateReq);
    assertEquals(all.size(), st.getState().getMessagesCount());
    GetStateResponse withRefs = refs.session().withDeadlineAfter(60, TimeUnit.SECONDS).getState(stateReq);
    assertEquals(all.size(), withRefs.getState().getMessagesCount());
    for (int i = 0; i < all.size(); i++) {
      ContentPart got = st.getState().getMessages(i).getMessage().getContent(0);
      // Not assertEquals: a part of a MiB is not printed.
      assertTrue(
          BlobsTest.image("image/png", all.get(i)).equals(got),
          "image " + i + " (" + all.get(i).size() + " bytes) back byte for byte: got a " + got.getPartCase()
              + " of " + got.getSerializedSize() + " bytes");
      wantRef(
          "image " + i + " is a blob",
          withRefs.getState().getMessages(i).getMessage().getContent(0),
          all.get(i),
          BlobPart.BLOB_PART_IMAGE,
          "image/png");
    }
  }

  static BlobRef wantRef(String where, ContentPart p, ByteString data, BlobPart part, String mediaType) {
    assertTrue(p.hasBlob(), where + ": a " + p.getPartCase() + ", not a reference");
    BlobRef ref = p.getBlob();
    assertEquals(BlobParts.sha256Hex(data.toByteArray()), ref.getSha256(), where);
    assertEquals(data.size(), ref.getSize(), where);
    assertEquals(part, ref.getPart(), where);
    assertEquals(mediaType, ref.getMediaType(), where);
    return ref;
  }

  @Test
  void unknownBlobRefIsFailedPrecondition() {
    SessiondClient c = live();
    String id = newSession(c);
    String missing = BlobParts.sha256Hex("never uploaded".getBytes(StandardCharsets.UTF_8));
    SessiondException e =
        wantCode(
            Status.Code.FAILED_PRECONDITION,
            "Append of a reference to a blob never uploaded",
            () ->
                c.session()
                    .append(
                        AppendRequest.newBuilder()
                            .setWorkspace(WORKSPACE)
                            .setSession(id)
                            .addEntries(
                                Entry.newBuilder()
                                    .setMessage(
                                        BlobsTest.message(
                                            Role.ROLE_USER,
                                            ContentPart.newBuilder()
                                                .setBlob(
                                                    BlobRef.newBuilder()
                                                        .setSha256(missing)
                                                        .setSize(14)
                                                        .setPart(BlobPart.BLOB_PART_TEXT)
                                                        .setMediaType(BlobParts.TEXT_MEDIA_TYPE))
                                                .build())))
                            .build()));
    assertTrue(e.serverMessage().contains(missing), "the error names the blob: " + e.serverMessage());
    assertEquals(
        1,
        c.session()
            .getEntries(GetEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build())
            .getEntriesCount(),
        "the session's first entry alone after the refused append");
    wantCode(Status.Code.NOT_FOUND, "getBlob of a blob never uploaded", () -> c.getBlob(WORKSPACE, missing, 0, 0));
  }

  @Test
  void callTimeoutBindsUnaryCallsOnly() {
    SessiondClient writer = live();
    SessiondClient c = live(b -> b.callTimeout(Duration.ofNanos(1)));
    wantCode(
        Status.Code.DEADLINE_EXCEEDED,
        "GetSession with a 1 ns call timeout",
        () -> c.store().getSession(GetSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession("whatever").build()));
    String id = newSession(writer);
    try (EntryWatch w =
        c.watchEntries(WatchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).setAfterSeq(1).build())) {
      long quiet = System.nanoTime() + 300_000_000L;
      while (System.nanoTime() < quiet) {
        WatchEntriesResponse hb = w.poll(Duration.ofMillis(50));
        assertTrue(hb == null || hb.hasHeartbeat(), "nothing but heartbeats yet: " + hb);
      }
      writer.session()
          .append(
              AppendRequest.newBuilder()
                  .setWorkspace(WORKSPACE)
                  .setSession(id)
                  .addEntries(Messages.userMessage("late"))
                  .build());
      WatchEntriesResponse ev;
      do {
        ev = w.poll(Duration.ofSeconds(10));
        assertTrue(ev != null, "no entry within 10 s");
      } while (!ev.hasEntry());
      assertEquals(2, ev.getEntry().getSeq());
      assertEquals(0, w.reconnects(), "the entry came on the first stream");
    }
  }

  /**
   * A watch over a connection that goes silent without closing: the
   * keepalive PING goes unanswered, grpc-java closes the connection, and the
   * watch resumes on a new one with no gap and no duplicate. grpc-java pings
   * after 10 s of silence at the earliest, so this test takes about 11 s.
   */
  @Test
  void keepaliveFindsADeadConnection() throws Exception {
    SessiondClient direct = live();
    FreezingProxy proxy = new FreezingProxy(ADDR);
    cleanup.add(proxy);
    SessiondClient.Builder b =
        SessiondClient.builder(proxy.address()).keepalive(Duration.ofSeconds(10), Duration.ofSeconds(1));
    String token = System.getenv("SESSIOND_TOKEN");
    if (token != null && !token.isEmpty()) {
      b.token(token);
    }
    SessiondClient viaProxy = b.build();
    cleanup.add(viaProxy);
    String id = newSession(direct);
    List<Status.Code> reasons = Collections.synchronizedList(new ArrayList<>());
    EntryWatch w =
        viaProxy.watchEntries(
            WatchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build(),
            WatchOptions.DEFAULT
                .withDelays(Duration.ofMillis(50), Duration.ofMillis(500))
                .withOnReconnect((s, after) -> reasons.add(s.getCode())));
    cleanup.add(w);
    List<String> got = new ArrayList<>();
    Consumer<String> until =
        want -> {
          while (true) {
            WatchEntriesResponse ev = w.poll(Duration.ofSeconds(40));
            if (ev == null) {
              fail("no entry within 40 s after " + got);
            }
            if (ev.hasEntry()) {
              got.add(ev.getEntry().getId());
              if (ev.getEntry().getId().equals(want)) {
                return;
              }
            }
          }
        };
    java.util.function.Function<String, String> appendOne =
        text -> {
          AppendRequest a =
              Ids.fill(
                  AppendRequest.newBuilder()
                      .setWorkspace(WORKSPACE)
                      .setSession(id)
                      .addEntries(Messages.userMessage(text))
                      .build());
          direct.session().append(a);
          return a.getEntries(0).getId();
        };
    String a = appendOne.apply("before the freeze");
    until.accept(a);
    proxy.freeze();
    String b1 = appendOne.apply("after 1");
    String b2 = appendOne.apply("after 2");
    long start = System.nanoTime();
    until.accept(b2);
    assertEquals(4, got.size(), got.toString());
    assertEquals(List.of(a, b1, b2), got.subList(1, 4));
    assertFalse(reasons.isEmpty());
    assertEquals(Status.Code.UNAVAILABLE, reasons.get(0), reasons.toString());
    assertTrue(proxy.accepted() >= 2, "the proxy accepted " + proxy.accepted() + " connections");
    System.out.println(
        "keepaliveFindsADeadConnection: found dead and resumed "
            + (System.nanoTime() - start) / 1_000_000
            + " ms after the freeze; reconnects "
            + reasons);
  }

  /**
   * Needs whoever runs it to restart the server (SESSIOND_RESTART_DIR, the
   * handshake of conformance/README.md). Entries appended after the restart,
   * while the watch is still disconnected, must arrive once each, in order.
   */
  @Test
  void watchResumesAcrossARestart() throws Exception {
    RestartHandshake restart = RestartHandshake.fromEnv();
    Assumptions.assumeTrue(
        restart != null, "*** SKIPPED: SESSIOND_RESTART_DIR is not set (nobody to restart the server) ***");
    SessiondClient c = live(b -> b.retry(new RetryPolicy(20, Duration.ofMillis(50), Duration.ofSeconds(1))));
    String id = newSession(c);
    AppendRequest first =
        Ids.fill(
            AppendRequest.newBuilder()
                .setWorkspace(WORKSPACE)
                .setSession(id)
                .addEntries(Messages.userMessage("before 1"))
                .addEntries(Messages.userMessage("before 2"))
                .build());
    c.session().append(first);
    List<String> reasons = Collections.synchronizedList(new ArrayList<>());
    EntryWatch w =
        c.watchEntries(
            WatchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build(),
            WatchOptions.DEFAULT
                .withDelays(Duration.ofMillis(50), Duration.ofMillis(500))
                .withOnReconnect((s, after) -> reasons.add(s.getCode() + "@" + after)));
    cleanup.add(w);
    List<String> got = new ArrayList<>();
    Runnable next =
        () -> {
          while (true) {
            WatchEntriesResponse ev = w.poll(Duration.ofSeconds(30));
            if (ev == null) {
              fail("no entry within 30 s after " + got);
            }
            if (ev.hasEntry()) {
              got.add(ev.getEntry().getSeq() + ":" + ev.getEntry().getId());
              return;
            }
          }
        };
    for (int i = 0; i < 3; i++) {
      next.run();
    }

    restart.restart(Duration.ofSeconds(60));

    AppendRequest second =
        Ids.fill(
            AppendRequest.newBuilder()
                .setWorkspace(WORKSPACE)
                .setSession(id)
                .addEntries(Messages.userMessage("after 1"))
                .addEntries(Messages.userMessage("after 2"))
                .build());
    c.session().withDeadlineAfter(30, TimeUnit.SECONDS).append(second);
    next.run();
    next.run();
    List<String> want =
        List.of(
            got.get(0),
            "2:" + first.getEntries(0).getId(),
            "3:" + first.getEntries(1).getId(),
            "4:" + second.getEntries(0).getId(),
            "5:" + second.getEntries(1).getId());
    assertTrue(got.get(0).startsWith("1:"), got.toString());
    assertEquals(want, got);
    assertTrue(w.reconnects() >= 1, "no resume: " + w.reconnects());
    assertEquals(5, w.lastSeq());
    System.out.println("watchResumesAcrossARestart: resumed after " + reasons);
    assertTrue(reasons.stream().allMatch(r -> r.endsWith("@3")), reasons.toString());
  }

  /**
   * Needs a second server with TLS and bearer tokens: SESSIOND_TLS_ADDR
   * (host:port), SESSIOND_TLS_CA (the CA's PEM file) and SESSIOND_TLS_TOKEN
   * (a token it accepts for every workspace).
   */
  @Test
  void tlsAndToken() throws Exception {
    String addr = System.getenv("SESSIOND_TLS_ADDR");
    String caFile = System.getenv("SESSIOND_TLS_CA");
    String token = System.getenv("SESSIOND_TLS_TOKEN");
    Assumptions.assumeTrue(
        addr != null && caFile != null && token != null,
        "*** SKIPPED: SESSIOND_TLS_ADDR, SESSIOND_TLS_CA and SESSIOND_TLS_TOKEN are not all set (no TLS server with tokens) ***");
    byte[] ca = Files.readAllBytes(Path.of(caFile));
    SessiondClient c = SessiondClient.builder(addr).tls(ca).token(token).build();
    cleanup.add(c);
    String id =
        c.store().createSession(CreateSessionRequest.newBuilder().setWorkspace(WORKSPACE).build()).getSession().getId();
    try (EntryWatch w = c.watchEntries(WatchEntriesRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build())) {
      assertEquals(1, w.next().getEntry().getSeq(), "a watch carries the token too");
    }
    GetSessionRequest get = GetSessionRequest.newBuilder().setWorkspace(WORKSPACE).setSession(id).build();
    SessiondClient noToken = SessiondClient.builder(addr).tls(ca).build();
    cleanup.add(noToken);
    wantCode(Status.Code.UNAUTHENTICATED, "no token", () -> noToken.store().getSession(get));
    SessiondClient wrong = SessiondClient.builder(addr).tls(ca).token("wrong-token-0123456789").build();
    cleanup.add(wrong);
    wantCode(Status.Code.UNAUTHENTICATED, "a wrong token", () -> wrong.store().getSession(get));
    SessiondClient plain = SessiondClient.builder(addr).token(token).retry(RetryPolicy.NONE).build();
    cleanup.add(plain);
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> plain.store().getSession(get));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), "plaintext to a TLS port: " + e);
    assertThrows(
        IllegalArgumentException.class,
        () -> SessiondClient.builder(addr).tls("not a certificate".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
  }
}
