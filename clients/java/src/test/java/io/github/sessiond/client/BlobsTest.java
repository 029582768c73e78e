package io.github.sessiond.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.github.sessiond.v1.AppendRequest;
import io.github.sessiond.v1.BlobPart;
import io.github.sessiond.v1.BlobRef;
import io.github.sessiond.v1.ContentPart;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.GetBlobRequest;
import io.github.sessiond.v1.GetEntriesRequest;
import io.github.sessiond.v1.GetEntriesResponse;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.GetStateResponse;
import io.github.sessiond.v1.ImagePart;
import io.github.sessiond.v1.ImportSessionRequest;
import io.github.sessiond.v1.Message;
import io.github.sessiond.v1.PutBlobRequest;
import io.github.sessiond.v1.Role;
import io.github.sessiond.v1.SessionServiceGrpc;
import io.github.sessiond.v1.SessionState;
import io.github.sessiond.v1.StateMessage;
import io.github.sessiond.v1.StoreServiceGrpc;
import io.github.sessiond.v1.ThinkingPart;
import io.github.sessiond.v1.ToolCall;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.github.sessiond.v1.WatchEntriesResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Blob references resolved and large parts uploaded, against an in-process server. */
class BlobsTest {
  FakeServer server;

  @BeforeEach
  void start() throws Exception {
    server = new FakeServer();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  /** size bytes of a pattern that differs with seed. */
  static ByteString bytes(int size, int seed) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) (i * 197 + seed * 13 + (i >> 9));
    }
    return ByteString.copyFrom(b);
  }

  static String sha(ByteString data) {
    return BlobParts.sha256Hex(data);
  }

  static BlobRef.Builder refTo(ByteString data, BlobPart part, String mediaType) {
    return BlobRef.newBuilder().setSha256(sha(data)).setSize(data.size()).setPart(part).setMediaType(mediaType);
  }

  static ContentPart part(BlobRef.Builder ref) {
    return ContentPart.newBuilder().setBlob(ref).build();
  }

  static ContentPart image(String mime, ByteString data) {
    return ContentPart.newBuilder().setImage(ImagePart.newBuilder().setMimeType(mime).setData(data)).build();
  }

  static ContentPart thinking(String text, String signature) {
    ThinkingPart.Builder t = ThinkingPart.newBuilder().setThinking(text);
    if (signature != null) {
      t.setSignature(signature);
    }
    return ContentPart.newBuilder().setThinking(t).build();
  }

  static Message message(Role role, ContentPart... parts) {
    return Message.newBuilder().setRole(role).addAllContent(List.of(parts)).build();
  }

  static Entry entry(String id, Message m) {
    return Entry.newBuilder().setId(id).setMessage(m).build();
  }

  static GetStateResponse state(Message... messages) {
    SessionState.Builder s = SessionState.newBuilder();
    for (int i = 0; i < messages.length; i++) {
      s.addMessages(StateMessage.newBuilder().setEntryId("m" + i).setMessage(messages[i]));
    }
    return GetStateResponse.newBuilder().setState(s).build();
  }

  static final GetStateRequest STATE = GetStateRequest.newBuilder().setSession("s").build();

  static SessiondException fails(Status.Code want, String what, Executable call) {
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call, what);
    SessiondException se = SessiondException.from(e);
    assertEquals(want, se.code(), what + ": " + e);
    return se;
  }

  @Test
  void partsOverTheThresholdBecomeReferencesAndComeBackTheSame() {
    ByteString img = bytes(101, 1);
    for (ContentPart p :
        List.of(
            Messages.textPart("x".repeat(101)),
            Messages.textPart("ß".repeat(51)), // 51 characters, 102 bytes
            thinking("t".repeat(200), "sig"),
            thinking("t".repeat(200), null),
            image("image/png", img))) {
      BlobParts.Content c = BlobParts.contentOf(p, 100);
      assertTrue(c != null, "over the threshold: " + p.getPartCase());
      BlobRef ref = c.refPart(sha(c.bytes())).getBlob();
      assertEquals(sha(c.bytes()), ref.getSha256());
      assertTrue(ref.getSha256().matches("[0-9a-f]{64}"), ref.getSha256());
      assertEquals(c.bytes().size(), ref.getSize());
      assertEquals("", ref.getPreview(), "the server sets the preview");
      assertEquals(p, BlobParts.resolvedPart(ref, c.bytes().toByteArray()), "the part back, field for field");
      switch (p.getPartCase()) {
        case IMAGE:
          assertEquals(BlobPart.BLOB_PART_IMAGE, ref.getPart());
          assertEquals("image/png", ref.getMediaType());
          assertFalse(ref.hasSignature());
          break;
        case THINKING:
          assertEquals(BlobPart.BLOB_PART_THINKING, ref.getPart());
          assertEquals(BlobParts.TEXT_MEDIA_TYPE, ref.getMediaType());
          assertEquals(p.getThinking().hasSignature(), ref.hasSignature());
          break;
        default:
          assertEquals(BlobPart.BLOB_PART_TEXT, ref.getPart());
          assertEquals(BlobParts.TEXT_MEDIA_TYPE, ref.getMediaType());
      }
    }
    assertNull(BlobParts.contentOf(Messages.textPart("x".repeat(100)), 100), "at the threshold: inline");
    assertNull(BlobParts.contentOf(Messages.textPart("ß".repeat(50)), 100), "100 bytes of UTF-8");
    assertNull(BlobParts.contentOf(image("image/png", bytes(100, 1)), 100));
    assertNull(
        BlobParts.contentOf(
            ContentPart.newBuilder().setToolCall(ToolCall.newBuilder().setId("x".repeat(200))).build(), 100),
        "a tool call never");
    assertNull(BlobParts.contentOf(part(refTo(img, BlobPart.BLOB_PART_IMAGE, "image/png")), 0), "a reference never");

    BlobRef text = BlobRef.newBuilder().setSha256("ab").setSize(1).setPart(BlobPart.BLOB_PART_TEXT).build();
    fails(Status.Code.DATA_LOSS, "a text blob that is not UTF-8", () -> BlobParts.resolvedPart(text, new byte[] {(byte) 0xff}));
    fails(Status.Code.DATA_LOSS, "bytes of another size", () -> BlobParts.resolvedPart(text, new byte[] {'a', 'b'}));
    fails(
        Status.Code.UNIMPLEMENTED,
        "a reference to no known part",
        () -> BlobParts.resolvedPart(text.toBuilder().setPart(BlobPart.BLOB_PART_UNSPECIFIED).build(), new byte[] {'a'}));
    Entry e = entry("e", message(Role.ROLE_USER, Messages.textPart("a"), part(refTo(img, BlobPart.BLOB_PART_IMAGE, "image/gif"))));
    assertEquals(List.of(e.getMessage().getContent(1).getBlob()), BlobParts.blobRefsOf(e));
  }

  @Test
  void theCacheDropsTheLeastRecentlyUsed() {
    BlobCache c = new BlobCache(10);
    c.put("a", bytes(4, 1));
    c.put("b", bytes(4, 2));
    assertEquals(bytes(4, 1), c.get("a"), "a is now the most recently used");
    c.put("c", bytes(4, 3));
    assertNull(c.get("b"), "b went first");
    assertEquals(List.of("a", "c"), c.keys());
    assertEquals(8, c.bytes());
    c.put("big", bytes(11, 4));
    assertNull(c.get("big"), "a blob over the cache's size is not kept");
    assertEquals(8, c.bytes());
    BlobCache none = new BlobCache(0);
    none.put("a", bytes(1, 1));
    assertNull(none.get("a"), "a cache of 0 bytes keeps nothing");
  }

  @Test
  void answersAreResolvedThroughEveryStubAndTheWatchAndCached() throws Exception {
    ByteString img = bytes(3 * 1024 * 1024 + 5, 1); // four chunks
    String text = "ß".repeat(50_000);
    String reasoning = "hmm ".repeat(30_000);
    for (ByteString b : List.of(img, ByteString.copyFromUtf8(text), ByteString.copyFromUtf8(reasoning))) {
      server.blobs.put(sha(b), b);
    }
    Message userRefs =
        message(Role.ROLE_USER, Messages.textPart("look"), part(refTo(img, BlobPart.BLOB_PART_IMAGE, "image/png")));
    Message assistantRefs =
        message(
            Role.ROLE_ASSISTANT,
            part(
                refTo(ByteString.copyFromUtf8(reasoning), BlobPart.BLOB_PART_THINKING, BlobParts.TEXT_MEDIA_TYPE)
                    .setSignature("sig")
                    .setPreview("hmm hmm")),
            part(refTo(ByteString.copyFromUtf8(text), BlobPart.BLOB_PART_TEXT, BlobParts.TEXT_MEDIA_TYPE).setPreview("ßß")));
    Message user = message(Role.ROLE_USER, Messages.textPart("look"), image("image/png", img));
    Message assistant = message(Role.ROLE_ASSISTANT, thinking(reasoning, "sig"), Messages.textPart(text));
    GetStateResponse withRefs = state(userRefs, assistantRefs);
    server.answer(SessionServiceGrpc.getGetStateMethod(), withRefs, withRefs, withRefs, withRefs);
    server.answer(
        SessionServiceGrpc.getGetEntriesMethod(),
        GetEntriesResponse.newBuilder()
            .addEntries(Entry.newBuilder().setId("root"))
            .addEntries(entry("u", userRefs))
            .addEntries(entry("a", assistantRefs))
            .build());
    server.watchEntries.put(2L, entry("u", userRefs));
    server.watchEntries.put(3L, entry("a", assistantRefs));

    try (SessiondClient c = server.client().build()) {
      GetStateResponse st = c.session().getState(STATE);
      assertEquals(state(user, assistant), st, "the blocking stub");
      assertEquals(3, server.requestsOf(GetBlobRequest.class).size(), "one read per blob");
      assertEquals(img.size() + 2L * text.length() + reasoning.length(), c.blobCache().bytes());

      assertEquals(st, c.sessionFuture().getState(STATE).get(10, TimeUnit.SECONDS), "the future stub");
      assertEquals(st, c.readState(STATE), "readState");
      assertEquals(3, server.requestsOf(GetBlobRequest.class).size(), "read again from the cache");

      CompletableFuture<GetEntriesResponse> entries = new CompletableFuture<>();
      c.sessionAsync()
          .getEntries(
              GetEntriesRequest.newBuilder().setSession("s").build(),
              new StreamObserver<GetEntriesResponse>() {
                @Override
                public void onNext(GetEntriesResponse r) {
                  entries.complete(r);
                }

                @Override
                public void onError(Throwable t) {
                  entries.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {}
              });
      GetEntriesResponse got = entries.get(10, TimeUnit.SECONDS);
      assertEquals(Entry.newBuilder().setId("root").build(), got.getEntries(0));
      assertEquals(user, got.getEntries(1).getMessage(), "the StreamObserver stub");
      assertEquals(assistant, got.getEntries(2).getMessage());

      server.watch(null, 1, 2, 3);
      try (EntryWatch w = c.watchEntries(WatchEntriesRequest.newBuilder().setSession("s").build())) {
        assertEquals("e1", w.next().getEntry().getId());
        assertEquals(user, w.next().getEntry().getMessage(), "the watch");
        Entry e = w.next().getEntry();
        assertEquals(3, e.getSeq());
        assertEquals(assistant, e.getMessage());
        assertEquals(3, w.lastSeq());
      }
      server.watch(Status.OK, 2);
      Iterator<WatchEntriesResponse> raw = c.session().watchEntries(WatchEntriesRequest.newBuilder().setSession("s").build());
      assertEquals(user, raw.next().getEntry().getMessage(), "the blocking stub's stream");
      assertFalse(raw.hasNext());
      assertEquals(3, server.requestsOf(GetBlobRequest.class).size());
    }

    try (SessiondClient refs = server.client().blobRefs(true).build()) {
      assertEquals(withRefs, refs.session().getState(STATE), "references kept");
      assertEquals(3, server.requestsOf(GetBlobRequest.class).size());
      assertEquals(img, ByteString.copyFrom(refs.getBlob("", sha(img), 0, 0)));
      assertEquals(img.substring(1024 * 1024 - 3, 1024 * 1024 + 7), ByteString.copyFrom(refs.getBlob("", sha(img), 1024 * 1024 - 3, 10)));
    }
  }

  @Test
  void contentThatDoesNotMatchItsReferenceIsDataLoss() {
    ByteString real = bytes(100_000, 2);
    ByteString other = bytes(100_000, 3);
    server.blobs.put(sha(real), other); // a server that lies
    ByteString notUtf8 = ByteString.copyFrom(new byte[] {'a', (byte) 0xc3});
    server.blobs.put(sha(notUtf8), notUtf8);
    ByteString fine = bytes(1000, 4);
    server.blobs.put(sha(fine), fine);
    try (SessiondClient c = server.client().build()) {
      server.answer(
          SessionServiceGrpc.getGetStateMethod(),
          state(message(Role.ROLE_USER, part(refTo(real, BlobPart.BLOB_PART_IMAGE, "image/png")))),
          state(message(Role.ROLE_USER, part(refTo(fine, BlobPart.BLOB_PART_IMAGE, "image/png").setSize(999)))),
          state(message(Role.ROLE_USER, part(refTo(notUtf8, BlobPart.BLOB_PART_TEXT, BlobParts.TEXT_MEDIA_TYPE)))),
          state(message(Role.ROLE_USER, part(refTo(bytes(10, 9), BlobPart.BLOB_PART_IMAGE, "image/png")))),
          state(message(Role.ROLE_USER, part(refTo(fine, BlobPart.BLOB_PART_UNSPECIFIED, "")))));
      SessiondException e = fails(Status.Code.DATA_LOSS, "content of another hash", () -> c.session().getState(STATE));
      assertTrue(e.serverMessage().contains(sha(real)), e.serverMessage());
      e = fails(Status.Code.DATA_LOSS, "content of another size", () -> c.session().getState(STATE));
      assertTrue(e.serverMessage().contains("999"), e.serverMessage());
      fails(Status.Code.DATA_LOSS, "a text that is not UTF-8", () -> c.session().getState(STATE));
      e = fails(Status.Code.NOT_FOUND, "a blob the server does not have", () -> c.session().getState(STATE));
      assertTrue(e.serverMessage().contains(sha(bytes(10, 9))), e.serverMessage());
      fails(Status.Code.UNIMPLEMENTED, "a part this client does not know", () -> c.session().getState(STATE));
      assertEquals(
          List.of("\0" + sha(notUtf8)), c.blobCache().keys(), "only content that matches its reference is kept");

      e = fails(Status.Code.DATA_LOSS, "getBlob of a whole blob is checked", () -> c.getBlob("", sha(real), 0, 0));
      assertTrue(e.serverMessage().contains(sha(real)), e.serverMessage());
      assertEquals(other.substring(5, 15), ByteString.copyFrom(c.getBlob("", sha(real), 5, 10)), "a range is not");
      fails(Status.Code.INVALID_ARGUMENT, "a negative offset", () -> c.getBlob("", sha(real), -1, 0));
      fails(Status.Code.NOT_FOUND, "getBlob of an unknown blob", () -> c.getBlob("", sha(bytes(10, 9)), 0, 0));

      server.watchEntries.put(2L, entry("u", message(Role.ROLE_USER, part(refTo(real, BlobPart.BLOB_PART_IMAGE, "image/png")))));
      server.watch(null, 1, 2);
      try (EntryWatch w = c.watchEntries(WatchEntriesRequest.newBuilder().setSession("s").build())) {
        assertEquals(1, w.next().getEntry().getSeq());
        e = fails(Status.Code.DATA_LOSS, "the watch", w::hasNext);
        assertTrue(e.serverMessage().contains(sha(real)), e.serverMessage());
        assertEquals(0, w.reconnects(), "DATA_LOSS ends the watch");
      }
    }
  }

  /**
   * The parts over the threshold add up to more than half of 4 MiB: the
   * largest go up, in chunks taken from where the server says, until the rest
   * fit; identical content is uploaded once.
   */
  @Test
  void largePartsAreUploadedInChunksFromWhereTheServerSays() throws Exception {
    server.putBlobTakes = 300_000; // the client goes on where the server says
    ByteString img = bytes(2 * 1024 * 1024 + 7, 4);
    String big = "x".repeat(1_200_000);
    ByteString img2 = bytes(1_000_000, 6);
    String small = "y".repeat(87_000); // at most 261,000 bytes: not even encoded
    AppendRequest req =
        AppendRequest.newBuilder()
            .setSession("s")
            .addEntries(Entry.newBuilder().setMessage(message(Role.ROLE_USER, Messages.textPart(small), image("image/png", img))))
            .addEntries(Entry.newBuilder().setMessage(message(Role.ROLE_ASSISTANT, thinking(big, "sig"), Messages.textPart(big))))
            .addEntries(Entry.newBuilder().setMessage(message(Role.ROLE_USER, image("image/webp", img2))))
            .build();
    try (SessiondClient c = server.client().build()) {
      c.session().append(req);
      // 5,497,159 bytes over the threshold: the image goes up (3,400,000 left), then
      // the thinking (2,200,000 left, still over 2 MiB), then the text (1,000,000 left).
      assertEquals(
          List.of(
              "PutBlobRequest", "PutBlobRequest", "PutBlobRequest", "PutBlobRequest", "PutBlobRequest",
              "PutBlobRequest", "PutBlobRequest", "PutBlobRequest", "PutBlobRequest", "PutBlobRequest",
              "PutBlobRequest", "AppendRequest"),
          callsFrom(0),
          "every chunk before the Append");
      AppendRequest sent = server.requestsOf(AppendRequest.class).get(0);
      assertEquals(Messages.textPart(small), sent.getEntries(0).getMessage().getContent(0));
      ByteString bigBytes = ByteString.copyFromUtf8(big);
      assertEquals(
          part(refTo(img, BlobPart.BLOB_PART_IMAGE, "image/png")), sent.getEntries(0).getMessage().getContent(1));
      assertEquals(
          part(refTo(bigBytes, BlobPart.BLOB_PART_THINKING, BlobParts.TEXT_MEDIA_TYPE).setSignature("sig")),
          sent.getEntries(1).getMessage().getContent(0));
      assertEquals(
          part(refTo(bigBytes, BlobPart.BLOB_PART_TEXT, BlobParts.TEXT_MEDIA_TYPE)),
          sent.getEntries(1).getMessage().getContent(1));
      assertTrue(
          image("image/webp", img2).equals(sent.getEntries(2).getMessage().getContent(0)),
          "the smallest stays inline: the rest fit half of 4 MiB");
      assertFalse(sent.getEntries(0).getId().isEmpty(), "ids filled before the upload");

      List<PutBlobRequest> puts = server.requestsOf(PutBlobRequest.class);
      List<PutBlobRequest> imgPuts = puts.stream().filter(p -> p.getSha256().equals(sha(img))).toList();
      assertEquals(7, imgPuts.size(), "2 MiB taken 300,000 bytes at a time");
      for (int i = 0; i < imgPuts.size(); i++) {
        PutBlobRequest p = imgPuts.get(i);
        assertEquals(300_000L * i, p.getOffset(), "chunk " + i + " where the server said");
        assertEquals(img.size(), p.getSize());
        assertEquals(Math.min(BlobParts.CHUNK_BYTES, img.size() - p.getOffset()), p.getData().size());
        assertEquals(img.substring((int) p.getOffset(), (int) p.getOffset() + p.getData().size()), p.getData());
      }
      List<PutBlobRequest> bigPuts = puts.stream().filter(p -> p.getSha256().equals(sha(bigBytes))).toList();
      assertEquals(
          List.of(0L, 300_000L, 600_000L, 900_000L),
          bigPuts.stream().map(PutBlobRequest::getOffset).toList(),
          "the thinking and the text are one blob, uploaded once");
      assertEquals(11, puts.size());
      assertEquals(img, server.blobs.get(sha(img)));
      assertEquals(bigBytes, server.blobs.get(sha(bigBytes)));
      assertNull(server.blobs.get(sha(img2)), "not uploaded");

      // ImportSession too, through the future stub: 2 MiB + 7 bytes alone is over
      // half of 4 MiB; a blob the server holds is stored at once.
      ImportSessionRequest imp =
          ImportSessionRequest.newBuilder()
              .addEntries(Entry.newBuilder().setId("u").setMessage(message(Role.ROLE_USER, image("image/jpeg", img))))
              .build();
      c.storeFuture().importSession(imp).get(10, TimeUnit.SECONDS);
      ImportSessionRequest imported = server.requestsOf(ImportSessionRequest.class).get(0);
      assertEquals(
          part(refTo(img, BlobPart.BLOB_PART_IMAGE, "image/jpeg")), imported.getEntries(0).getMessage().getContent(0));
      assertEquals(12, server.requestsOf(PutBlobRequest.class).size());
    }

    try (SessiondClient inline = server.client().uploadPartsOver(0).build()) {
      inline.session().append(req);
      AppendRequest sent = server.requestsOf(AppendRequest.class).get(1);
      assertTrue(image("image/png", img).equals(sent.getEntries(0).getMessage().getContent(1)), "0: never uploaded");
      assertEquals(12, server.requestsOf(PutBlobRequest.class).size());
    }
  }

  /** The kinds of the requests the server got from the {@code from}th on, in order. */
  List<String> callsFrom(int from) {
    synchronized (server.requests) {
      return server.requests.subList(from, server.requests.size()).stream()
          .map(r -> r.getClass().getSimpleName())
          .toList();
    }
  }

  /** An Append of one user message per image (image/png). */
  static AppendRequest imagesAppend(List<ByteString> images) {
    AppendRequest.Builder b = AppendRequest.newBuilder().setSession("s");
    for (ByteString img : images) {
      b.addEntries(Entry.newBuilder().setMessage(message(Role.ROLE_USER, image("image/png", img))));
    }
    return b.build();
  }

  /** The images of an Append's messages, as sent (a reference where one was uploaded). */
  static void checkSent(AppendRequest sent, List<ByteString> images, List<Boolean> uploaded) {
    assertEquals(images.size(), sent.getEntriesCount());
    for (int i = 0; i < images.size(); i++) {
      ContentPart got = sent.getEntries(i).getMessage().getContent(0);
      ContentPart want =
          uploaded.get(i) ? part(refTo(images.get(i), BlobPart.BLOB_PART_IMAGE, "image/png")) : image("image/png", images.get(i));
      // Not assertEquals: a part of a MiB is not printed.
      assertTrue(
          want.equals(got),
          "image " + i + " (" + images.get(i).size() + " bytes): sent a " + got.getPartCase() + ", want "
              + (uploaded.get(i) ? "a reference" : "the image inline"));
    }
  }

  /**
   * The rule of src/client/blob-transport.ts: the parts over uploadPartsOver
   * go inline while they add up to half of 4 MiB at most (the server makes
   * the blobs: one call); past that the largest go up first, one after the
   * other, until the rest fit.
   */
  @Test
  void largePartsGoUpFirstOnlyWhileTheRequestCannotCarryThem() {
    int mib = 1024 * 1024;
    AttemptLog attempts = new AttemptLog();
    try (SessiondClient c = server.client().attemptInterceptor(attempts).build()) {
      List<ByteString> one = List.of(bytes(mib, 7));
      c.session().append(imagesAppend(one));
      assertEquals(List.of("AppendRequest"), callsFrom(0), "a 1 MiB image: one Append, no PutBlob");
      assertEquals(List.of("Append"), attempts.take());
      checkSent(server.requestsOf(AppendRequest.class).get(0), one, List.of(false));

      int at = server.requests.size();
      List<ByteString> half = List.of(bytes(mib, 8), bytes(mib, 9));
      c.session().append(imagesAppend(half));
      assertEquals(List.of("AppendRequest"), callsFrom(at), "exactly half of 4 MiB: still inline");
      assertEquals(List.of("Append"), attempts.take());
      checkSent(server.requestsOf(AppendRequest.class).get(1), half, List.of(false, false));

      // 3.25 MiB: the largest (not the first) goes up alone, in two chunks; 1.75 MiB fit.
      at = server.requests.size();
      List<ByteString> three = List.of(bytes(mib, 10), bytes(3 * mib / 2, 11), bytes(3 * mib / 4, 12));
      c.session().append(imagesAppend(three));
      assertEquals(List.of("PutBlobRequest", "PutBlobRequest", "AppendRequest"), callsFrom(at));
      // One attempt each: after the upload the Append is made in the caller's
      // context, not in the uploads' (cancelled by then: a wasted attempt, retried).
      assertEquals(List.of("PutBlob", "PutBlob", "Append"), attempts.take());
      List<PutBlobRequest> puts = server.requestsOf(PutBlobRequest.class);
      assertEquals(List.of(0L, (long) mib), puts.stream().map(PutBlobRequest::getOffset).toList());
      assertEquals(List.of(mib, mib / 2), puts.stream().map(p -> p.getData().size()).toList());
      for (PutBlobRequest p : puts) {
        assertEquals(sha(three.get(1)), p.getSha256());
      }
      assertTrue(three.get(1).equals(server.blobs.get(sha(three.get(1)))), "the blob stored is the image");
      checkSent(server.requestsOf(AppendRequest.class).get(2), three, List.of(false, true, false));
    }

    // Only the parts over uploadPartsOver count: over 1 MiB, the 1.5 MiB image alone, which fits.
    try (SessiondClient c = server.client().uploadPartsOver(mib).build()) {
      int at = server.requests.size();
      List<ByteString> three = List.of(bytes(mib, 13), bytes(3 * mib / 2, 14), bytes(3 * mib / 4, 15));
      c.session().append(imagesAppend(three));
      assertEquals(List.of("AppendRequest"), callsFrom(at));
      checkSent(server.requestsOf(AppendRequest.class).get(3), three, List.of(false, false, false));
    }
  }

  /** A call's max outbound message size sets the budget (half of it) and caps the PutBlob chunks. */
  @Test
  void theBudgetIsHalfTheCallsMaxOutboundMessageSize() throws Exception {
    int mib = 1024 * 1024;
    List<ByteString> two = List.of(bytes(600_000, 16), bytes(300_000, 17));
    try (SessiondClient c = server.client().build()) {
      c.session().append(imagesAppend(two));
      assertEquals(List.of("AppendRequest"), callsFrom(0), "900,000 bytes fit half of 4 MiB");

      int at = server.requests.size();
      c.sessionFuture().withMaxOutboundMessageSize(mib).append(imagesAppend(two)).get(10, TimeUnit.SECONDS);
      assertEquals(List.of("PutBlobRequest", "PutBlobRequest", "AppendRequest"), callsFrom(at), "over half of 1 MiB");
      List<PutBlobRequest> puts = server.requestsOf(PutBlobRequest.class);
      assertEquals(List.of(0L, 512L * 1024), puts.stream().map(PutBlobRequest::getOffset).toList());
      assertEquals(
          List.of(512 * 1024, 600_000 - 512 * 1024),
          puts.stream().map(p -> p.getData().size()).toList(),
          "chunks of half the max: a chunk of 1 MiB would not fit the call's limit");
      for (PutBlobRequest p : puts) {
        assertTrue(p.getSerializedSize() <= mib, "a PutBlob of " + p.getSerializedSize() + " bytes");
      }
      AppendRequest sent = server.requestsOf(AppendRequest.class).get(1);
      checkSent(sent, two, List.of(true, false));
      assertTrue(sent.getSerializedSize() <= mib, "an Append of " + sent.getSerializedSize() + " bytes");
    }
  }

  /**
   * Another client uploads the same content meanwhile (through another
   * replica): before the client's second chunk the server holds 1.5 MiB, so
   * that chunk (at 1 MiB) is refused; the client asks with an empty chunk at
   * 0 and goes on from 1.5 MiB. A server that refuses every chunk fails the
   * call after {@link Blobs#UPLOAD_MOVES} asks.
   */
  @Test
  void anUploadAnotherClientMovesOnGoesOnFromWhatTheServerHolds() {
    int mib = 1024 * 1024;
    ByteString img = bytes(3 * mib + mib / 2, 8);
    AppendRequest req =
        AppendRequest.newBuilder()
            .setSession("s")
            .addEntries(Entry.newBuilder().setMessage(message(Role.ROLE_USER, image("image/png", img))))
            .build();
    try (SessiondClient c = server.client().build()) {
      server.beforePuts.add(() -> {});
      server.beforePuts.add(() -> server.uploading.put(sha(img), img.substring(0, 3 * mib / 2)));
      c.session().append(req);
      assertEquals(
          List.of(0L, (long) mib, 0L, 3L * mib / 2, 5L * mib / 2),
          server.requestsOf(PutBlobRequest.class).stream().map(PutBlobRequest::getOffset).toList(),
          "chunk 0, the refused chunk at 1 MiB, the ask, then on from 1.5 MiB");
      assertEquals(img, server.blobs.get(sha(img)));
      assertEquals(1, server.requestsOf(AppendRequest.class).size());

      ByteString other = bytes(3 * mib, 9);
      AppendRequest again =
          AppendRequest.newBuilder()
              .setSession("s")
              .addEntries(Entry.newBuilder().setMessage(message(Role.ROLE_USER, image("image/png", other))))
              .build();
      int before = server.requestsOf(PutBlobRequest.class).size();
      for (int i = 0; i <= Blobs.UPLOAD_MOVES; i++) {
        // Each chunk refused; each ask (not a Status: answered as the server would) says 0.
        server.answer(StoreServiceGrpc.getPutBlobMethod(), Status.FAILED_PRECONDITION, "ask");
      }
      fails(Status.Code.FAILED_PRECONDITION, "refused every time", () -> c.session().append(again));
      assertEquals(2 * Blobs.UPLOAD_MOVES + 1, server.requestsOf(PutBlobRequest.class).size() - before);
    }
  }

  @Test
  void aFailedUploadFailsTheCallUnsent() {
    ByteString img = bytes(2 * 1024 * 1024 + 1, 5); // over half of 4 MiB: it must go up first
    AppendRequest req =
        AppendRequest.newBuilder()
            .setSession("s")
            .addEntries(Entry.newBuilder().setMessage(message(Role.ROLE_USER, image("image/png", img))))
            .build();
    try (SessiondClient c =
        server.client().retry(new RetryPolicy(3, java.time.Duration.ofMillis(5), java.time.Duration.ofMillis(20))).build()) {
      server.answer(
          StoreServiceGrpc.getPutBlobMethod(), Status.RESOURCE_EXHAUSTED.withDescription("over --max-blob-bytes"));
      SessiondException e = fails(Status.Code.RESOURCE_EXHAUSTED, "PutBlob refused", () -> c.session().append(req));
      assertEquals("over --max-blob-bytes", e.serverMessage());
      fails(
          Status.Code.DEADLINE_EXCEEDED,
          "the call's deadline covers the upload",
          () -> c.session().withDeadlineAfter(1, TimeUnit.NANOSECONDS).append(req));
      assertEquals(0, server.requestsOf(AppendRequest.class).size(), "no Append without its blobs");

      server.answer(StoreServiceGrpc.getPutBlobMethod(), Status.UNAVAILABLE);
      int before = server.requestsOf(PutBlobRequest.class).size();
      c.session().append(req);
      assertEquals(1, server.requestsOf(AppendRequest.class).size());
      List<PutBlobRequest> puts = server.requestsOf(PutBlobRequest.class);
      assertEquals(
          List.of(0L, 0L, 1024L * 1024, 2048L * 1024),
          puts.subList(before, puts.size()).stream().map(PutBlobRequest::getOffset).toList(),
          "a PutBlob is retried like any call, then the other chunks");
      assertEquals(img, server.blobs.get(sha(img)));
    }
  }
}
