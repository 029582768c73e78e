package io.github.sessiond.client;

import com.google.protobuf.ByteString;
import io.github.sessiond.v1.AppendRequest;
import io.github.sessiond.v1.BlobRef;
import io.github.sessiond.v1.ContentPart;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.GetBlobRequest;
import io.github.sessiond.v1.GetBlobResponse;
import io.github.sessiond.v1.GetEntriesRequest;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.ImportSessionRequest;
import io.github.sessiond.v1.PutBlobRequest;
import io.github.sessiond.v1.PutBlobResponse;
import io.github.sessiond.v1.SessionServiceGrpc;
import io.github.sessiond.v1.StoreServiceGrpc;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Blobs made invisible to callers (see BlobRef in the proto). The server keeps
 * every text, thinking or image part over its threshold (serve
 * --blob-threshold-bytes, 64 KiB) once, as a blob, and answers GetState,
 * GetEntries and WatchEntries with references (ContentPart.blob) in their
 * place. This interceptor puts the parts back into those answers: each
 * reference is read with GetBlob (every chunk, checked against the
 * reference's size and SHA-256, kept in a per-client LRU cache) and replaced
 * by the part it stands for, the part that was appended, byte for byte. Parts
 * too large for one request go the other way: when the text, thinking and
 * image parts of an Append or ImportSession over the upload threshold add up
 * to more than half the call's max outbound message size (4 MiB when it sets
 * none), the largest of them are uploaded first (PutBlob, 1 MiB chunks) and
 * sent as references until the rest fit in that half, so a part larger than
 * the server's message limit may be appended; a request whose large parts
 * fit goes as it is, in one call, and the server stores them as blobs itself.
 * The rules are the TypeScript client's (src/client/blob-transport.ts,
 * src/core/blob-parts.ts).
 *
 * <p>It runs after the ids (the upload copies the filled request) and before
 * the retry (parts uploaded once, references resolved once); its own GetBlob
 * and PutBlob calls go through the client's whole chain (token, retry of
 * PutBlob) with the options of the call they serve (its deadline, its
 * executor) in its context (cancelled with it). Nothing here blocks a thread:
 * the calls are chained on their callbacks, and the caller's listener hears
 * from the call's executor (a blocking stub's own thread), in order.
 */
final class Blobs implements ClientInterceptor {
  private static final String GET_STATE = SessionServiceGrpc.getGetStateMethod().getFullMethodName();
  private static final String GET_ENTRIES = SessionServiceGrpc.getGetEntriesMethod().getFullMethodName();
  private static final String WATCH_ENTRIES = SessionServiceGrpc.getWatchEntriesMethod().getFullMethodName();
  private static final String APPEND = SessionServiceGrpc.getAppendMethod().getFullMethodName();
  private static final String IMPORT_SESSION = StoreServiceGrpc.getImportSessionMethod().getFullMethodName();

  private final boolean resolve;
  private final int uploadOver;
  private final BlobCache cache;
  private final RetryPolicy retry;
  private final ScheduledExecutorService scheduler;
  private final Runnable beforeRetry;
  /** The client's channel with every interceptor: GetBlob and PutBlob go through it. */
  private volatile Channel channel;

  /**
   * @param keepRefs answers keep their references (no resolving)
   * @param uploadOver parts over this many bytes may be uploaded (see {@link #uploadsOf}); 0: none
   * @param cacheBytes the size of the cache of blobs read
   * @param retry the retry of GetBlob reads after UNAVAILABLE
   * @param scheduler runs the delayed reads
   * @param beforeRetry runs before a repeated read (the channel's resetConnectBackoff)
   */
  Blobs(
      boolean keepRefs,
      int uploadOver,
      long cacheBytes,
      RetryPolicy retry,
      ScheduledExecutorService scheduler,
      Runnable beforeRetry) {
    this.resolve = !keepRefs;
    this.uploadOver = uploadOver;
    this.cache = new BlobCache(cacheBytes);
    this.retry = retry;
    this.scheduler = scheduler;
    this.beforeRetry = beforeRetry;
  }

  /** Whether the interceptor has anything to do: resolve references or upload parts. */
  boolean active() {
    return resolve || uploadOver > 0;
  }

  /** The channel GetBlob and PutBlob calls go through (the client's, once built). */
  void bind(Channel channel) {
    this.channel = channel;
  }

