package io.github.sessiond.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.sessiond.v1.WatchEntriesRequest;
import io.github.sessiond.v1.WatchEntriesResponse;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The resumable watch against an in-process server whose streams break on command. */
class EntryWatchTest {
  static final WatchOptions FAST = WatchOptions.DEFAULT.withDelays(Duration.ofMillis(5), Duration.ofMillis(20));

  FakeServer server;
  SessiondClient client;

  @BeforeEach
  void start() throws Exception {
    server = new FakeServer();
    client = server.client().build();
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    server.close();
  }

  static WatchEntriesRequest from(long afterSeq) {
    return WatchEntriesRequest.newBuilder().setSession("s").setAfterSeq(afterSeq).build();
  }

  List<Long> take(EntryWatch w, int n) {
    List<Long> seqs = new ArrayList<>();
    while (seqs.size() < n) {
      WatchEntriesResponse r = w.poll(Duration.ofSeconds(10));
      if (r == null) {
        throw new AssertionError("no entry within 10 s after " + seqs);
      }
      if (r.hasEntry()) {
        seqs.add(r.getEntry().getSeq());
      }
    }
    return seqs;
  }

  @Test
  void resumesAfterEveryBrokenStreamFromTheLastSeqSkippingReplays() throws Exception {
    server.watch(Status.UNAVAILABLE.withDescription("server restart"), 3, 4);
    server.watch(Status.INTERNAL, 4, 5); // 4 replayed: skipped
    server.watch(Status.UNKNOWN);
    server.watch(Status.DEADLINE_EXCEEDED, 6);
    server.watch(Status.CANCELLED);
    server.watch(Status.ABORTED);
    server.watch(Status.OK, 7); // a clean end, as a proxy's timeout
    server.watch(null, 8);
    List<String> reasons = Collections.synchronizedList(new ArrayList<>());
    try (EntryWatch w =
        client.watchEntries(
            from(2), FAST.withOnReconnect((s, after) -> reasons.add(s.getCode() + "@" + after)))) {
      assertEquals(List.of(3L, 4L, 5L, 6L, 7L, 8L), take(w, 6));
      assertEquals(7, w.reconnects());
      assertEquals(8, w.lastSeq());
      List<Long> afterSeqs = new ArrayList<>();
      for (WatchEntriesRequest r : server.watchRequests) {
        afterSeqs.add(r.getAfterSeq());
      }
      assertEquals(List.of(2L, 4L, 5L, 5L, 6L, 6L, 6L, 7L), afterSeqs);
      assertEquals(
          List.of("UNAVAILABLE@4", "INTERNAL@5", "UNKNOWN@5", "DEADLINE_EXCEEDED@6", "CANCELLED@6", "ABORTED@6", "OK@7"),
          reasons);
    }
  }

  @Test
  void notFoundEndsTheWatch() {
    server.watch(Status.NOT_FOUND.withDescription("session s was deleted"), 1);
    try (EntryWatch w = client.watchEntries(from(0), FAST)) {
      assertTrue(w.hasNext());
      assertEquals(1, w.next().getEntry().getSeq());
      SessiondException e = assertThrows(SessiondException.class, w::hasNext);
      assertEquals(Status.Code.NOT_FOUND, e.code());
      assertEquals("session s was deleted", e.serverMessage());
      assertThrows(SessiondException.class, w::hasNext, "it stays ended");
      assertEquals(0, w.reconnects());
      assertEquals(1, server.watchRequests.size());
    }
  }

  @Test
  void closeEndsABlockedHasNextAndTheStream() throws Exception {
    server.watch(null);
    EntryWatch w = client.watchEntries(from(0), FAST);
    CompletableFuture<Boolean> blocked = CompletableFuture.supplyAsync(w::hasNext);
    Thread.sleep(200);
    assertFalse(blocked.isDone());
    w.close();
    assertFalse(blocked.get(5, TimeUnit.SECONDS));
    assertFalse(w.hasNext());
    assertNull(w.poll(Duration.ofMillis(1)));
  }

  @Test
  void pollReturnsNullWhenNothingCame() {
    server.watch(null, 1);
    try (EntryWatch w = client.watchEntries(from(0), FAST)) {
      assertEquals(1, w.poll(Duration.ofSeconds(5)).getEntry().getSeq());
      assertNull(w.poll(Duration.ofMillis(100)));
    }
  }

  @Test
  void closingTheClientClosesItsWatches() throws Exception {
    server.watch(null);
    EntryWatch w = client.watchEntries(from(0), FAST);
    client.close();
    assertFalse(w.hasNext());
  }
}
