package io.github.sessiond.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * SessionService works on one session.
 * Common rules (see StoreService for workspace / session addressing):
 * - Mutations (Append, Rewind, Reset) are serialised per session; seq is
 *   dense. An acknowledged mutation is durable (fdatasynced / committed).
 * - expected_leaf_id / expected_seq: optimistic concurrency. On mismatch the
 *   call fails with ABORTED and writes nothing.
 * - A timeout / UNAVAILABLE / INTERNAL means "outcome unknown": retry with
 *   the same entry ids; the server de-duplicates.
 * - DATA_LOSS: the session's log has mid-file corruption (names the line).
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class SessionServiceGrpc {

  private SessionServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "sessiond.v1.SessionService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.AppendRequest,
      io.github.sessiond.v1.AppendResponse> getAppendMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Append",
      requestType = io.github.sessiond.v1.AppendRequest.class,
      responseType = io.github.sessiond.v1.AppendResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.AppendRequest,
      io.github.sessiond.v1.AppendResponse> getAppendMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.AppendRequest, io.github.sessiond.v1.AppendResponse> getAppendMethod;
    if ((getAppendMethod = SessionServiceGrpc.getAppendMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getAppendMethod = SessionServiceGrpc.getAppendMethod) == null) {
          SessionServiceGrpc.getAppendMethod = getAppendMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.AppendRequest, io.github.sessiond.v1.AppendResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Append"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.AppendRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.AppendResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("Append"))
              .build();
        }
      }
    }
    return getAppendMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.RewindRequest,
      io.github.sessiond.v1.RewindResponse> getRewindMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Rewind",
      requestType = io.github.sessiond.v1.RewindRequest.class,
      responseType = io.github.sessiond.v1.RewindResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.RewindRequest,
      io.github.sessiond.v1.RewindResponse> getRewindMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.RewindRequest, io.github.sessiond.v1.RewindResponse> getRewindMethod;
    if ((getRewindMethod = SessionServiceGrpc.getRewindMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getRewindMethod = SessionServiceGrpc.getRewindMethod) == null) {
          SessionServiceGrpc.getRewindMethod = getRewindMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.RewindRequest, io.github.sessiond.v1.RewindResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Rewind"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.RewindRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.RewindResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("Rewind"))
              .build();
        }
      }
    }
    return getRewindMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.ResetRequest,
      io.github.sessiond.v1.ResetResponse> getResetMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Reset",
      requestType = io.github.sessiond.v1.ResetRequest.class,
      responseType = io.github.sessiond.v1.ResetResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.ResetRequest,
      io.github.sessiond.v1.ResetResponse> getResetMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.ResetRequest, io.github.sessiond.v1.ResetResponse> getResetMethod;
    if ((getResetMethod = SessionServiceGrpc.getResetMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getResetMethod = SessionServiceGrpc.getResetMethod) == null) {
          SessionServiceGrpc.getResetMethod = getResetMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.ResetRequest, io.github.sessiond.v1.ResetResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Reset"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ResetRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ResetResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("Reset"))
              .build();
        }
      }
    }
    return getResetMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.GetStateRequest,
      io.github.sessiond.v1.GetStateResponse> getGetStateMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetState",
      requestType = io.github.sessiond.v1.GetStateRequest.class,
      responseType = io.github.sessiond.v1.GetStateResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.GetStateRequest,
      io.github.sessiond.v1.GetStateResponse> getGetStateMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.GetStateRequest, io.github.sessiond.v1.GetStateResponse> getGetStateMethod;
    if ((getGetStateMethod = SessionServiceGrpc.getGetStateMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getGetStateMethod = SessionServiceGrpc.getGetStateMethod) == null) {
          SessionServiceGrpc.getGetStateMethod = getGetStateMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.GetStateRequest, io.github.sessiond.v1.GetStateResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetState"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetStateRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetStateResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("GetState"))
              .build();
        }
      }
    }
    return getGetStateMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.GetEntriesRequest,
      io.github.sessiond.v1.GetEntriesResponse> getGetEntriesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetEntries",
      requestType = io.github.sessiond.v1.GetEntriesRequest.class,
      responseType = io.github.sessiond.v1.GetEntriesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.GetEntriesRequest,
      io.github.sessiond.v1.GetEntriesResponse> getGetEntriesMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.GetEntriesRequest, io.github.sessiond.v1.GetEntriesResponse> getGetEntriesMethod;
    if ((getGetEntriesMethod = SessionServiceGrpc.getGetEntriesMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getGetEntriesMethod = SessionServiceGrpc.getGetEntriesMethod) == null) {
          SessionServiceGrpc.getGetEntriesMethod = getGetEntriesMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.GetEntriesRequest, io.github.sessiond.v1.GetEntriesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetEntries"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetEntriesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetEntriesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("GetEntries"))
              .build();
        }
      }
    }
    return getGetEntriesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.GetTreeRequest,
      io.github.sessiond.v1.GetTreeResponse> getGetTreeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetTree",
      requestType = io.github.sessiond.v1.GetTreeRequest.class,
      responseType = io.github.sessiond.v1.GetTreeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.GetTreeRequest,
      io.github.sessiond.v1.GetTreeResponse> getGetTreeMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.GetTreeRequest, io.github.sessiond.v1.GetTreeResponse> getGetTreeMethod;
    if ((getGetTreeMethod = SessionServiceGrpc.getGetTreeMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getGetTreeMethod = SessionServiceGrpc.getGetTreeMethod) == null) {
          SessionServiceGrpc.getGetTreeMethod = getGetTreeMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.GetTreeRequest, io.github.sessiond.v1.GetTreeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetTree"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetTreeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetTreeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("GetTree"))
              .build();
        }
      }
    }
    return getGetTreeMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.WatchEntriesRequest,
      io.github.sessiond.v1.WatchEntriesResponse> getWatchEntriesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "WatchEntries",
      requestType = io.github.sessiond.v1.WatchEntriesRequest.class,
      responseType = io.github.sessiond.v1.WatchEntriesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.WatchEntriesRequest,
      io.github.sessiond.v1.WatchEntriesResponse> getWatchEntriesMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.WatchEntriesRequest, io.github.sessiond.v1.WatchEntriesResponse> getWatchEntriesMethod;
    if ((getWatchEntriesMethod = SessionServiceGrpc.getWatchEntriesMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getWatchEntriesMethod = SessionServiceGrpc.getWatchEntriesMethod) == null) {
          SessionServiceGrpc.getWatchEntriesMethod = getWatchEntriesMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.WatchEntriesRequest, io.github.sessiond.v1.WatchEntriesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "WatchEntries"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.WatchEntriesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.WatchEntriesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("WatchEntries"))
              .build();
        }
      }
    }
    return getWatchEntriesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.RedactEntriesRequest,
      io.github.sessiond.v1.RedactEntriesResponse> getRedactEntriesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RedactEntries",
      requestType = io.github.sessiond.v1.RedactEntriesRequest.class,
      responseType = io.github.sessiond.v1.RedactEntriesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.RedactEntriesRequest,
      io.github.sessiond.v1.RedactEntriesResponse> getRedactEntriesMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.RedactEntriesRequest, io.github.sessiond.v1.RedactEntriesResponse> getRedactEntriesMethod;
    if ((getRedactEntriesMethod = SessionServiceGrpc.getRedactEntriesMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getRedactEntriesMethod = SessionServiceGrpc.getRedactEntriesMethod) == null) {
          SessionServiceGrpc.getRedactEntriesMethod = getRedactEntriesMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.RedactEntriesRequest, io.github.sessiond.v1.RedactEntriesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RedactEntries"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.RedactEntriesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.RedactEntriesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("RedactEntries"))
              .build();
        }
      }
    }
    return getRedactEntriesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.GetUsageRequest,
      io.github.sessiond.v1.GetUsageResponse> getGetUsageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetUsage",
      requestType = io.github.sessiond.v1.GetUsageRequest.class,
      responseType = io.github.sessiond.v1.GetUsageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.GetUsageRequest,
      io.github.sessiond.v1.GetUsageResponse> getGetUsageMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.GetUsageRequest, io.github.sessiond.v1.GetUsageResponse> getGetUsageMethod;
    if ((getGetUsageMethod = SessionServiceGrpc.getGetUsageMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getGetUsageMethod = SessionServiceGrpc.getGetUsageMethod) == null) {
          SessionServiceGrpc.getGetUsageMethod = getGetUsageMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.GetUsageRequest, io.github.sessiond.v1.GetUsageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetUsage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetUsageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetUsageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("GetUsage"))
              .build();
        }
      }
    }
    return getGetUsageMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static SessionServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SessionServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SessionServiceStub>() {
        @java.lang.Override
        public SessionServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SessionServiceStub(channel, callOptions);
        }
      };
    return SessionServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static SessionServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SessionServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SessionServiceBlockingV2Stub>() {
        @java.lang.Override
        public SessionServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SessionServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return SessionServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static SessionServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SessionServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SessionServiceBlockingStub>() {
        @java.lang.Override
        public SessionServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SessionServiceBlockingStub(channel, callOptions);
        }
      };
    return SessionServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static SessionServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SessionServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SessionServiceFutureStub>() {
        @java.lang.Override
        public SessionServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SessionServiceFutureStub(channel, callOptions);
        }
      };
    return SessionServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * SessionService works on one session.
   * Common rules (see StoreService for workspace / session addressing):
   * - Mutations (Append, Rewind, Reset) are serialised per session; seq is
   *   dense. An acknowledged mutation is durable (fdatasynced / committed).
   * - expected_leaf_id / expected_seq: optimistic concurrency. On mismatch the
   *   call fails with ABORTED and writes nothing.
   * - A timeout / UNAVAILABLE / INTERNAL means "outcome unknown": retry with
   *   the same entry ids; the server de-duplicates.
   * - DATA_LOSS: the session's log has mid-file corruption (names the line).
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Append adds entries atomically (all or none, also across a crash). An
     * entry without parent_id attaches to the current leaf (inside a batch: to
     * the previous entry); every appended entry becomes the new leaf.
     * Idempotent: entries whose ids already exist with identical content are
     * returned as stored, nothing is written.
     * Errors: INVALID_ARGUMENT (unknown parent, malformed or duplicate id,
     * kind unset, Leaf appended directly, TOOL message answering no open tool
     * call on its path, compaction reaching off its path or splitting a tool
     * call from its result), ALREADY_EXISTS (id reused with other content),
     * ABORTED (expected_leaf_id / expected_seq mismatch), RESOURCE_EXHAUSTED
     * (too many entries / bytes), NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    default void append(io.github.sessiond.v1.AppendRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.AppendResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getAppendMethod(), responseObserver);
    }

    /**
     * <pre>
     * Rewind moves the current leaf to an entry (by id or label) by appending
     * a Leaf entry. A target before the compaction floor (the parent of the
     * newest Compaction on the current path) fails with FAILED_PRECONDITION
     * unless allow_before_compaction.
     * Errors: NOT_FOUND (target), INVALID_ARGUMENT (target is a Leaf entry),
     * FAILED_PRECONDITION, ABORTED.
     * </pre>
     */
    default void rewind(io.github.sessiond.v1.RewindRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.RewindResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRewindMethod(), responseObserver);
    }

    /**
     * <pre>
     * Reset moves the current leaf to the root (empty context); history kept.
     * Errors: NOT_FOUND, ABORTED.
     * </pre>
     */
    default void reset(io.github.sessiond.v1.ResetRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ResetResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getResetMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetState folds the path root -&gt; at_entry_id (default: the current leaf)
     * into a SessionState in the CONTEXT or HISTORY view.
     * Paging: the state's messages come in pages; every page carries the same
     * fold (model, label, custom, leaf ids, head seq, ...) with the next run of
     * messages. A response with a non-empty next_page_token is NOT the whole
     * state: call again with the same request and page_token set to it, until
     * next_page_token is empty, and concatenate the messages. A caller that
     * never sends page_size gets as many messages as fit in one response (every
     * state that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * With from_end the pages run backwards: the first holds the last
     * messages of the state (those nearest the entry folded to), each next
     * one the run just before the previous page's, the messages of a page
     * still in path order (prepend each page to what you have). A reader that
     * shows the end of a long path first needs one call for it.
     * Consistency: every page is cut from the fold of the first page's
     * snapshot (its head seq, current leaf and fold target), also while
     * entries are appended or the leaf moves between pages.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (a Leaf entry, a
     * malformed page_token or one issued for another session, view,
     * at_entry_id or direction), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    default void getState(io.github.sessiond.v1.GetStateRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetStateResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetStateMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetEntries returns a page of the raw log in seq order: at most limit
     * entries, and fewer when more would exceed max_response_bytes. With
     * entry_ids, those entries instead (by id, without knowing their seq).
     * Errors: INVALID_ARGUMENT (limit over the maximum, more entry_ids than
     * that, entry_ids with after_seq or limit), NOT_FOUND (the session, or an
     * entry of entry_ids: the message names it), RESOURCE_EXHAUSTED (one
     * entry alone larger than --max-message-bytes).
     * </pre>
     */
    default void getEntries(io.github.sessiond.v1.GetEntriesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetEntriesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetEntriesMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetTree returns every entry's shape (id, parent, kind, seq, label,
     * on-current-path): enough to draw the tree.
     * Paging: nodes come in seq order, in pages. A response with a non-empty
     * next_page_token is NOT the whole tree: call again with the same request
     * and page_token set to it, until next_page_token is empty. A caller that
     * never sends page_size gets as many nodes as fit in one response (every
     * tree that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * Consistency: every page describes the first page's snapshot: entries
     * appended after it (seq &gt; its head_seq) are left out, and
     * on_current_path, leaf_id and head_seq are those of the first page on
     * every page, also when the leaf moves between pages.
     * Errors: NOT_FOUND, INVALID_ARGUMENT (a malformed page_token or one
     * issued for another session), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    default void getTree(io.github.sessiond.v1.GetTreeRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetTreeResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetTreeMethod(), responseObserver);
    }

    /**
     * <pre>
     * WatchEntries streams every entry with seq &gt; after_seq, then each new
     * entry as it is appended, in seq order, each exactly once; heartbeats
     * carry the head seq. Reconnect with the last seq seen to miss nothing.
     * A deleted session ends the stream with NOT_FOUND; a server shutdown with
     * UNAVAILABLE. Errors: NOT_FOUND, RESOURCE_EXHAUSTED (too many watchers).
     * </pre>
     */
    default void watchEntries(io.github.sessiond.v1.WatchEntriesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.WatchEntriesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWatchEntriesMethod(), responseObserver);
    }

    /**
     * <pre>
     * RedactEntries purges the content of chosen entries while keeping the
     * tree: each entry keeps its id, parent, seq, timestamp and kind, its
     * content is emptied (what is kept per kind: Entry.withheld) and
     * Entry.withheld says who, when and why. The content is gone from the
     * stored log (JSONL: the log is rewritten crash-safely under the
     * session's lock; PostgreSQL: the rows are updated), from every read,
     * from search and from CONTEXT, where a withheld message reads
     * "[redacted]". Watchers get a withheld_entries event. Idempotent: an
     * entry already redacted is answered as stored, nothing is written.
     * Nothing is written when any id is refused.
     * Errors: NOT_FOUND (the session, or an entry id: the message names it),
     * INVALID_ARGUMENT (no entry_ids, too many, a SessionInfo or Leaf entry:
     * named), DATA_LOSS.
     * </pre>
     */
    default void redactEntries(io.github.sessiond.v1.RedactEntriesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.RedactEntriesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRedactEntriesMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetUsage sums what a session's assistant messages cost, as the tree
     * knows it: the whole tree (every entry ever appended, abandoned branches
     * included), the current path, each branch, and the subagent sessions
     * (recursively). A message without Usage.cost is priced from the server's
     * price table (serve --prices) by its model and timestamp, or counted as
     * unpriced. Withheld (redacted / erased) messages keep their usage and
     * count. Billed tokens are never mixed with the context's size:
     * context_tokens estimates what the current path would take to send again.
     * Errors: NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    default void getUsage(io.github.sessiond.v1.GetUsageRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetUsageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetUsageMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service SessionService.
   * <pre>
   * SessionService works on one session.
   * Common rules (see StoreService for workspace / session addressing):
   * - Mutations (Append, Rewind, Reset) are serialised per session; seq is
   *   dense. An acknowledged mutation is durable (fdatasynced / committed).
   * - expected_leaf_id / expected_seq: optimistic concurrency. On mismatch the
   *   call fails with ABORTED and writes nothing.
   * - A timeout / UNAVAILABLE / INTERNAL means "outcome unknown": retry with
   *   the same entry ids; the server de-duplicates.
   * - DATA_LOSS: the session's log has mid-file corruption (names the line).
   * </pre>
   */
  public static abstract class SessionServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return SessionServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service SessionService.
   * <pre>
   * SessionService works on one session.
   * Common rules (see StoreService for workspace / session addressing):
   * - Mutations (Append, Rewind, Reset) are serialised per session; seq is
   *   dense. An acknowledged mutation is durable (fdatasynced / committed).
   * - expected_leaf_id / expected_seq: optimistic concurrency. On mismatch the
   *   call fails with ABORTED and writes nothing.
   * - A timeout / UNAVAILABLE / INTERNAL means "outcome unknown": retry with
   *   the same entry ids; the server de-duplicates.
   * - DATA_LOSS: the session's log has mid-file corruption (names the line).
   * </pre>
   */
  public static final class SessionServiceStub
      extends io.grpc.stub.AbstractAsyncStub<SessionServiceStub> {
    private SessionServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SessionServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SessionServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Append adds entries atomically (all or none, also across a crash). An
     * entry without parent_id attaches to the current leaf (inside a batch: to
     * the previous entry); every appended entry becomes the new leaf.
     * Idempotent: entries whose ids already exist with identical content are
     * returned as stored, nothing is written.
     * Errors: INVALID_ARGUMENT (unknown parent, malformed or duplicate id,
     * kind unset, Leaf appended directly, TOOL message answering no open tool
     * call on its path, compaction reaching off its path or splitting a tool
     * call from its result), ALREADY_EXISTS (id reused with other content),
     * ABORTED (expected_leaf_id / expected_seq mismatch), RESOURCE_EXHAUSTED
     * (too many entries / bytes), NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    public void append(io.github.sessiond.v1.AppendRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.AppendResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getAppendMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Rewind moves the current leaf to an entry (by id or label) by appending
     * a Leaf entry. A target before the compaction floor (the parent of the
     * newest Compaction on the current path) fails with FAILED_PRECONDITION
     * unless allow_before_compaction.
     * Errors: NOT_FOUND (target), INVALID_ARGUMENT (target is a Leaf entry),
     * FAILED_PRECONDITION, ABORTED.
     * </pre>
     */
    public void rewind(io.github.sessiond.v1.RewindRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.RewindResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRewindMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Reset moves the current leaf to the root (empty context); history kept.
     * Errors: NOT_FOUND, ABORTED.
     * </pre>
     */
    public void reset(io.github.sessiond.v1.ResetRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ResetResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getResetMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetState folds the path root -&gt; at_entry_id (default: the current leaf)
     * into a SessionState in the CONTEXT or HISTORY view.
     * Paging: the state's messages come in pages; every page carries the same
     * fold (model, label, custom, leaf ids, head seq, ...) with the next run of
     * messages. A response with a non-empty next_page_token is NOT the whole
     * state: call again with the same request and page_token set to it, until
     * next_page_token is empty, and concatenate the messages. A caller that
     * never sends page_size gets as many messages as fit in one response (every
     * state that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * With from_end the pages run backwards: the first holds the last
     * messages of the state (those nearest the entry folded to), each next
     * one the run just before the previous page's, the messages of a page
     * still in path order (prepend each page to what you have). A reader that
     * shows the end of a long path first needs one call for it.
     * Consistency: every page is cut from the fold of the first page's
     * snapshot (its head seq, current leaf and fold target), also while
     * entries are appended or the leaf moves between pages.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (a Leaf entry, a
     * malformed page_token or one issued for another session, view,
     * at_entry_id or direction), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    public void getState(io.github.sessiond.v1.GetStateRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetStateResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetStateMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetEntries returns a page of the raw log in seq order: at most limit
     * entries, and fewer when more would exceed max_response_bytes. With
     * entry_ids, those entries instead (by id, without knowing their seq).
     * Errors: INVALID_ARGUMENT (limit over the maximum, more entry_ids than
     * that, entry_ids with after_seq or limit), NOT_FOUND (the session, or an
     * entry of entry_ids: the message names it), RESOURCE_EXHAUSTED (one
     * entry alone larger than --max-message-bytes).
     * </pre>
     */
    public void getEntries(io.github.sessiond.v1.GetEntriesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetEntriesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetEntriesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetTree returns every entry's shape (id, parent, kind, seq, label,
     * on-current-path): enough to draw the tree.
     * Paging: nodes come in seq order, in pages. A response with a non-empty
     * next_page_token is NOT the whole tree: call again with the same request
     * and page_token set to it, until next_page_token is empty. A caller that
     * never sends page_size gets as many nodes as fit in one response (every
     * tree that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * Consistency: every page describes the first page's snapshot: entries
     * appended after it (seq &gt; its head_seq) are left out, and
     * on_current_path, leaf_id and head_seq are those of the first page on
     * every page, also when the leaf moves between pages.
     * Errors: NOT_FOUND, INVALID_ARGUMENT (a malformed page_token or one
     * issued for another session), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    public void getTree(io.github.sessiond.v1.GetTreeRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetTreeResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetTreeMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * WatchEntries streams every entry with seq &gt; after_seq, then each new
     * entry as it is appended, in seq order, each exactly once; heartbeats
     * carry the head seq. Reconnect with the last seq seen to miss nothing.
     * A deleted session ends the stream with NOT_FOUND; a server shutdown with
     * UNAVAILABLE. Errors: NOT_FOUND, RESOURCE_EXHAUSTED (too many watchers).
     * </pre>
     */
    public void watchEntries(io.github.sessiond.v1.WatchEntriesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.WatchEntriesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getWatchEntriesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * RedactEntries purges the content of chosen entries while keeping the
     * tree: each entry keeps its id, parent, seq, timestamp and kind, its
     * content is emptied (what is kept per kind: Entry.withheld) and
     * Entry.withheld says who, when and why. The content is gone from the
     * stored log (JSONL: the log is rewritten crash-safely under the
     * session's lock; PostgreSQL: the rows are updated), from every read,
     * from search and from CONTEXT, where a withheld message reads
     * "[redacted]". Watchers get a withheld_entries event. Idempotent: an
     * entry already redacted is answered as stored, nothing is written.
     * Nothing is written when any id is refused.
     * Errors: NOT_FOUND (the session, or an entry id: the message names it),
     * INVALID_ARGUMENT (no entry_ids, too many, a SessionInfo or Leaf entry:
     * named), DATA_LOSS.
     * </pre>
     */
    public void redactEntries(io.github.sessiond.v1.RedactEntriesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.RedactEntriesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRedactEntriesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetUsage sums what a session's assistant messages cost, as the tree
     * knows it: the whole tree (every entry ever appended, abandoned branches
     * included), the current path, each branch, and the subagent sessions
     * (recursively). A message without Usage.cost is priced from the server's
     * price table (serve --prices) by its model and timestamp, or counted as
     * unpriced. Withheld (redacted / erased) messages keep their usage and
     * count. Billed tokens are never mixed with the context's size:
     * context_tokens estimates what the current path would take to send again.
     * Errors: NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    public void getUsage(io.github.sessiond.v1.GetUsageRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetUsageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetUsageMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service SessionService.
   * <pre>
   * SessionService works on one session.
   * Common rules (see StoreService for workspace / session addressing):
   * - Mutations (Append, Rewind, Reset) are serialised per session; seq is
   *   dense. An acknowledged mutation is durable (fdatasynced / committed).
   * - expected_leaf_id / expected_seq: optimistic concurrency. On mismatch the
   *   call fails with ABORTED and writes nothing.
   * - A timeout / UNAVAILABLE / INTERNAL means "outcome unknown": retry with
   *   the same entry ids; the server de-duplicates.
   * - DATA_LOSS: the session's log has mid-file corruption (names the line).
   * </pre>
   */
  public static final class SessionServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<SessionServiceBlockingV2Stub> {
    private SessionServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SessionServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SessionServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Append adds entries atomically (all or none, also across a crash). An
     * entry without parent_id attaches to the current leaf (inside a batch: to
     * the previous entry); every appended entry becomes the new leaf.
     * Idempotent: entries whose ids already exist with identical content are
     * returned as stored, nothing is written.
     * Errors: INVALID_ARGUMENT (unknown parent, malformed or duplicate id,
     * kind unset, Leaf appended directly, TOOL message answering no open tool
     * call on its path, compaction reaching off its path or splitting a tool
     * call from its result), ALREADY_EXISTS (id reused with other content),
     * ABORTED (expected_leaf_id / expected_seq mismatch), RESOURCE_EXHAUSTED
     * (too many entries / bytes), NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    public io.github.sessiond.v1.AppendResponse append(io.github.sessiond.v1.AppendRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getAppendMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Rewind moves the current leaf to an entry (by id or label) by appending
     * a Leaf entry. A target before the compaction floor (the parent of the
     * newest Compaction on the current path) fails with FAILED_PRECONDITION
     * unless allow_before_compaction.
     * Errors: NOT_FOUND (target), INVALID_ARGUMENT (target is a Leaf entry),
     * FAILED_PRECONDITION, ABORTED.
     * </pre>
     */
    public io.github.sessiond.v1.RewindResponse rewind(io.github.sessiond.v1.RewindRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRewindMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Reset moves the current leaf to the root (empty context); history kept.
     * Errors: NOT_FOUND, ABORTED.
     * </pre>
     */
    public io.github.sessiond.v1.ResetResponse reset(io.github.sessiond.v1.ResetRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getResetMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetState folds the path root -&gt; at_entry_id (default: the current leaf)
     * into a SessionState in the CONTEXT or HISTORY view.
     * Paging: the state's messages come in pages; every page carries the same
     * fold (model, label, custom, leaf ids, head seq, ...) with the next run of
     * messages. A response with a non-empty next_page_token is NOT the whole
     * state: call again with the same request and page_token set to it, until
     * next_page_token is empty, and concatenate the messages. A caller that
     * never sends page_size gets as many messages as fit in one response (every
     * state that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * With from_end the pages run backwards: the first holds the last
     * messages of the state (those nearest the entry folded to), each next
     * one the run just before the previous page's, the messages of a page
     * still in path order (prepend each page to what you have). A reader that
     * shows the end of a long path first needs one call for it.
     * Consistency: every page is cut from the fold of the first page's
     * snapshot (its head seq, current leaf and fold target), also while
     * entries are appended or the leaf moves between pages.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (a Leaf entry, a
     * malformed page_token or one issued for another session, view,
     * at_entry_id or direction), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    public io.github.sessiond.v1.GetStateResponse getState(io.github.sessiond.v1.GetStateRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetStateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetEntries returns a page of the raw log in seq order: at most limit
     * entries, and fewer when more would exceed max_response_bytes. With
     * entry_ids, those entries instead (by id, without knowing their seq).
     * Errors: INVALID_ARGUMENT (limit over the maximum, more entry_ids than
     * that, entry_ids with after_seq or limit), NOT_FOUND (the session, or an
     * entry of entry_ids: the message names it), RESOURCE_EXHAUSTED (one
     * entry alone larger than --max-message-bytes).
     * </pre>
     */
    public io.github.sessiond.v1.GetEntriesResponse getEntries(io.github.sessiond.v1.GetEntriesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetTree returns every entry's shape (id, parent, kind, seq, label,
     * on-current-path): enough to draw the tree.
     * Paging: nodes come in seq order, in pages. A response with a non-empty
     * next_page_token is NOT the whole tree: call again with the same request
     * and page_token set to it, until next_page_token is empty. A caller that
     * never sends page_size gets as many nodes as fit in one response (every
     * tree that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * Consistency: every page describes the first page's snapshot: entries
     * appended after it (seq &gt; its head_seq) are left out, and
     * on_current_path, leaf_id and head_seq are those of the first page on
     * every page, also when the leaf moves between pages.
     * Errors: NOT_FOUND, INVALID_ARGUMENT (a malformed page_token or one
     * issued for another session), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    public io.github.sessiond.v1.GetTreeResponse getTree(io.github.sessiond.v1.GetTreeRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetTreeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * WatchEntries streams every entry with seq &gt; after_seq, then each new
     * entry as it is appended, in seq order, each exactly once; heartbeats
     * carry the head seq. Reconnect with the last seq seen to miss nothing.
     * A deleted session ends the stream with NOT_FOUND; a server shutdown with
     * UNAVAILABLE. Errors: NOT_FOUND, RESOURCE_EXHAUSTED (too many watchers).
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, io.github.sessiond.v1.WatchEntriesResponse>
        watchEntries(io.github.sessiond.v1.WatchEntriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getWatchEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * RedactEntries purges the content of chosen entries while keeping the
     * tree: each entry keeps its id, parent, seq, timestamp and kind, its
     * content is emptied (what is kept per kind: Entry.withheld) and
     * Entry.withheld says who, when and why. The content is gone from the
     * stored log (JSONL: the log is rewritten crash-safely under the
     * session's lock; PostgreSQL: the rows are updated), from every read,
     * from search and from CONTEXT, where a withheld message reads
     * "[redacted]". Watchers get a withheld_entries event. Idempotent: an
     * entry already redacted is answered as stored, nothing is written.
     * Nothing is written when any id is refused.
     * Errors: NOT_FOUND (the session, or an entry id: the message names it),
     * INVALID_ARGUMENT (no entry_ids, too many, a SessionInfo or Leaf entry:
     * named), DATA_LOSS.
     * </pre>
     */
    public io.github.sessiond.v1.RedactEntriesResponse redactEntries(io.github.sessiond.v1.RedactEntriesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRedactEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetUsage sums what a session's assistant messages cost, as the tree
     * knows it: the whole tree (every entry ever appended, abandoned branches
     * included), the current path, each branch, and the subagent sessions
     * (recursively). A message without Usage.cost is priced from the server's
     * price table (serve --prices) by its model and timestamp, or counted as
     * unpriced. Withheld (redacted / erased) messages keep their usage and
     * count. Billed tokens are never mixed with the context's size:
     * context_tokens estimates what the current path would take to send again.
     * Errors: NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    public io.github.sessiond.v1.GetUsageResponse getUsage(io.github.sessiond.v1.GetUsageRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetUsageMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service SessionService.
   * <pre>
   * SessionService works on one session.
   * Common rules (see StoreService for workspace / session addressing):
   * - Mutations (Append, Rewind, Reset) are serialised per session; seq is
   *   dense. An acknowledged mutation is durable (fdatasynced / committed).
   * - expected_leaf_id / expected_seq: optimistic concurrency. On mismatch the
   *   call fails with ABORTED and writes nothing.
   * - A timeout / UNAVAILABLE / INTERNAL means "outcome unknown": retry with
   *   the same entry ids; the server de-duplicates.
   * - DATA_LOSS: the session's log has mid-file corruption (names the line).
   * </pre>
   */
  public static final class SessionServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<SessionServiceBlockingStub> {
    private SessionServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SessionServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SessionServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Append adds entries atomically (all or none, also across a crash). An
     * entry without parent_id attaches to the current leaf (inside a batch: to
     * the previous entry); every appended entry becomes the new leaf.
     * Idempotent: entries whose ids already exist with identical content are
     * returned as stored, nothing is written.
     * Errors: INVALID_ARGUMENT (unknown parent, malformed or duplicate id,
     * kind unset, Leaf appended directly, TOOL message answering no open tool
     * call on its path, compaction reaching off its path or splitting a tool
     * call from its result), ALREADY_EXISTS (id reused with other content),
     * ABORTED (expected_leaf_id / expected_seq mismatch), RESOURCE_EXHAUSTED
     * (too many entries / bytes), NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    public io.github.sessiond.v1.AppendResponse append(io.github.sessiond.v1.AppendRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getAppendMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Rewind moves the current leaf to an entry (by id or label) by appending
     * a Leaf entry. A target before the compaction floor (the parent of the
     * newest Compaction on the current path) fails with FAILED_PRECONDITION
     * unless allow_before_compaction.
     * Errors: NOT_FOUND (target), INVALID_ARGUMENT (target is a Leaf entry),
     * FAILED_PRECONDITION, ABORTED.
     * </pre>
     */
    public io.github.sessiond.v1.RewindResponse rewind(io.github.sessiond.v1.RewindRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRewindMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Reset moves the current leaf to the root (empty context); history kept.
     * Errors: NOT_FOUND, ABORTED.
     * </pre>
     */
    public io.github.sessiond.v1.ResetResponse reset(io.github.sessiond.v1.ResetRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getResetMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetState folds the path root -&gt; at_entry_id (default: the current leaf)
     * into a SessionState in the CONTEXT or HISTORY view.
     * Paging: the state's messages come in pages; every page carries the same
     * fold (model, label, custom, leaf ids, head seq, ...) with the next run of
     * messages. A response with a non-empty next_page_token is NOT the whole
     * state: call again with the same request and page_token set to it, until
     * next_page_token is empty, and concatenate the messages. A caller that
     * never sends page_size gets as many messages as fit in one response (every
     * state that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * With from_end the pages run backwards: the first holds the last
     * messages of the state (those nearest the entry folded to), each next
     * one the run just before the previous page's, the messages of a page
     * still in path order (prepend each page to what you have). A reader that
     * shows the end of a long path first needs one call for it.
     * Consistency: every page is cut from the fold of the first page's
     * snapshot (its head seq, current leaf and fold target), also while
     * entries are appended or the leaf moves between pages.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (a Leaf entry, a
     * malformed page_token or one issued for another session, view,
     * at_entry_id or direction), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    public io.github.sessiond.v1.GetStateResponse getState(io.github.sessiond.v1.GetStateRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetStateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetEntries returns a page of the raw log in seq order: at most limit
     * entries, and fewer when more would exceed max_response_bytes. With
     * entry_ids, those entries instead (by id, without knowing their seq).
     * Errors: INVALID_ARGUMENT (limit over the maximum, more entry_ids than
     * that, entry_ids with after_seq or limit), NOT_FOUND (the session, or an
     * entry of entry_ids: the message names it), RESOURCE_EXHAUSTED (one
     * entry alone larger than --max-message-bytes).
     * </pre>
     */
    public io.github.sessiond.v1.GetEntriesResponse getEntries(io.github.sessiond.v1.GetEntriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetTree returns every entry's shape (id, parent, kind, seq, label,
     * on-current-path): enough to draw the tree.
     * Paging: nodes come in seq order, in pages. A response with a non-empty
     * next_page_token is NOT the whole tree: call again with the same request
     * and page_token set to it, until next_page_token is empty. A caller that
     * never sends page_size gets as many nodes as fit in one response (every
     * tree that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * Consistency: every page describes the first page's snapshot: entries
     * appended after it (seq &gt; its head_seq) are left out, and
     * on_current_path, leaf_id and head_seq are those of the first page on
     * every page, also when the leaf moves between pages.
     * Errors: NOT_FOUND, INVALID_ARGUMENT (a malformed page_token or one
     * issued for another session), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    public io.github.sessiond.v1.GetTreeResponse getTree(io.github.sessiond.v1.GetTreeRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetTreeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * WatchEntries streams every entry with seq &gt; after_seq, then each new
     * entry as it is appended, in seq order, each exactly once; heartbeats
     * carry the head seq. Reconnect with the last seq seen to miss nothing.
     * A deleted session ends the stream with NOT_FOUND; a server shutdown with
     * UNAVAILABLE. Errors: NOT_FOUND, RESOURCE_EXHAUSTED (too many watchers).
     * </pre>
     */
    public java.util.Iterator<io.github.sessiond.v1.WatchEntriesResponse> watchEntries(
        io.github.sessiond.v1.WatchEntriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getWatchEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * RedactEntries purges the content of chosen entries while keeping the
     * tree: each entry keeps its id, parent, seq, timestamp and kind, its
     * content is emptied (what is kept per kind: Entry.withheld) and
     * Entry.withheld says who, when and why. The content is gone from the
     * stored log (JSONL: the log is rewritten crash-safely under the
     * session's lock; PostgreSQL: the rows are updated), from every read,
     * from search and from CONTEXT, where a withheld message reads
     * "[redacted]". Watchers get a withheld_entries event. Idempotent: an
     * entry already redacted is answered as stored, nothing is written.
     * Nothing is written when any id is refused.
     * Errors: NOT_FOUND (the session, or an entry id: the message names it),
     * INVALID_ARGUMENT (no entry_ids, too many, a SessionInfo or Leaf entry:
     * named), DATA_LOSS.
     * </pre>
     */
    public io.github.sessiond.v1.RedactEntriesResponse redactEntries(io.github.sessiond.v1.RedactEntriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRedactEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetUsage sums what a session's assistant messages cost, as the tree
     * knows it: the whole tree (every entry ever appended, abandoned branches
     * included), the current path, each branch, and the subagent sessions
     * (recursively). A message without Usage.cost is priced from the server's
     * price table (serve --prices) by its model and timestamp, or counted as
     * unpriced. Withheld (redacted / erased) messages keep their usage and
     * count. Billed tokens are never mixed with the context's size:
     * context_tokens estimates what the current path would take to send again.
     * Errors: NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    public io.github.sessiond.v1.GetUsageResponse getUsage(io.github.sessiond.v1.GetUsageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetUsageMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service SessionService.
   * <pre>
   * SessionService works on one session.
   * Common rules (see StoreService for workspace / session addressing):
   * - Mutations (Append, Rewind, Reset) are serialised per session; seq is
   *   dense. An acknowledged mutation is durable (fdatasynced / committed).
   * - expected_leaf_id / expected_seq: optimistic concurrency. On mismatch the
   *   call fails with ABORTED and writes nothing.
   * - A timeout / UNAVAILABLE / INTERNAL means "outcome unknown": retry with
   *   the same entry ids; the server de-duplicates.
   * - DATA_LOSS: the session's log has mid-file corruption (names the line).
   * </pre>
   */
  public static final class SessionServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<SessionServiceFutureStub> {
    private SessionServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SessionServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SessionServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Append adds entries atomically (all or none, also across a crash). An
     * entry without parent_id attaches to the current leaf (inside a batch: to
     * the previous entry); every appended entry becomes the new leaf.
     * Idempotent: entries whose ids already exist with identical content are
     * returned as stored, nothing is written.
     * Errors: INVALID_ARGUMENT (unknown parent, malformed or duplicate id,
     * kind unset, Leaf appended directly, TOOL message answering no open tool
     * call on its path, compaction reaching off its path or splitting a tool
     * call from its result), ALREADY_EXISTS (id reused with other content),
     * ABORTED (expected_leaf_id / expected_seq mismatch), RESOURCE_EXHAUSTED
     * (too many entries / bytes), NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.AppendResponse> append(
        io.github.sessiond.v1.AppendRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getAppendMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Rewind moves the current leaf to an entry (by id or label) by appending
     * a Leaf entry. A target before the compaction floor (the parent of the
     * newest Compaction on the current path) fails with FAILED_PRECONDITION
     * unless allow_before_compaction.
     * Errors: NOT_FOUND (target), INVALID_ARGUMENT (target is a Leaf entry),
     * FAILED_PRECONDITION, ABORTED.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.RewindResponse> rewind(
        io.github.sessiond.v1.RewindRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRewindMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Reset moves the current leaf to the root (empty context); history kept.
     * Errors: NOT_FOUND, ABORTED.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.ResetResponse> reset(
        io.github.sessiond.v1.ResetRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getResetMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetState folds the path root -&gt; at_entry_id (default: the current leaf)
     * into a SessionState in the CONTEXT or HISTORY view.
     * Paging: the state's messages come in pages; every page carries the same
     * fold (model, label, custom, leaf ids, head seq, ...) with the next run of
     * messages. A response with a non-empty next_page_token is NOT the whole
     * state: call again with the same request and page_token set to it, until
     * next_page_token is empty, and concatenate the messages. A caller that
     * never sends page_size gets as many messages as fit in one response (every
     * state that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * With from_end the pages run backwards: the first holds the last
     * messages of the state (those nearest the entry folded to), each next
     * one the run just before the previous page's, the messages of a page
     * still in path order (prepend each page to what you have). A reader that
     * shows the end of a long path first needs one call for it.
     * Consistency: every page is cut from the fold of the first page's
     * snapshot (its head seq, current leaf and fold target), also while
     * entries are appended or the leaf moves between pages.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (a Leaf entry, a
     * malformed page_token or one issued for another session, view,
     * at_entry_id or direction), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.GetStateResponse> getState(
        io.github.sessiond.v1.GetStateRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetStateMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetEntries returns a page of the raw log in seq order: at most limit
     * entries, and fewer when more would exceed max_response_bytes. With
     * entry_ids, those entries instead (by id, without knowing their seq).
     * Errors: INVALID_ARGUMENT (limit over the maximum, more entry_ids than
     * that, entry_ids with after_seq or limit), NOT_FOUND (the session, or an
     * entry of entry_ids: the message names it), RESOURCE_EXHAUSTED (one
     * entry alone larger than --max-message-bytes).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.GetEntriesResponse> getEntries(
        io.github.sessiond.v1.GetEntriesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetEntriesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetTree returns every entry's shape (id, parent, kind, seq, label,
     * on-current-path): enough to draw the tree.
     * Paging: nodes come in seq order, in pages. A response with a non-empty
     * next_page_token is NOT the whole tree: call again with the same request
     * and page_token set to it, until next_page_token is empty. A caller that
     * never sends page_size gets as many nodes as fit in one response (every
     * tree that fits the server's --max-message-bytes arrives whole, as it did
     * before paging existed) and must check next_page_token.
     * Consistency: every page describes the first page's snapshot: entries
     * appended after it (seq &gt; its head_seq) are left out, and
     * on_current_path, leaf_id and head_seq are those of the first page on
     * every page, also when the leaf moves between pages.
     * Errors: NOT_FOUND, INVALID_ARGUMENT (a malformed page_token or one
     * issued for another session), ABORTED (the session was deleted and
     * re-created since the first page: read again from the first page).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.GetTreeResponse> getTree(
        io.github.sessiond.v1.GetTreeRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetTreeMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * RedactEntries purges the content of chosen entries while keeping the
     * tree: each entry keeps its id, parent, seq, timestamp and kind, its
     * content is emptied (what is kept per kind: Entry.withheld) and
     * Entry.withheld says who, when and why. The content is gone from the
     * stored log (JSONL: the log is rewritten crash-safely under the
     * session's lock; PostgreSQL: the rows are updated), from every read,
     * from search and from CONTEXT, where a withheld message reads
     * "[redacted]". Watchers get a withheld_entries event. Idempotent: an
     * entry already redacted is answered as stored, nothing is written.
     * Nothing is written when any id is refused.
     * Errors: NOT_FOUND (the session, or an entry id: the message names it),
     * INVALID_ARGUMENT (no entry_ids, too many, a SessionInfo or Leaf entry:
     * named), DATA_LOSS.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.RedactEntriesResponse> redactEntries(
        io.github.sessiond.v1.RedactEntriesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRedactEntriesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetUsage sums what a session's assistant messages cost, as the tree
     * knows it: the whole tree (every entry ever appended, abandoned branches
     * included), the current path, each branch, and the subagent sessions
     * (recursively). A message without Usage.cost is priced from the server's
     * price table (serve --prices) by its model and timestamp, or counted as
     * unpriced. Withheld (redacted / erased) messages keep their usage and
     * count. Billed tokens are never mixed with the context's size:
     * context_tokens estimates what the current path would take to send again.
     * Errors: NOT_FOUND, DATA_LOSS.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.GetUsageResponse> getUsage(
        io.github.sessiond.v1.GetUsageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetUsageMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_APPEND = 0;
  private static final int METHODID_REWIND = 1;
  private static final int METHODID_RESET = 2;
  private static final int METHODID_GET_STATE = 3;
  private static final int METHODID_GET_ENTRIES = 4;
  private static final int METHODID_GET_TREE = 5;
  private static final int METHODID_WATCH_ENTRIES = 6;
  private static final int METHODID_REDACT_ENTRIES = 7;
  private static final int METHODID_GET_USAGE = 8;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_APPEND:
          serviceImpl.append((io.github.sessiond.v1.AppendRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.AppendResponse>) responseObserver);
          break;
        case METHODID_REWIND:
          serviceImpl.rewind((io.github.sessiond.v1.RewindRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.RewindResponse>) responseObserver);
          break;
        case METHODID_RESET:
          serviceImpl.reset((io.github.sessiond.v1.ResetRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.ResetResponse>) responseObserver);
          break;
        case METHODID_GET_STATE:
          serviceImpl.getState((io.github.sessiond.v1.GetStateRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetStateResponse>) responseObserver);
          break;
        case METHODID_GET_ENTRIES:
          serviceImpl.getEntries((io.github.sessiond.v1.GetEntriesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetEntriesResponse>) responseObserver);
          break;
        case METHODID_GET_TREE:
          serviceImpl.getTree((io.github.sessiond.v1.GetTreeRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetTreeResponse>) responseObserver);
          break;
        case METHODID_WATCH_ENTRIES:
          serviceImpl.watchEntries((io.github.sessiond.v1.WatchEntriesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.WatchEntriesResponse>) responseObserver);
          break;
        case METHODID_REDACT_ENTRIES:
          serviceImpl.redactEntries((io.github.sessiond.v1.RedactEntriesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.RedactEntriesResponse>) responseObserver);
          break;
        case METHODID_GET_USAGE:
          serviceImpl.getUsage((io.github.sessiond.v1.GetUsageRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetUsageResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getAppendMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.AppendRequest,
              io.github.sessiond.v1.AppendResponse>(
                service, METHODID_APPEND)))
        .addMethod(
          getRewindMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.RewindRequest,
              io.github.sessiond.v1.RewindResponse>(
                service, METHODID_REWIND)))
        .addMethod(
          getResetMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.ResetRequest,
              io.github.sessiond.v1.ResetResponse>(
                service, METHODID_RESET)))
        .addMethod(
          getGetStateMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.GetStateRequest,
              io.github.sessiond.v1.GetStateResponse>(
                service, METHODID_GET_STATE)))
        .addMethod(
          getGetEntriesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.GetEntriesRequest,
              io.github.sessiond.v1.GetEntriesResponse>(
                service, METHODID_GET_ENTRIES)))
        .addMethod(
          getGetTreeMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.GetTreeRequest,
              io.github.sessiond.v1.GetTreeResponse>(
                service, METHODID_GET_TREE)))
        .addMethod(
          getWatchEntriesMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              io.github.sessiond.v1.WatchEntriesRequest,
              io.github.sessiond.v1.WatchEntriesResponse>(
                service, METHODID_WATCH_ENTRIES)))
        .addMethod(
          getRedactEntriesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.RedactEntriesRequest,
              io.github.sessiond.v1.RedactEntriesResponse>(
                service, METHODID_REDACT_ENTRIES)))
        .addMethod(
          getGetUsageMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.GetUsageRequest,
              io.github.sessiond.v1.GetUsageResponse>(
                service, METHODID_GET_USAGE)))
        .build();
  }

  private static abstract class SessionServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    SessionServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.github.sessiond.v1.SessionServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("SessionService");
    }
  }

  private static final class SessionServiceFileDescriptorSupplier
      extends SessionServiceBaseDescriptorSupplier {
    SessionServiceFileDescriptorSupplier() {}
  }

  private static final class SessionServiceMethodDescriptorSupplier
      extends SessionServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    SessionServiceMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (SessionServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new SessionServiceFileDescriptorSupplier())
              .addMethod(getAppendMethod())
              .addMethod(getRewindMethod())
              .addMethod(getResetMethod())
              .addMethod(getGetStateMethod())
              .addMethod(getGetEntriesMethod())
              .addMethod(getGetTreeMethod())
              .addMethod(getWatchEntriesMethod())
              .addMethod(getRedactEntriesMethod())
              .addMethod(getGetUsageMethod())
              .build();
        }
      }
    }
    return result;
  }
}