  BlobCache cache() {
    return cache;
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
    String name = method.getFullMethodName();
    if (resolve && (name.equals(GET_STATE) || name.equals(GET_ENTRIES) || name.equals(WATCH_ENTRIES))) {
      return new ResolvingCall<>(next.newCall(method, callOptions), callOptions, Context.current());
    }
    if (uploadOver > 0 && (name.equals(APPEND) || name.equals(IMPORT_SESSION))) {
      return new UploadingCall<>(method, callOptions, next, Context.current());
    }
    return next.newCall(method, callOptions);
  }

  // --- Reading ---

  /**
   * Reads a blob, or a range of it: one GetBlob call from {@code offset}, at
   * most {@code length} bytes (0: to the end), every chunk, made in {@code
   * context} with {@code options}. Fails DATA_LOSS when a chunk does not start
   * where the previous one ended or the chunks bring more than {@code max}
   * bytes, with the call's status when it fails.
   */
  CompletableFuture<ByteString> read(
      String workspace,
      String sha256,
      long offset,
      long length,
      long max,
      CallOptions options,
      Context context) {
    CompletableFuture<ByteString> done = new CompletableFuture<>();
    GetBlobRequest req =
        GetBlobRequest.newBuilder()
            .setWorkspace(workspace)
            .setSha256(sha256)
            .setOffset(offset)
            .setLength(length)
            .build();
    Context prev = context.attach();
    try {
      ClientCall<GetBlobRequest, GetBlobResponse> call =
          channel.newCall(StoreServiceGrpc.getGetBlobMethod(), options);
      call.start(new ChunkListener(call, sha256, offset, max, done), new Metadata());
      call.request(2);
      call.sendMessage(req);
      call.halfClose();
    } catch (RuntimeException e) {
      done.completeExceptionally(e);
    } finally {
      context.detach(prev);
    }
    return done;
  }

  /** Gathers the chunks of one GetBlob call (a rope: no chunk is copied). */
  private static final class ChunkListener extends ClientCall.Listener<GetBlobResponse> {
    private final ClientCall<GetBlobRequest, GetBlobResponse> call;
    private final String sha256;
    private final long offset;
    private final long max;
    private final CompletableFuture<ByteString> done;
    // The call's callbacks are serialised: no lock.
    private ByteString data = ByteString.EMPTY;
    private Status bad;

    ChunkListener(
        ClientCall<GetBlobRequest, GetBlobResponse> call,
        String sha256,
        long offset,
        long max,
        CompletableFuture<ByteString> done) {
      this.call = call;
      this.sha256 = sha256;
      this.offset = offset;
      this.max = max;
      this.done = done;
    }

    @Override
    public void onMessage(GetBlobResponse r) {
      if (bad != null) {
        return;
      }
      long at = offset + data.size();
      if (r.getOffset() != at) {
        bad =
            Status.DATA_LOSS.withDescription(
                "GetBlob " + sha256 + ": a chunk at offset " + Long.toUnsignedString(r.getOffset())
                    + " where " + at + " was due");
      } else if ((long) data.size() + r.getData().size() > max) {
        bad =
            (max >= Integer.MAX_VALUE ? Status.RESOURCE_EXHAUSTED : Status.DATA_LOSS)
                .withDescription("GetBlob " + sha256 + ": more than the " + max + " bytes expected");
      }
      if (bad != null) {
        call.cancel(bad.getDescription(), null);
        return;
      }
      data = data.concat(r.getData());
      call.request(1);
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      if (bad != null) {
        done.completeExceptionally(new SessiondException(bad, null));
      } else if (!status.isOk()) {
        done.completeExceptionally(new SessiondException(status, trailers));
      } else {
        done.complete(data);
      }
    }
  }

  /**
   * The content of a reference, from the cache or GetBlob (retried after
   * UNAVAILABLE), checked against the reference's size and SHA-256.
   */
  private CompletableFuture<ByteString> contentOf(
      String workspace, BlobRef ref, CallOptions options, Context context) {
    try {
      BlobParts.checkKnown(ref);
    } catch (SessiondException e) {
      return CompletableFuture.failedFuture(e);
    }
    String key = workspace + "\0" + ref.getSha256();
    ByteString hit = cache.get(key);
    if (hit != null) {
      return CompletableFuture.completedFuture(hit);
    }
    return withRetry(
            () -> read(workspace, ref.getSha256(), 0, 0, ref.getSize(), options, context),
            1,
            options,
            context)
        .thenApply(
            data -> {
              BlobParts.checkContent(ref, data);
              cache.put(key, data);
              return data;
            });
  }

