package io.github.sessiond.client;

import com.google.protobuf.ByteString;
import io.github.sessiond.v1.AppendRequest;
import io.github.sessiond.v1.AppendResponse;
import io.github.sessiond.v1.AppendedEntry;
import io.github.sessiond.v1.CreateSessionRequest;
import io.github.sessiond.v1.CreateSessionResponse;
import io.github.sessiond.v1.DeleteSessionRequest;
import io.github.sessiond.v1.DeleteSessionResponse;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.ForkSessionRequest;
import io.github.sessiond.v1.ForkSessionResponse;
import io.github.sessiond.v1.GetBlobRequest;
import io.github.sessiond.v1.GetBlobResponse;
import io.github.sessiond.v1.GetEntriesRequest;
import io.github.sessiond.v1.GetEntriesResponse;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.GetStateResponse;
import io.github.sessiond.v1.ImportSessionRequest;
import io.github.sessiond.v1.ImportSessionResponse;
import io.github.sessiond.v1.PutBlobRequest;
import io.github.sessiond.v1.PutBlobResponse;
import io.github.sessiond.v1.ResetRequest;
import io.github.sessiond.v1.ResetResponse;
import io.github.sessiond.v1.RewindRequest;
import io.github.sessiond.v1.RewindResponse;
import io.github.sessiond.v1.SessionMeta;
import io.github.sessiond.v1.SessionServiceGrpc;
import io.github.sessiond.v1.StoreServiceGrpc;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.github.sessiond.v1.WatchEntriesResponse;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * An in-process sessiond whose answers a test scripts: per method a queue of
 * failures (a {@link Status}) or responses, then a default answer; per
 * WatchEntries stream a script of seqs and how the stream ends. It records
 * every request and the authorization header of every call.
 */
final class FakeServer implements AutoCloseable {
  /** One WatchEntries stream: these entry seqs, then end with {@code end} (null: stay open). */
  record WatchScript(long[] seqs, Status end) {}

  private final String name = InProcessServerBuilder.generateName();
  private final Server server;
  private final Map<String, Deque<Object>> answers = new ConcurrentHashMap<>();
  private final Deque<WatchScript> watchScripts = new ArrayDeque<>();
  final List<com.google.protobuf.Message> requests = Collections.synchronizedList(new ArrayList<>());
  final List<String> authorizations = Collections.synchronizedList(new ArrayList<>());
  final LinkedBlockingQueue<WatchEntriesRequest> watchRequests = new LinkedBlockingQueue<>();
  final List<StreamObserver<WatchEntriesResponse>> openStreams =
      Collections.synchronizedList(new ArrayList<>());
  /** The blobs GetBlob serves, by sha256 (a test may keep bytes that do not hash to their name). */
  final Map<String, ByteString> blobs = new ConcurrentHashMap<>();
  /** Entries a WatchEntries script sends for these seqs instead of bare ones. */
  final Map<Long, Entry> watchEntries = new ConcurrentHashMap<>();
  /** PutBlob takes at most this many bytes of each chunk (0: all), as a server may. */
  volatile int putBlobTakes;
  /** Unfinished uploads by sha256: what PutBlob has taken so far. */
  final Map<String, ByteString> uploading = new ConcurrentHashMap<>();
  /** Run one each before a PutBlob is answered, in turn (another client moving an upload on). */
  final Deque<Runnable> beforePuts = new java.util.concurrent.ConcurrentLinkedDeque<>();

