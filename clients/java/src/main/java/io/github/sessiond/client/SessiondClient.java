package io.github.sessiond.client;

import com.google.protobuf.ByteString;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.GetStateResponse;
import io.github.sessiond.v1.GetTreeRequest;
import io.github.sessiond.v1.GetTreeResponse;
import io.github.sessiond.v1.SessionServiceGrpc;
import io.github.sessiond.v1.StoreServiceGrpc;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.MetadataUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A connection to a sessiond server with the generated stubs of both services
 * over it, and what the client layer adds to them.
 *
 * <p>{@link #store()} and {@link #session()} are the generated blocking stubs
 * ({@link #storeFuture()} / {@link #sessionFuture()} the future stubs, {@link
 * #storeAsync()} / {@link #sessionAsync()} the StreamObserver ones): every RPC
 * and field of {@code proto/sessiond/v1/*.proto} as generated. What this class
 * adds happens in the channel's interceptors, in this order:
 *
 * <ol>
 *   <li>{@link DefaultDeadlineInterceptor}: a deadline for unary calls that have
 *       none (only with {@link Builder#callTimeout});
 *   <li>{@link IdsInterceptor}: ids the request leaves empty are chosen before the
 *       first attempt (a session id drawn here that turns out to be another
 *       session's is drawn again by the retry interceptor);
 *   <li>blobs: GetState, GetEntries and WatchEntries answers get back the parts the
 *       server keeps as blobs in place of their references, and Append and
 *       ImportSession upload the large parts a request cannot carry first (see
 *       "Blobs" below);
 *   <li>{@link RetryInterceptor}: UNAVAILABLE is retried with the same ids, and a
 *       call whose drawn session id was taken is sent again under a new one;
 *   <li>the caller's {@link Builder#attemptInterceptor attempt interceptors}, once
 *       per attempt;
 *   <li>the bearer token, on every attempt and stream.
 * </ol>
 *
 * <p>and in {@link #watchEntries} (a watch that resumes by itself) and {@link
 * #readState} / {@link #readTree} (every page). Errors of the stubs are
 * {@link io.grpc.StatusRuntimeException}s; the client's own methods throw
 * {@link SessiondException}, which is one.
 *
 * <p>Blobs: the server keeps every text, thinking or image part over its
 * threshold (64 KiB by default) once, as a blob, and answers with a reference
 * ({@code ContentPart.blob}) in its place. Through this client (every stub,
 * {@link #readState}, {@link #watchEntries}, {@link #channel()}) GetState,
 * GetEntries and WatchEntries answers hold the parts themselves, byte for
 * byte: each reference is read with GetBlob, checked against its size and
 * SHA-256 (DATA_LOSS when they differ) and kept in a 64 MiB LRU cache ({@link
 * Builder#blobCacheBytes}); {@link Builder#blobRefs} keeps the references
 * instead, for a caller that reads blobs itself ({@link #getBlob}). Append and
 * ImportSession send text, thinking and image parts over 256 KiB ({@link
 * Builder#uploadPartsOver}) inline while they add up to half the call's max
 * outbound message size at most (4 MiB when the call sets none, so 2 MiB), and
 * the server stores them as blobs: one call. Past that, the largest of them
 * are uploaded first with PutBlob in 1 MiB chunks and sent as references, one
 * after the other until the rest fit in that half, so a part larger than the
 * server's message limit may be appended (measured with the TypeScript
 * client, which has the same rule: a 1 MiB image appended inline took 8 ms
 * p50, uploaded first 12 ms). The caller's request is not changed (protobuf
 * messages are immutable). The blob calls are part of the call they serve: its
 * deadline, its cancellation, its executor.
 *
 * <p>The channel connects lazily (the first call connects, and is retried
 * while the server is unreachable) and is plaintext HTTP/2 unless {@link
 * Builder#tls} is given. While calls are open and nothing has arrived for 20 s
 * it sends an HTTP/2 PING; unanswered for 10 s, the connection is closed and
 * its calls fail with UNAVAILABLE, which the retry and the watch take up on a
 * new connection: a connection that died without a word (a lost host, a
 * dropped NAT entry) is found within about 30 s instead of never. Close the
 * client when done with it.
 */
public final class SessiondClient implements AutoCloseable {
  private final ManagedChannel managed;
  private final Channel channel;
  private final ScheduledExecutorService scheduler;
  private final Set<EntryWatch> watches = ConcurrentHashMap.newKeySet();
  private final StoreServiceGrpc.StoreServiceBlockingStub store;
  private final SessionServiceGrpc.SessionServiceBlockingStub session;
  private final StoreServiceGrpc.StoreServiceFutureStub storeFuture;
  private final SessionServiceGrpc.SessionServiceFutureStub sessionFuture;
  private final StoreServiceGrpc.StoreServiceStub storeAsync;
  private final SessionServiceGrpc.SessionServiceStub sessionAsync;
  private final Blobs blobs;

  private SessiondClient(Builder b) {
    this.managed = b.channel != null ? b.channel : b.dial();
    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sessiond-client-backoff");
              t.setDaemon(true);
              return t;
            });
    List<ClientInterceptor> chain = new ArrayList<>();
    if (b.callTimeout != null) {
      chain.add(new DefaultDeadlineInterceptor(b.callTimeout));
    }
    chain.add(new IdsInterceptor(b.sessionIds));
    this.blobs =
        new Blobs(
            b.blobRefs,
            b.uploadPartsOver,
            b.blobCacheBytes,
            b.retry,
            scheduler,
            managed::resetConnectBackoff);
    if (blobs.active()) {
      chain.add(blobs);
    }
    chain.add(new RetryInterceptor(b.retry, scheduler, managed::resetConnectBackoff));
    chain.addAll(b.attemptInterceptors);
    if (b.token != null) {
      Metadata auth = new Metadata();
      auth.put(
          Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + b.token);
      chain.add(MetadataUtils.newAttachHeadersInterceptor(auth));
    }
    // interceptForward: the first interceptor of the list sees a call first.
    this.channel = ClientInterceptors.interceptForward(managed, chain);
    blobs.bind(channel);
    this.store = StoreServiceGrpc.newBlockingStub(channel);
    this.session = SessionServiceGrpc.newBlockingStub(channel);
    this.storeFuture = StoreServiceGrpc.newFutureStub(channel);
    this.sessionFuture = SessionServiceGrpc.newFutureStub(channel);
    this.storeAsync = StoreServiceGrpc.newStub(channel);
    this.sessionAsync = SessionServiceGrpc.newStub(channel);
  }

  /** A client of the server at {@code target} ("host:port") with the defaults. */
  public static SessiondClient connect(String target) {
    return builder(target).build();
  }

  /** Options for a client of the server at {@code target} ("host:port", e.g. "127.0.0.1:50051"). */
  public static Builder builder(String target) {
    return new Builder(Objects.requireNonNull(target, "target"), null);
  }

  /**
   * Options for a client over a channel of your own (an in-process one, or one
   * built with options this builder does not have). TLS, keepalive and {@link
   * Builder#channelOptions} do not apply to it; {@link #close()} shuts it down.
   */
  public static Builder builder(ManagedChannel channel) {
    return new Builder(null, Objects.requireNonNull(channel, "channel"));
  }

  /** StoreService, blocking: create, find, list, search, delete, fork, import, watch sessions. */
  public StoreServiceGrpc.StoreServiceBlockingStub store() {
    return store;
  }

  /** SessionService, blocking: append, rewind, reset, state, entries, tree, watch entries. */
  public SessionServiceGrpc.SessionServiceBlockingStub session() {
    return session;
  }

  /** StoreService with ListenableFuture results. */
  public StoreServiceGrpc.StoreServiceFutureStub storeFuture() {
    return storeFuture;
  }

  /** SessionService with ListenableFuture results. */
  public SessionServiceGrpc.SessionServiceFutureStub sessionFuture() {
    return sessionFuture;
  }

  /** StoreService with StreamObserver callbacks (e.g. for WatchSessions). */
  public StoreServiceGrpc.StoreServiceStub storeAsync() {
    return storeAsync;
  }

  /** SessionService with StreamObserver callbacks. */
  public SessionServiceGrpc.SessionServiceStub sessionAsync() {
    return sessionAsync;
  }

  /** The channel with the client's interceptors, for stubs or calls of your own. */
  public Channel channel() {
    return channel;
  }

  /**
   * A resumable watch of {@code request.session} from {@code request.after_seq}
   * (0 = the whole log), with the default reconnect backoff. The stream opens
   * now; close the watch when done with it (closing the client closes it too).
   */
  public EntryWatch watchEntries(WatchEntriesRequest request) {
    return watchEntries(request, WatchOptions.DEFAULT);
  }

  /** A resumable watch with the given reconnect options (see {@link #watchEntries(WatchEntriesRequest)}). */
  public EntryWatch watchEntries(WatchEntriesRequest request, WatchOptions options) {
    EntryWatch[] self = new EntryWatch[1];
    EntryWatch w =
        new EntryWatch(
            channel,
            request,
            options,
            scheduler,
            managed::resetConnectBackoff,
            () -> watches.remove(self[0]));
    self[0] = w;
    watches.add(w);
    w.open();
    return w;
  }

  /**
   * The whole state, every page of GetState merged (see {@link Pages#readState}),
   * blob references resolved unless {@link Builder#blobRefs} keeps them.
   */
  public GetStateResponse readState(GetStateRequest request) {
    return Pages.readState(session, request);
  }

  /** The whole tree, every page of GetTree merged (see {@link Pages#readTree}). */
  public GetTreeResponse readTree(GetTreeRequest request) {
    return Pages.readTree(session, request);
  }

  /**
   * Reads a blob of {@code workspace} (a {@code BlobRef}'s sha256) from {@code
   * offset}, at most {@code length} bytes (0: to the end), every chunk GetBlob
   * streams. A whole blob (offset and length 0) is checked against its
   * SHA-256. A stream: not retried, and no {@link Builder#callTimeout} (a
   * deadline of the current {@link Context} applies).
   *
   * @throws SessiondException NOT_FOUND (no such blob in the workspace),
   *     INVALID_ARGUMENT (a malformed sha256, an offset past the end, a negative
   *     offset or length, refused here), DATA_LOSS (chunks that do not follow
   *     each other, more bytes than asked for, a whole blob whose hash is not
   *     sha256), CANCELLED when the thread is interrupted
   */
  public byte[] getBlob(String workspace, String sha256, long offset, long length) {
    if (offset < 0 || length < 0) {
      throw new SessiondException(
          Status.Code.INVALID_ARGUMENT,
          "GetBlob: offset " + offset + " and length " + length + " must not be negative");
    }
    Context.CancellableContext ctx = Context.current().withCancellation();
    try {
      CompletableFuture<ByteString> f =
          blobs.read(
              workspace,
              sha256,
              offset,
              length,
              length > 0 ? length : Integer.MAX_VALUE - 8,
              CallOptions.DEFAULT,
              ctx);
      ByteString data = f.get();
      if (offset == 0 && length == 0) {
        String got = BlobParts.sha256Hex(data);
        if (!got.equals(sha256)) {
          throw new SessiondException(
              Status.Code.DATA_LOSS, "GetBlob " + sha256 + ": read bytes whose SHA-256 is " + got);
        }
      }
      return data.toByteArray();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SessiondException(Status.Code.CANCELLED, "interrupted while reading blob " + sha256);
    } catch (ExecutionException e) {
      throw SessiondException.from(e);
    } finally {
      ctx.cancel(null);
    }
  }

  /** The cache of blobs read to resolve references (for the tests). */
  BlobCache blobCache() {
    return blobs.cache();
  }

  /**
   * Closes the open watches and the channel: calls in flight are given 5 s to
   * finish, then cancelled.
   */
  @Override
  public void close() {
    for (EntryWatch w : List.copyOf(watches)) {
      w.close();
    }
    managed.shutdown();
    try {
      if (!managed.awaitTermination(5, TimeUnit.SECONDS)) {
        managed.shutdownNow();
      }
    } catch (InterruptedException e) {
      managed.shutdownNow();
      Thread.currentThread().interrupt();
    } finally {
      scheduler.shutdownNow();
    }
  }

  /** Options of a {@link SessiondClient}; {@link #build()} makes it. */
  public static final class Builder {
    private final String target;
    private final ManagedChannel channel;
    private String token;
    private ChannelCredentials tls;
    private Duration callTimeout;
    private RetryPolicy retry = RetryPolicy.DEFAULT;
    private Duration keepaliveTime = Duration.ofSeconds(20);
    private Duration keepaliveTimeout = Duration.ofSeconds(10);
    private final List<ClientInterceptor> attemptInterceptors = new ArrayList<>();
    private final List<Consumer<ManagedChannelBuilder<?>>> channelOptions = new ArrayList<>();
    private boolean blobRefs;
    private int uploadPartsOver = BlobParts.DEFAULT_UPLOAD_PARTS_OVER;
    private long blobCacheBytes = BlobParts.DEFAULT_BLOB_CACHE_BYTES;
    private Supplier<String> sessionIds = Ids::newSessionId;

    private Builder(String target, ManagedChannel channel) {
      this.target = target;
      this.channel = channel;
    }

    /**
     * Sends {@code authorization: Bearer <token>} on every call and stream, as
     * servers started with --auth-tokens require. Also over plaintext, because
     * sessiond is often served on loopback without TLS; use {@link #tls} for
     * anything else.
     */
    public Builder token(String token) {
      if (token == null || token.isEmpty()) {
        throw new IllegalArgumentException("empty token");
      }
      this.token = token;
      return this;
    }

    /**
     * Connects over TLS, trusting the CA certificates in {@code caPem} (PEM),
     * or the system's roots when it is null.
     *
     * @throws IllegalArgumentException when caPem holds no certificate
     */
    public Builder tls(byte[] caPem) {
      if (caPem == null) {
        this.tls = TlsChannelCredentials.create();
        return this;
      }
      try {
        if (CertificateFactory.getInstance("X.509")
            .generateCertificates(new ByteArrayInputStream(caPem))
            .isEmpty()) {
          throw new IllegalArgumentException("no certificate found in the CA PEM");
        }
        this.tls =
            TlsChannelCredentials.newBuilder()
                .trustManager(new ByteArrayInputStream(caPem))
                .build();
      } catch (CertificateException | IOException e) {
        throw new IllegalArgumentException("the CA PEM holds no usable certificate: " + e, e);
      }
      return this;
    }

    /** Connects over TLS, trusting the CA certificates in the PEM file {@code caPemFile}. */
    public Builder tls(Path caPemFile) {
      try {
        return tls(Files.readAllBytes(caPemFile));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /**
     * Connects with credentials of your own, e.g. {@code
     * TlsChannelCredentials.newBuilder().keyManager(cert, key)...} for a
     * server started with --tls-client-ca.
     */
    public Builder credentials(ChannelCredentials credentials) {
      this.tls = Objects.requireNonNull(credentials, "credentials");
      return this;
    }

    /**
     * A deadline for every unary call that has none of its own, retries
     * included (default: none). Watch streams get none.
     */
    public Builder callTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("the call timeout must be positive");
      }
      this.callTimeout = timeout;
      return this;
    }

    /** The retry of unary calls (default {@link RetryPolicy#DEFAULT}; {@link RetryPolicy#NONE}: off). */
    public Builder retry(RetryPolicy policy) {
      this.retry = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * The keepalive: a PING after {@code time} without traffic while calls are
     * open, the connection closed when it goes unanswered for {@code timeout}
     * (default 20 s and 10 s; grpc-java raises a time under 10 s to 10 s).
     */
    public Builder keepalive(Duration time, Duration timeout) {
      if (time.isNegative() || time.isZero() || timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("keepalive time and timeout must be positive");
      }
      this.keepaliveTime = time;
      this.keepaliveTimeout = timeout;
      return this;
    }

    /** No PING: a call on a connection that died without closing waits for its deadline, a watch forever. */
    public Builder noKeepalive() {
      this.keepaliveTime = null;
      this.keepaliveTimeout = null;
      return this;
    }

    /**
     * Interceptors that run inside the ids and retry interceptors, once per
     * attempt (logging, metrics, ...); the first added sees a call first.
     */
    public Builder attemptInterceptor(ClientInterceptor... interceptors) {
      attemptInterceptors.addAll(List.of(interceptors));
      return this;
    }

    /**
     * Changes the channel builder before the channel is made (message size
     * limits, an executor, a user agent, ...).
     */
    public Builder channelOptions(Consumer<ManagedChannelBuilder<?>> options) {
      channelOptions.add(Objects.requireNonNull(options, "options"));
      return this;
    }

    /**
     * With {@code true}, GetState, GetEntries and WatchEntries answers ({@link
     * SessiondClient#readState} and {@link SessiondClient#watchEntries}
     * included) keep the blob references the server sends: a {@code
     * ContentPart.blob} (sha256, size, part, media type, a preview of a text)
     * stays where the part would be, for a caller that reads blobs itself
     * ({@link SessiondClient#getBlob}, {@link BlobParts#resolvedPart}), e.g. a
     * viewer that shows previews first. Default false: references are
     * resolved. Uploads are not affected (see {@link #uploadPartsOver}).
     */
    public Builder blobRefs(boolean keep) {
      this.blobRefs = keep;
      return this;
    }

    /**
     * The size over which a text, thinking or image part of an Append or
     * ImportSession may be uploaded with PutBlob before the call and sent as a
     * reference (default {@link BlobParts#DEFAULT_UPLOAD_PARTS_OVER}, 256 KiB;
     * 0: never, so a part must fit in a message of the server's limit). The
     * bytes counted are a text's UTF-8 bytes and an image's data. Such parts
     * are uploaded only when the request needs it: while they add up to more
     * than half the call's max outbound message size ({@code
     * withMaxOutboundMessageSize} on a stub; 4 MiB when none is set, so 2 MiB),
     * the largest are uploaded, one after the other; the rest, and all of them
     * in a request under that half, are sent inline and stored as blobs by the
     * server (one call instead of two).
     */
    public Builder uploadPartsOver(int bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("uploadPartsOver: the size must not be negative");
      }
      this.uploadPartsOver = bytes;
      return this;
    }

    /**
     * How many bytes of blobs read to resolve references the client keeps, least
     * recently used out first, so that a state read again (or a blob named by
     * several entries) is not downloaded again (default {@link
     * BlobParts#DEFAULT_BLOB_CACHE_BYTES}, 64 MiB; 0: no cache). A blob larger
     * than the cache is not kept.
     */
    public Builder blobCacheBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("blobCacheBytes: the size must not be negative");
      }
      this.blobCacheBytes = bytes;
      return this;
    }

    /**
     * Where the session ids the client draws come from (default {@link
     * Ids#newSessionId()}): for the tests, a drawer whose first id is taken.
     */
    Builder sessionIds(Supplier<String> drawer) {
      this.sessionIds = Objects.requireNonNull(drawer, "drawer");
      return this;
    }

    /** The client. The channel connects on the first call. */
    public SessiondClient build() {
      return new SessiondClient(this);
    }

    private ManagedChannel dial() {
      ManagedChannelBuilder<?> b =
          Grpc.newChannelBuilder(target, tls != null ? tls : InsecureChannelCredentials.create());
      if (keepaliveTime != null) {
        b.keepAliveTime(keepaliveTime.toNanos(), TimeUnit.NANOSECONDS)
            .keepAliveTimeout(keepaliveTimeout.toNanos(), TimeUnit.NANOSECONDS)
            .keepAliveWithoutCalls(false);
      }
      for (Consumer<ManagedChannelBuilder<?>> o : channelOptions) {
        o.accept(b);
      }
      return b.build();
    }
  }
}