  /** {@code attempt}, repeated after UNAVAILABLE as the retry policy says, never past the deadline. */
  private <T> CompletableFuture<T> withRetry(
      Supplier<CompletableFuture<T>> attempt, int n, CallOptions options, Context context) {
    return attempt
        .get()
        .<CompletableFuture<T>>handle(
            (v, err) -> {
              if (err == null) {
                return CompletableFuture.completedFuture(v);
              }
              if (n >= retry.maxAttempts()
                  || Status.fromThrowable(err).getCode() != Status.Code.UNAVAILABLE
                  || context.isCancelled()) {
                return CompletableFuture.<T>failedFuture(err);
              }
              long wait = retry.jitteredNanosAfter(n);
              Deadline d = earlier(options.getDeadline(), context.getDeadline());
              if (d != null && d.timeRemaining(TimeUnit.NANOSECONDS) <= wait) {
                return CompletableFuture.<T>failedFuture(err);
              }
              CompletableFuture<T> again = new CompletableFuture<>();
              try {
                scheduler.schedule(
                    () -> {
                      try {
                        beforeRetry.run();
                      } catch (RuntimeException e) {
                        // A channel shutting down: the attempt reports it.
                      }
                      withRetry(attempt, n + 1, options, context)
                          .whenComplete(
                              (v2, err2) -> {
                                if (err2 == null) {
                                  again.complete(v2);
                                } else {
                                  again.completeExceptionally(err2);
                                }
                              });
                    },
                    wait,
                    TimeUnit.NANOSECONDS);
              } catch (RejectedExecutionException e) {
                return CompletableFuture.<T>failedFuture(err); // the client is closing
              }
              return again;
            })
        .thenCompose(f -> f);
  }

  private static Deadline earlier(Deadline a, Deadline b) {
    if (a == null) {
      return b;
    }
    return b == null ? a : a.minimum(b);
  }

  /**
   * The answer (GetState, GetEntries, WatchEntries) with its references
   * replaced by the parts they stand for: the answer itself, at once, when it
   * has none; the blobs are read one after the other.
   */
  private <T> CompletableFuture<T> resolved(
      T answer, String workspace, CallOptions options, Context context) {
    List<BlobRef> refs = BlobParts.refsOfAnswer(answer);
    if (refs.isEmpty()) {
      return CompletableFuture.completedFuture(answer);
    }
    Map<String, ByteString> blobs = new ConcurrentHashMap<>();
    CompletableFuture<Void> all = CompletableFuture.completedFuture(null);
    for (BlobRef ref : refs) {
      all =
          all.thenCompose(
              x ->
                  blobs.containsKey(ref.getSha256())
                      ? CompletableFuture.<Void>completedFuture(null)
                      : contentOf(workspace, ref, options, context)
                          .thenAccept(data -> blobs.put(ref.getSha256(), data)));
    }
    return all.thenApply(x -> sameClass(answer, BlobParts.withRefsResolved(answer, blobs)));
  }

  @SuppressWarnings("unchecked") // withRefsResolved returns a message of the class it was given
  private static <T> T sameClass(T original, Object rebuilt) {
    return (T) original.getClass().cast(rebuilt);
  }

  private static String workspaceOf(Object request) {
    if (request instanceof GetStateRequest r) {
      return r.getWorkspace();
    }
    if (request instanceof GetEntriesRequest r) {
      return r.getWorkspace();
    }
    if (request instanceof WatchEntriesRequest r) {
      return r.getWorkspace();
    }
    return "";
  }