  FakeServer() throws IOException {
    ServerInterceptor headers =
        new ServerInterceptor() {
          @Override
          public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
              ServerCall<ReqT, RespT> call, Metadata h, ServerCallHandler<ReqT, RespT> next) {
            String auth = h.get(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER));
            authorizations.add(auth == null ? "" : auth);
            return next.startCall(call, h);
          }
        };
    server =
        InProcessServerBuilder.forName(name)
            .addService(ServerInterceptors.intercept(new Sessions(), headers))
            .addService(ServerInterceptors.intercept(new Store(), headers))
            .build()
            .start();
  }

  /** A client builder over an in-process channel to this server. */
  SessiondClient.Builder client() {
    ManagedChannel ch = InProcessChannelBuilder.forName(name).build();
    return SessiondClient.builder(ch);
  }

  /** Queues answers for a method: a Status fails the call, a message is the response. */
  void answer(io.grpc.MethodDescriptor<?, ?> method, Object... queued) {
    Deque<Object> q = answers.computeIfAbsent(method.getFullMethodName(), k -> new ArrayDeque<>());
    synchronized (q) {
      q.addAll(List.of(queued));
    }
  }

  /** Queues the script of the next WatchEntries stream. */
  void watch(Status end, long... seqs) {
    synchronized (watchScripts) {
      watchScripts.add(new WatchScript(seqs, end));
    }
  }

  /** The requests of one kind, in order. */
  <T> List<T> requestsOf(Class<T> type) {
    synchronized (requests) {
      return requests.stream().filter(type::isInstance).map(type::cast).toList();
    }
  }

  private <T extends com.google.protobuf.Message, R> void unary(
      io.grpc.MethodDescriptor<T, R> method, T req, StreamObserver<R> out, R fallback) {
    requests.add(req);
    Object a = null;
    Deque<Object> q = answers.get(method.getFullMethodName());
    if (q != null) {
      synchronized (q) {
        a = q.poll();
      }
    }
    if (a instanceof Status s) {
      out.onError(s.asRuntimeException());
      return;
    }
    R resp = a == null ? fallback : method.getResponseMarshaller().parse(
        ((com.google.protobuf.Message) a).toByteString().newInput());
    out.onNext(resp);
    out.onCompleted();
  }

  private final class Sessions extends SessionServiceGrpc.SessionServiceImplBase {
    @Override
    public void append(AppendRequest req, StreamObserver<AppendResponse> out) {
      AppendResponse.Builder r = AppendResponse.newBuilder();
      long seq = 1;
      for (Entry e : req.getEntriesList()) {
        r.addEntries(AppendedEntry.newBuilder().setId(e.getId()).setSeq(++seq));
      }
      unary(SessionServiceGrpc.getAppendMethod(), req, out, r.setHeadSeq(seq).build());
    }

    @Override
    public void rewind(RewindRequest req, StreamObserver<RewindResponse> out) {
      unary(SessionServiceGrpc.getRewindMethod(), req, out,
          RewindResponse.newBuilder().setLeafEntryId(req.getEntryId()).build());
    }

    @Override
    public void reset(ResetRequest req, StreamObserver<ResetResponse> out) {
      unary(SessionServiceGrpc.getResetMethod(), req, out,
          ResetResponse.newBuilder().setLeafEntryId(req.getEntryId()).build());
    }

    @Override
    public void getState(GetStateRequest req, StreamObserver<GetStateResponse> out) {
      if (req.getSession().equals("never-answers")) {
        requests.add(req);
        return; // the client's deadline ends it
      }
      unary(SessionServiceGrpc.getGetStateMethod(), req, out, GetStateResponse.getDefaultInstance());
    }

    @Override
    public void getEntries(GetEntriesRequest req, StreamObserver<GetEntriesResponse> out) {
      unary(SessionServiceGrpc.getGetEntriesMethod(), req, out, GetEntriesResponse.getDefaultInstance());
    }

    @Override
    public void watchEntries(WatchEntriesRequest req, StreamObserver<WatchEntriesResponse> out) {
      watchRequests.add(req);
      WatchScript script;
      synchronized (watchScripts) {
        script = watchScripts.poll();
      }
      if (script == null) {
        script = new WatchScript(new long[0], null);
      }
      for (long seq : script.seqs()) {
        Entry scripted = watchEntries.get(seq);
        out.onNext(
            WatchEntriesResponse.newBuilder()
                .setEntry(
                    scripted != null
                        ? scripted.toBuilder().setSeq(seq).build()
                        : Entry.newBuilder().setId("e" + seq).setSeq(seq).build())
                .build());
      }
      if (script.end() == null) {
        openStreams.add(out);
      } else if (script.end().isOk()) {
        out.onCompleted();
      } else {
        out.onError(script.end().asRuntimeException());
      }
    }
  }

  private final class Store extends StoreServiceGrpc.StoreServiceImplBase {
    private static SessionMeta meta(String id) {
      return SessionMeta.newBuilder().setId(id).build();
    }

    @Override
    public void createSession(CreateSessionRequest req, StreamObserver<CreateSessionResponse> out) {
      unary(StoreServiceGrpc.getCreateSessionMethod(), req, out,
          CreateSessionResponse.newBuilder().setSession(meta(req.getSessionId())).setCreated(true).build());
    }

    @Override
    public void forkSession(ForkSessionRequest req, StreamObserver<ForkSessionResponse> out) {
      unary(StoreServiceGrpc.getForkSessionMethod(), req, out,
          ForkSessionResponse.newBuilder().setSession(meta(req.getSessionId())).build());
    }

    @Override
    public void importSession(ImportSessionRequest req, StreamObserver<ImportSessionResponse> out) {
      unary(StoreServiceGrpc.getImportSessionMethod(), req, out,
          ImportSessionResponse.newBuilder().setSession(meta(req.getSessionId())).setCreated(true).build());
    }

    @Override
    public void getBlob(GetBlobRequest req, StreamObserver<GetBlobResponse> out) {
      requests.add(req);
      ByteString b = blobs.get(req.getSha256());
      if (b == null) {
        out.onError(Status.NOT_FOUND.withDescription("blob " + req.getSha256() + " not found").asRuntimeException());
        return;
      }
      if (req.getOffset() > b.size()) {
        out.onError(Status.INVALID_ARGUMENT.withDescription("offset past the end").asRuntimeException());
        return;
      }
      long end = req.getLength() == 0 ? b.size() : Math.min(b.size(), req.getOffset() + req.getLength());
      for (long at = req.getOffset(); at < end; at += BlobParts.CHUNK_BYTES) {
        long to = Math.min(at + BlobParts.CHUNK_BYTES, end);
        out.onNext(
            GetBlobResponse.newBuilder()
                .setData(b.substring((int) at, (int) to))
                .setOffset(at)
                .setSize(b.size())
                .build());
      }
      out.onCompleted();
    }

    @Override
    public void putBlob(PutBlobRequest req, StreamObserver<PutBlobResponse> out) {
      requests.add(req);
      Deque<Object> q = answers.get(StoreServiceGrpc.getPutBlobMethod().getFullMethodName());
      Object a = null;
      if (q != null) {
        synchronized (q) {
          a = q.poll();
        }
      }
      if (a instanceof Status st) {
        out.onError(st.asRuntimeException());
        return;
      }
      String sha = req.getSha256();
      PutBlobResponse.Builder res = PutBlobResponse.newBuilder();
      if (blobs.containsKey(sha)) {
        out.onNext(res.setReceived(req.getSize()).setStored(true).build());
        out.onCompleted();
        return;
      }
      Runnable before = beforePuts.poll();
      if (before != null) {
        before.run();
      }
      ByteString have = uploading.getOrDefault(sha, ByteString.EMPTY);
      long end = req.getOffset() + req.getData().size();
      if (req.getOffset() > have.size() || (req.getOffset() < have.size() && end > have.size())) {
        out.onError(
            Status.FAILED_PRECONDITION
                .withDescription("offset " + req.getOffset() + ": " + have.size() + " bytes received")
                .asRuntimeException());
        return;
      }
      if (req.getOffset() < have.size() || req.getData().isEmpty()) { // a retried chunk, or the empty one that asks
        out.onNext(res.setReceived(have.size()).build());
        out.onCompleted();
        return;
      }
      ByteString data = req.getData();
      int takes = putBlobTakes;
      if (takes > 0 && data.size() > takes) {
        data = data.substring(0, takes);
      }
      have = have.concat(data);
      if (have.size() < req.getSize()) {
        uploading.put(sha, have);
        out.onNext(res.setReceived(have.size()).build());
        out.onCompleted();
        return;
      }
      uploading.remove(sha);
      if (have.size() != req.getSize() || !BlobParts.sha256Hex(have).equals(sha)) {
        out.onError(Status.INVALID_ARGUMENT.withDescription("content does not hash to " + sha).asRuntimeException());
        return;
      }
      blobs.put(sha, have);
      out.onNext(res.setReceived(have.size()).setStored(true).build());
      out.onCompleted();
    }

    @Override
    public void deleteSession(DeleteSessionRequest req, StreamObserver<DeleteSessionResponse> out) {
      unary(StoreServiceGrpc.getDeleteSessionMethod(), req, out,
          DeleteSessionResponse.newBuilder().addDeletedSessionIds(req.getSession()).build());
    }
  }

  @Override
  public void close() {
    server.shutdownNow();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
