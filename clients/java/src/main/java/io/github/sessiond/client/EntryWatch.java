package io.github.sessiond.client;

import io.github.sessiond.v1.SessionServiceGrpc;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.github.sessiond.v1.WatchEntriesResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * A WatchEntries stream that survives disconnects and server restarts: every
 * entry of the session once, in seq order, then each new one as it is
 * appended; heartbeats pass through (they carry the head seq while nothing
 * happens).
 *
 * <p>It remembers the seq of the last entry it received and, when the stream
 * breaks (UNAVAILABLE, INTERNAL, UNKNOWN, DEADLINE_EXCEEDED, ABORTED, a
 * CANCELLED it did not ask for, or a clean end, as a proxy timing out does),
 * opens a new one with {@code after_seq} set to it, after a backoff of 100 ms
 * doubling to 5 s ({@link WatchOptions}). Entries at or below that seq are
 * skipped, should a server replay them. Entries received but not yet taken
 * wait in order, so that "the last entry received" and "the last entry
 * delivered" resume the same way. NOT_FOUND (the session was deleted) and
 * every other code end the watch: {@link #hasNext()} throws the {@link
 * SessiondException}.
 *
 * <p>Use it as an {@link Iterator} (blocking) or with {@link #poll(Duration)}
 * (with a timeout), from one thread; {@link #close()} may be called from any
 * thread and ends the stream on the server: after it {@code hasNext()} is
 * false. Entries are requested from the server as they are taken (16 ahead),
 * so a slow reader holds the server back instead of filling memory.
 *
 * <p>Entries come with their blob references resolved (the parts they stand
 * for, read with GetBlob before the entry is handed over) unless the client
 * keeps references ({@link SessiondClient.Builder#blobRefs}). A blob that
 * cannot be read breaks the stream with the read's code: UNAVAILABLE resumes
 * from the entry before, DATA_LOSS (content that does not match its
 * reference) ends the watch.
 */
public final class EntryWatch implements Iterator<WatchEntriesResponse>, AutoCloseable {
  private static final int PREFETCH = 16;

  /** Codes after which the stream is resumed: it broke, not the session. */
  private static final Set<Status.Code> RESUMABLE =
      EnumSet.of(
          Status.Code.UNAVAILABLE,
          Status.Code.INTERNAL,
          Status.Code.UNKNOWN,
          Status.Code.DEADLINE_EXCEEDED,
          Status.Code.ABORTED,
          Status.Code.CANCELLED);

  /** What the gRPC threads hand to the reader: an event, the end of the watch, or its failure. */
  private record Item(
      WatchEntriesResponse event,
      ClientCall<WatchEntriesRequest, WatchEntriesResponse> from,
      SessiondException error) {}

  private static final Item END = new Item(null, null, null);

  private final Channel channel;
  private final WatchEntriesRequest request;
  private final ScheduledExecutorService scheduler;
  private final Runnable beforeReconnect;
  private final Runnable onClosed;
  private final long baseNanos;
  private final long maxNanos;
  private final BiConsumer<Status, Long> onReconnect;
  private final BlockingQueue<Item> queue = new LinkedBlockingQueue<>();

  private final Object lock = new Object();
  // Guarded by lock.
  private long receivedSeq;
  private ClientCall<WatchEntriesRequest, WatchEntriesResponse> call;
  private ScheduledFuture<?> pending;
  private boolean closed;
  private long delayNanos;
  private int reconnects;

  // The reader's (one thread).
  private Item peeked;
  private SessiondException failure;
  private boolean ended;
  private volatile long lastSeq;
  private volatile boolean closedByCall;

  EntryWatch(
      Channel channel,
      WatchEntriesRequest request,
      WatchOptions options,
      ScheduledExecutorService scheduler,
      Runnable beforeReconnect,
      Runnable onClosed) {
    this.channel = channel;
    this.request = request;
    this.scheduler = scheduler;
    this.beforeReconnect = beforeReconnect;
    this.onClosed = onClosed;
    this.baseNanos = options.baseDelay().toNanos();
    this.maxNanos = options.maxDelay().toNanos();
    this.onReconnect = options.onReconnect();
    this.delayNanos = baseNanos;
    this.receivedSeq = request.getAfterSeq();
    this.lastSeq = request.getAfterSeq();
  }

  /**
   * Opens a stream from the last seq received. In the root context: the
   * watch lives until {@link #close()}, not as long as the caller's context.
   */
  void open() {
    Context.ROOT.run(this::openStream);
  }

  private void openStream() {
    synchronized (lock) {
      pending = null;
      if (closed) {
        return;
      }
      WatchEntriesRequest req = request.toBuilder().setAfterSeq(receivedSeq).build();
      ClientCall<WatchEntriesRequest, WatchEntriesResponse> c =
          channel.newCall(SessionServiceGrpc.getWatchEntriesMethod(), CallOptions.DEFAULT);
      call = c;
      c.start(new StreamListener(c), new Metadata());
      c.request(PREFETCH);
      c.sendMessage(req);
      c.halfClose();
    }
  }

  private void reopen() {
    try {
      beforeReconnect.run();
    } catch (RuntimeException e) {
      // A channel shutting down: the new stream reports it.
    }
    open();
  }

  /** Listens to one stream; a stream that is no longer the current one is ignored. */
  private final class StreamListener extends ClientCall.Listener<WatchEntriesResponse> {
    private final ClientCall<WatchEntriesRequest, WatchEntriesResponse> c;

    StreamListener(ClientCall<WatchEntriesRequest, WatchEntriesResponse> c) {
      this.c = c;
    }

    @Override
    public void onMessage(WatchEntriesResponse m) {
      synchronized (lock) {
        if (c != call || closed) {
          return;
        }
        delayNanos = baseNanos;
        if (m.hasEntry()) {
          long seq = m.getEntry().getSeq();
          if (Long.compareUnsigned(seq, receivedSeq) <= 0) {
            c.request(1); // replayed after a resume race: skip it, ask for the next
            return;
          }
          receivedSeq = seq;
        }
        queue.add(new Item(m, c, null));
      }
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      synchronized (lock) {
        if (c != call || closed) {
          return;
        }
        call = null;
        if (!status.isOk() && !RESUMABLE.contains(status.getCode())) {
          queue.add(new Item(null, null, new SessiondException(status, trailers)));
          return;
        }
        reconnects++;
        if (onReconnect != null) {
          onReconnect.accept(status, receivedSeq);
        }
        long wait = RetryPolicy.jitter(delayNanos);
        delayNanos = Math.min(delayNanos * 2, maxNanos);
        try {
          pending = scheduler.schedule(EntryWatch.this::reopen, wait, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
          queue.add(
              new Item(
                  null,
                  null,
                  new SessiondException(Status.Code.CANCELLED, "the client was closed")));
        }
      }
    }
  }

  /**
   * Whether another event follows; blocks until one arrives (reconnecting as
   * often as needed) or the watch ends.
   *
   * @return false once {@link #close()} was called
   * @throws SessiondException when the watch ended on an error: NOT_FOUND when
   *     the session was deleted, or any other code that is not a broken stream
   *     (CANCELLED when the waiting thread was interrupted)
   */
  @Override
  public boolean hasNext() {
    if (failure != null) {
      throw failure;
    }
    if (closedByCall) {
      return false;
    }
    if (peeked != null) {
      return true;
    }
    if (ended) {
      return false;
    }
    Item it;
    try {
      it = queue.take();
    } catch (InterruptedException e) {
      throw interrupted();
    }
    return accept(it);
  }

  /** The next entry or heartbeat (see {@link #hasNext()}). */
  @Override
  public WatchEntriesResponse next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the watch is closed");
    }
    WatchEntriesResponse r = peeked.event();
    peeked = null;
    if (r.hasEntry()) {
      lastSeq = r.getEntry().getSeq();
    }
    return r;
  }

  /**
   * The next entry or heartbeat, waiting at most {@code timeout}: null when
   * none came in time or the watch was closed.
   *
   * @throws SessiondException as {@link #hasNext()}
   */
  public WatchEntriesResponse poll(Duration timeout) {
    if (failure != null) {
      throw failure;
    }
    if (closedByCall) {
      return null;
    }
    if (peeked == null) {
      if (ended) {
        return null;
      }
      Item it;
      try {
        it = queue.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        throw interrupted();
      }
      if (it == null || !accept(it)) {
        return null;
      }
    }
    return next();
  }

  /** The reader's thread was interrupted: the watch ends with CANCELLED (the flag stays set). */
  private SessiondException interrupted() {
    Thread.currentThread().interrupt();
    failure = new SessiondException(Status.Code.CANCELLED, "interrupted while watching");
    ended = true;
    release();
    return failure;
  }

  /** Takes an item off the queue: an event to return, the end, or the failure to throw. */
  private boolean accept(Item it) {
    if (it == END) {
      ended = true;
      return false;
    }
    if (it.error() != null) {
      failure = it.error();
      ended = true;
      release();
      throw failure;
    }
    peeked = it;
    synchronized (lock) {
      if (it.from() == call && !closed) {
        it.from().request(1); // one taken, one more may come
      }
    }
    return true;
  }

  /** The seq of the last entry returned (or the request's after_seq): resume from it to miss nothing. */
  public long lastSeq() {
    return lastSeq;
  }

  /** How often the stream ended and was opened again. */
  public int reconnects() {
    synchronized (lock) {
      return reconnects;
    }
  }

  /** Ends the watch and its stream on the server; a blocked {@link #hasNext()} returns false. */
  @Override
  public void close() {
    closedByCall = true;
    release();
  }

  /** Stops the stream and any pending reconnect, wakes the reader, tells the client. */
  private void release() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      if (pending != null) {
        pending.cancel(false);
        pending = null;
      }
      if (call != null) {
        call.cancel("the watch was closed", null);
        call = null;
      }
    }
    queue.add(END);
    onClosed.run();
  }
}