  /** The status a failed future stands for (its SessiondException's, or UNKNOWN). */
  private static Status statusOf(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException || e instanceof CancellationException) && e.getCause() != null) {
      e = e.getCause();
    }
    return Status.fromThrowable(e);
  }

  /**
   * A GetState, GetEntries or WatchEntries call whose answers reach the caller
   * with their references resolved, in the order they came, each once its
   * blobs are read; the end of the call follows the last answer. A reference
   * that cannot be resolved ends the call with the failure (the stream is
   * cancelled): a watch resumes after UNAVAILABLE as after any broken stream.
   */
  private final class ResolvingCall<ReqT, RespT> extends SimpleForwardingClientCall<ReqT, RespT> {
    private final CallOptions options;
    /** The context of the GetBlob calls: the caller's, cancelled with this call. */
    private final Context.CancellableContext reads;

    private volatile String workspace = "";
    private volatile Status cancelled;

    ResolvingCall(ClientCall<ReqT, RespT> call, CallOptions options, Context context) {
      super(call);
      this.options = options;
      this.reads = context.withCancellation();
    }

    @Override
    public void start(Listener<RespT> listener, Metadata headers) {
      super.start(new ResolvingListener(listener), headers);
    }

    @Override
    public void sendMessage(ReqT message) {
      workspace = workspaceOf(message);
      super.sendMessage(message);
    }

    @Override
    public void cancel(String why, Throwable cause) {
      cancelled = Status.CANCELLED.withDescription(why).withCause(cause);
      super.cancel(why, cause);
      reads.cancel(cause);
    }

    /** One event of the call, kept in order until the answers before it are resolved. */
    private final class Event {
      final RespT answer;
      final Metadata headers;
      final Status closed;
      final Metadata trailers;

      Event(RespT answer, Metadata headers, Status closed, Metadata trailers) {
        this.answer = answer;
        this.headers = headers;
        this.closed = closed;
        this.trailers = trailers;
      }
    }

    private final class ResolvingListener extends ClientCall.Listener<RespT> {
      private final ClientCall.Listener<RespT> out;
      // Guarded by this.
      private final ArrayDeque<Event> events = new ArrayDeque<>();
      /** A thread is delivering events, or an answer's blobs are being read. */
      private boolean busy;
      /** The caller has heard the end of the call. */
      private boolean over;

      ResolvingListener(ClientCall.Listener<RespT> out) {
        this.out = out;
      }

      @Override
      public void onHeaders(Metadata headers) {
        add(new Event(null, headers, null, null));
      }

      @Override
      public void onMessage(RespT message) {
        add(new Event(message, null, null, null));
      }

      @Override
      public void onReady() {
        add(new Event(null, null, null, null));
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        add(new Event(null, null, status, trailers));
      }

      private void add(Event e) {
        synchronized (this) {
          if (over) {
            return;
          }
          events.add(e);
          if (busy) {
            return;
          }
          busy = true;
        }
        drain();
      }

      /**
       * Delivers events in order until none is left or an answer waits for
       * its blobs (whose completion carries on); one thread at a time.
       */
      private void drain() {
        while (true) {
          Event e;
          synchronized (this) {
            e = over ? null : events.poll();
            if (e == null) {
              busy = false;
              return;
            }
          }
          if (e.answer == null) {
            deliver(e);
            continue;
          }
          CompletableFuture<RespT> f;
          try {
            f = resolved(e.answer, workspace, options, reads);
          } catch (RuntimeException err) {
            f = CompletableFuture.failedFuture(err);
          }
          if (!f.isDone()) {
            f.whenComplete(
                (answer, err) -> {
                  if (answer(answer, err)) {
                    drain();
                  }
                });
            return;
          }
          if (!f.handle(this::answer).join()) {
            return;
          }
        }
      }

      /** Hands a resolved answer to the caller, or ends the call with the failure; whether to go on. */
      private boolean answer(RespT answer, Throwable err) {
        if (err != null) {
          Status c = cancelled;
          fail(c != null ? c : statusOf(err));
          return false;
        }
        try {
          out.onMessage(answer);
          return true;
        } catch (RuntimeException t) {
          fail(Status.CANCELLED.withDescription("the listener failed on an answer").withCause(t));
          return false;
        }
      }

      private void deliver(Event e) {
        if (e.headers != null) {
          out.onHeaders(e.headers);
        } else if (e.closed != null) {
          synchronized (this) {
            over = true;
            events.clear();
          }
          reads.cancel(null);
          out.onClose(e.closed, e.trailers);
        } else {
          out.onReady();
        }
      }

      /** Ends the call for the caller with a failure of its own; the call's own end is ignored. */
      private void fail(Status status) {
        synchronized (this) {
          if (over) {
            return;
          }
          over = true;
          events.clear();
        }
        delegate().cancel("a blob reference could not be resolved", status.asRuntimeException());
        reads.cancel(null);
        out.onClose(status, new Metadata());
      }
    }
  }

  // --- Uploading ---

  /** A part over the upload threshold: where it is in the request, and its content. */
  private record Large(int entry, int part, BlobParts.Content content) {}

  /** One part to upload: where it is in the request, its content and its hash. */
  private record Upload(int entry, int part, BlobParts.Content content, String sha256) {}

  /**
   * The bytes the parts over the upload threshold may add up to in a request
   * that carries them inline: half the call's max outbound message size
   * ({@link CallOptions#getMaxOutboundMessageSize}, e.g. set with a stub's
   * {@code withMaxOutboundMessageSize}), or half of {@link
   * BlobParts#DEFAULT_MAX_MESSAGE_BYTES} (4 MiB) when the call sets none.
   */
  static long inlineBudget(CallOptions options) {
    Integer max = options.getMaxOutboundMessageSize();
    return (max != null ? max : BlobParts.DEFAULT_MAX_MESSAGE_BYTES) / 2;
  }

  /**
   * The parts of an Append or ImportSession request to upload, hashed; empty
   * for none. The candidates are the text, thinking and image parts over the
   * threshold; while their bytes add up to more than the {@link #inlineBudget}
   * the largest of them go (ties in the request's order), the rest travel in
   * the request and the server stores them as blobs itself: one call instead
   * of two (the rule of src/client/blob-transport.ts: a 1 MiB image appended
   * inline took 8 ms p50, uploaded first 12 ms).
   */
  private List<Upload> uploadsOf(Object request, CallOptions options) {
    List<Entry> entries;
    if (request instanceof AppendRequest r) {
      entries = r.getEntriesList();
    } else if (request instanceof ImportSessionRequest r) {
      entries = r.getEntriesList();
    } else {
      return List.of();
    }
    List<Large> large = new ArrayList<>();
    long inline = 0;
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      if (!e.hasMessage()) {
        continue;
      }
      List<ContentPart> parts = e.getMessage().getContentList();
      for (int j = 0; j < parts.size(); j++) {
        BlobParts.Content c = BlobParts.contentOf(parts.get(j), uploadOver);
        if (c != null) {
          large.add(new Large(i, j, c));
          inline += c.bytes().size();
        }
      }
    }
    long budget = inlineBudget(options);
    if (inline <= budget) {
      return List.of();
    }
    // A stable sort: parts of the same size go in the request's order.
    large.sort(Comparator.comparingInt((Large l) -> l.content().bytes().size()).reversed());
    List<Upload> ups = new ArrayList<>();
    for (Large l : large) {
      if (inline <= budget) {
        break;
      }
      ups.add(new Upload(l.entry(), l.part(), l.content(), BlobParts.sha256Hex(l.content().bytes())));
      inline -= l.content().bytes().size();
    }
    return ups;
  }

  /**
   * Uploads the parts (each distinct content once, one after the other) and
   * completes with the request whose parts are references to them: a new
   * message, the caller's is never changed.
   */
  private CompletableFuture<Object> uploaded(
      Object request, List<Upload> ups, CallOptions options, Context context) {
    String workspace =
        request instanceof AppendRequest r
            ? r.getWorkspace()
            : ((ImportSessionRequest) request).getWorkspace();
    CompletableFuture<Void> all = CompletableFuture.completedFuture(null);
    Set<String> sent = new HashSet<>();
    for (Upload u : ups) {
      if (sent.add(u.sha256())) {
        all = all.thenCompose(x -> put(workspace, u.content().bytes(), u.sha256(), 0, options, context));
      }
    }
    return all.thenApply(
        x -> {
          if (request instanceof AppendRequest r) {
            AppendRequest.Builder b = r.toBuilder();
            for (Upload u : ups) {
              b.getEntriesBuilder(u.entry()).getMessageBuilder().setContent(u.part(), u.content().refPart(u.sha256()));
            }
            return b.build();
          }
          ImportSessionRequest.Builder b = ((ImportSessionRequest) request).toBuilder();
          for (Upload u : ups) {
            b.getEntriesBuilder(u.entry()).getMessageBuilder().setContent(u.part(), u.content().refPart(u.sha256()));
          }
          return b.build();
        });
  }

  /** Chunks of one upload refused because the server held more, before the refusal is the caller's. */
  static final int UPLOAD_MOVES = 8;

  /** A PutBlob answer, and whether it answers the empty chunk that asks where an upload stands. */
  private record PutAnswer(PutBlobResponse res, boolean asked) {}

  /**
   * Stores data as a blob with PutBlob, chunk after chunk from {@code offset},
   * each where the server's answer says it has got to, until it answers
   * stored (at once for a blob the workspace holds already). A chunk is 1 MiB
   * ({@link BlobParts#CHUNK_BYTES}), or the {@link #inlineBudget} when that is
   * smaller (a call whose max outbound message size is under 2 MiB: a PutBlob
   * of 1 MiB would be over it). Every chunk goes through the client's chain:
   * retried after UNAVAILABLE like any unary call. A chunk refused with
   * FAILED_PRECONDITION (another client uploads the same content through
   * another replica, and the server holds more than its offset) is followed
   * by an empty chunk at 0, which asks where the upload stands; it goes on
   * from there, {@link #UPLOAD_MOVES} times an upload at most.
   */
  private CompletableFuture<Void> put(
      String workspace, ByteString data, String sha256, long offset, CallOptions options, Context context) {
    return put(workspace, data, sha256, offset, 0, options, context);
  }

  private CompletableFuture<Void> put(
      String workspace,
      ByteString data,
      String sha256,
      long offset,
      int moved,
      CallOptions options,
      Context context) {
    long size = data.size();
    long chunk = Math.max(1, Math.min(BlobParts.CHUNK_BYTES, inlineBudget(options)));
    int end = (int) Math.min(offset + chunk, size);
    PutBlobRequest.Builder req =
        PutBlobRequest.newBuilder().setWorkspace(workspace).setSha256(sha256).setSize(size);
    PutBlobRequest sent = req.clone().setOffset(offset).setData(data.substring((int) offset, end)).build();
    return unary(StoreServiceGrpc.getPutBlobMethod(), sent, options, context)
        .thenApply(res -> new PutAnswer(res, false))
        .exceptionallyCompose(
            err -> {
              Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
              if (moved >= UPLOAD_MOVES
                  || !(cause instanceof SessiondException e)
                  || e.code() != Status.Code.FAILED_PRECONDITION) {
                return CompletableFuture.failedFuture(cause);
              }
              return unary(StoreServiceGrpc.getPutBlobMethod(), req.build(), options, context)
                  .thenApply(res -> new PutAnswer(res, true));
            })
        .thenCompose(
            answer -> {
              PutBlobResponse res = answer.res();
              boolean asked = answer.asked();
              if (res.getStored()) {
                return CompletableFuture.<Void>completedFuture(null);
              }
              long got = res.getReceived();
              if (got < 0 || (got == offset && !asked) || got >= size) {
                return CompletableFuture.<Void>failedFuture(
                    new SessiondException(
                        Status.Code.INTERNAL,
                        "PutBlob " + sha256 + ": the server holds " + Long.toUnsignedString(got) + " of "
                            + size + " bytes after a chunk at " + offset + ", and has not stored it"));
              }
              return put(workspace, data, sha256, got, moved + (asked ? 1 : 0), options, context);
            });
  }

  private <Q, R> CompletableFuture<R> unary(
      MethodDescriptor<Q, R> method, Q req, CallOptions options, Context context) {
    CompletableFuture<R> done = new CompletableFuture<>();
    Context prev = context.attach();
    try {
      ClientCalls.asyncUnaryCall(
          channel.newCall(method, options),
          req,
          new StreamObserver<R>() {
            private R value;

            @Override
            public void onNext(R v) {
              value = v;
            }

            @Override
            public void onError(Throwable t) {
              done.completeExceptionally(SessiondException.from(t));
            }

            @Override
            public void onCompleted() {
              done.complete(value);
            }
          });
    } catch (RuntimeException e) {
      done.completeExceptionally(e);
    } finally {
      context.detach(prev);
    }
    return done;
  }

  /**
   * An Append or ImportSession call that uploads the large parts the request
   * cannot carry ({@link #uploadsOf}) before the call is made (in the caller's
   * context, with its options) and sends references instead; a request with
   * none to upload is sent at once. What the caller does before then (headers,
   * flow control, half-close, a cancel) is recorded and replayed; an upload
   * that fails ends the call with its status.
   */
  private final class UploadingCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {
    private final MethodDescriptor<ReqT, RespT> method;
    private final CallOptions options;
    private final Channel next;
    private final Context context;

    // Guarded by this.
    private Listener<RespT> listener;
    private Metadata headers;
    private int requested;
    private boolean halfClosed;
    private Boolean compression;
    private ClientCall<ReqT, RespT> call;
    private Context.CancellableContext uploads;
    private Status cancelled;
    private boolean closed;

    UploadingCall(MethodDescriptor<ReqT, RespT> method, CallOptions options, Channel next, Context context) {
      this.method = method;
      this.options = options;
      this.next = next;
      this.context = context;
    }

    @Override
    public synchronized void start(Listener<RespT> responseListener, Metadata requestHeaders) {
      listener = responseListener;
      headers = requestHeaders;
    }

    @Override
    public void sendMessage(ReqT message) {
      List<Upload> ups = uploadsOf(message, options);
      if (ups.isEmpty()) {
        callWith(message);
        return;
      }
      Context.CancellableContext ctx;
      synchronized (this) {
        if (cancelled != null || closed) {
          return;
        }
        ctx = context.withCancellation();
        uploads = ctx;
      }
      CompletableFuture<Object> f;
      try {
        f = uploaded(message, ups, options, ctx);
      } catch (RuntimeException e) {
        f = CompletableFuture.failedFuture(e);
      }
      f.whenComplete(
          (req, err) -> {
            synchronized (this) {
              uploads = null;
            }
            ctx.cancel(null);
            if (err != null) {
              Status c;
              synchronized (this) {
                c = cancelled;
              }
              close(c != null ? c : statusOf(err));
            } else {
              callWith(sameClass(message, req));
            }
          });
    }

    /**
     * Makes the call with the request to send and replays what the caller has
     * done so far, all of it in the caller's context: after an upload this
     * runs in the last PutBlob's callback, whose context (the uploads', just
     * cancelled) must not be the one the retry's first attempt is made in.
     */
    private void callWith(ReqT request) {
      Status c;
      synchronized (this) {
        if (closed) {
          return;
        }
        c = cancelled;
        if (c == null) {
          Context prev = context.attach();
          try {
            call = next.newCall(method, options);
            call.start(listener, headers);
            if (requested > 0) {
              call.request(requested);
            }
            if (compression != null) {
              call.setMessageCompression(compression);
            }
            call.sendMessage(request);
            if (halfClosed) {
              call.halfClose();
            }
          } finally {
            context.detach(prev);
          }
          return;
        }
      }
      close(c);
    }

    /** Ends the call for the caller (before the real call was made), once. */
    private void close(Status status) {
      Listener<RespT> l;
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
        l = listener;
      }
      if (l != null) {
        l.onClose(status, new Metadata());
      }
    }

    @Override
    public void request(int numMessages) {
      ClientCall<ReqT, RespT> c;
      synchronized (this) {
        c = call;
        if (c == null) {
          requested += numMessages;
          return;
        }
      }
      c.request(numMessages);
    }

    @Override
    public void halfClose() {
      ClientCall<ReqT, RespT> c;
      synchronized (this) {
        c = call;
        if (c == null) {
          halfClosed = true;
          return;
        }
      }
      c.halfClose();
    }

    @Override
    public void cancel(String why, Throwable cause) {
      ClientCall<ReqT, RespT> c;
      Context.CancellableContext ctx;
      Status s;
      synchronized (this) {
        if (cancelled != null || closed) {
          return;
        }
        s = Status.CANCELLED.withDescription(why).withCause(cause);
        cancelled = s;
        c = call;
        ctx = uploads;
      }
      if (c != null) {
        c.cancel(why, cause);
      } else if (ctx != null) {
        ctx.cancel(cause); // the upload fails: its completion closes the call with `cancelled`
      } else {
        close(s);
      }
    }

    @Override
    public synchronized boolean isReady() {
      return call != null && call.isReady();
    }

    @Override
    public void setMessageCompression(boolean enabled) {
      ClientCall<ReqT, RespT> c;
      synchronized (this) {
        c = call;
        if (c == null) {
          compression = enabled;
          return;
        }
      }
      c.setMessageCompression(enabled);
    }

    @Override
    public synchronized Attributes getAttributes() {
      return call != null ? call.getAttributes() : Attributes.EMPTY;
    }
  }
}
