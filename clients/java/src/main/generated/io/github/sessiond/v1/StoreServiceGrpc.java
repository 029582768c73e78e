package io.github.sessiond.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * StoreService is the repository of sessions: create, find, list, delete,
 * fork and watch the sessions of a workspace.
 * Common rules:
 * - workspace matches [A-Za-z0-9][A-Za-z0-9._-]{0,127}; empty means
 *   "default". Workspaces are isolated from each other. A session of a
 *   workspace the caller's token may not use is NOT_FOUND.
 * - session is a full id or a unique prefix of at least 4 characters.
 *   Shorter or malformed -&gt; INVALID_ARGUMENT; no match -&gt; NOT_FOUND; several
 *   matches -&gt; FAILED_PRECONDITION naming some candidates.
 * - A session whose log has mid-file corruption -&gt; DATA_LOSS naming the line.
 * - Missing / wrong token -&gt; UNAUTHENTICATED; shutting down -&gt; UNAVAILABLE.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class StoreServiceGrpc {

  private StoreServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "sessiond.v1.StoreService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.CreateSessionRequest,
      io.github.sessiond.v1.CreateSessionResponse> getCreateSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateSession",
      requestType = io.github.sessiond.v1.CreateSessionRequest.class,
      responseType = io.github.sessiond.v1.CreateSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.CreateSessionRequest,
      io.github.sessiond.v1.CreateSessionResponse> getCreateSessionMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.CreateSessionRequest, io.github.sessiond.v1.CreateSessionResponse> getCreateSessionMethod;
    if ((getCreateSessionMethod = StoreServiceGrpc.getCreateSessionMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getCreateSessionMethod = StoreServiceGrpc.getCreateSessionMethod) == null) {
          StoreServiceGrpc.getCreateSessionMethod = getCreateSessionMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.CreateSessionRequest, io.github.sessiond.v1.CreateSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.CreateSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.CreateSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("CreateSession"))
              .build();
        }
      }
    }
    return getCreateSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.GetSessionRequest,
      io.github.sessiond.v1.GetSessionResponse> getGetSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSession",
      requestType = io.github.sessiond.v1.GetSessionRequest.class,
      responseType = io.github.sessiond.v1.GetSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.GetSessionRequest,
      io.github.sessiond.v1.GetSessionResponse> getGetSessionMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.GetSessionRequest, io.github.sessiond.v1.GetSessionResponse> getGetSessionMethod;
    if ((getGetSessionMethod = StoreServiceGrpc.getGetSessionMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getGetSessionMethod = StoreServiceGrpc.getGetSessionMethod) == null) {
          StoreServiceGrpc.getGetSessionMethod = getGetSessionMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.GetSessionRequest, io.github.sessiond.v1.GetSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("GetSession"))
              .build();
        }
      }
    }
    return getGetSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.ListSessionsRequest,
      io.github.sessiond.v1.ListSessionsResponse> getListSessionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListSessions",
      requestType = io.github.sessiond.v1.ListSessionsRequest.class,
      responseType = io.github.sessiond.v1.ListSessionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.ListSessionsRequest,
      io.github.sessiond.v1.ListSessionsResponse> getListSessionsMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.ListSessionsRequest, io.github.sessiond.v1.ListSessionsResponse> getListSessionsMethod;
    if ((getListSessionsMethod = StoreServiceGrpc.getListSessionsMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getListSessionsMethod = StoreServiceGrpc.getListSessionsMethod) == null) {
          StoreServiceGrpc.getListSessionsMethod = getListSessionsMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.ListSessionsRequest, io.github.sessiond.v1.ListSessionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListSessions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ListSessionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ListSessionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("ListSessions"))
              .build();
        }
      }
    }
    return getListSessionsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.ListWorkspacesRequest,
      io.github.sessiond.v1.ListWorkspacesResponse> getListWorkspacesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListWorkspaces",
      requestType = io.github.sessiond.v1.ListWorkspacesRequest.class,
      responseType = io.github.sessiond.v1.ListWorkspacesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.ListWorkspacesRequest,
      io.github.sessiond.v1.ListWorkspacesResponse> getListWorkspacesMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.ListWorkspacesRequest, io.github.sessiond.v1.ListWorkspacesResponse> getListWorkspacesMethod;
    if ((getListWorkspacesMethod = StoreServiceGrpc.getListWorkspacesMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getListWorkspacesMethod = StoreServiceGrpc.getListWorkspacesMethod) == null) {
          StoreServiceGrpc.getListWorkspacesMethod = getListWorkspacesMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.ListWorkspacesRequest, io.github.sessiond.v1.ListWorkspacesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListWorkspaces"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ListWorkspacesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ListWorkspacesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("ListWorkspaces"))
              .build();
        }
      }
    }
    return getListWorkspacesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.SearchEntriesRequest,
      io.github.sessiond.v1.SearchEntriesResponse> getSearchEntriesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SearchEntries",
      requestType = io.github.sessiond.v1.SearchEntriesRequest.class,
      responseType = io.github.sessiond.v1.SearchEntriesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.SearchEntriesRequest,
      io.github.sessiond.v1.SearchEntriesResponse> getSearchEntriesMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.SearchEntriesRequest, io.github.sessiond.v1.SearchEntriesResponse> getSearchEntriesMethod;
    if ((getSearchEntriesMethod = StoreServiceGrpc.getSearchEntriesMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getSearchEntriesMethod = StoreServiceGrpc.getSearchEntriesMethod) == null) {
          StoreServiceGrpc.getSearchEntriesMethod = getSearchEntriesMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.SearchEntriesRequest, io.github.sessiond.v1.SearchEntriesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SearchEntries"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.SearchEntriesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.SearchEntriesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("SearchEntries"))
              .build();
        }
      }
    }
    return getSearchEntriesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.DeleteSessionRequest,
      io.github.sessiond.v1.DeleteSessionResponse> getDeleteSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteSession",
      requestType = io.github.sessiond.v1.DeleteSessionRequest.class,
      responseType = io.github.sessiond.v1.DeleteSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.DeleteSessionRequest,
      io.github.sessiond.v1.DeleteSessionResponse> getDeleteSessionMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.DeleteSessionRequest, io.github.sessiond.v1.DeleteSessionResponse> getDeleteSessionMethod;
    if ((getDeleteSessionMethod = StoreServiceGrpc.getDeleteSessionMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getDeleteSessionMethod = StoreServiceGrpc.getDeleteSessionMethod) == null) {
          StoreServiceGrpc.getDeleteSessionMethod = getDeleteSessionMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.DeleteSessionRequest, io.github.sessiond.v1.DeleteSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.DeleteSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.DeleteSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("DeleteSession"))
              .build();
        }
      }
    }
    return getDeleteSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.ForkSessionRequest,
      io.github.sessiond.v1.ForkSessionResponse> getForkSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ForkSession",
      requestType = io.github.sessiond.v1.ForkSessionRequest.class,
      responseType = io.github.sessiond.v1.ForkSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.ForkSessionRequest,
      io.github.sessiond.v1.ForkSessionResponse> getForkSessionMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.ForkSessionRequest, io.github.sessiond.v1.ForkSessionResponse> getForkSessionMethod;
    if ((getForkSessionMethod = StoreServiceGrpc.getForkSessionMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getForkSessionMethod = StoreServiceGrpc.getForkSessionMethod) == null) {
          StoreServiceGrpc.getForkSessionMethod = getForkSessionMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.ForkSessionRequest, io.github.sessiond.v1.ForkSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ForkSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ForkSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ForkSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("ForkSession"))
              .build();
        }
      }
    }
    return getForkSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.ImportSessionRequest,
      io.github.sessiond.v1.ImportSessionResponse> getImportSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ImportSession",
      requestType = io.github.sessiond.v1.ImportSessionRequest.class,
      responseType = io.github.sessiond.v1.ImportSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.ImportSessionRequest,
      io.github.sessiond.v1.ImportSessionResponse> getImportSessionMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.ImportSessionRequest, io.github.sessiond.v1.ImportSessionResponse> getImportSessionMethod;
    if ((getImportSessionMethod = StoreServiceGrpc.getImportSessionMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getImportSessionMethod = StoreServiceGrpc.getImportSessionMethod) == null) {
          StoreServiceGrpc.getImportSessionMethod = getImportSessionMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.ImportSessionRequest, io.github.sessiond.v1.ImportSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ImportSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ImportSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ImportSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("ImportSession"))
              .build();
        }
      }
    }
    return getImportSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.WatchSessionsRequest,
      io.github.sessiond.v1.WatchSessionsResponse> getWatchSessionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "WatchSessions",
      requestType = io.github.sessiond.v1.WatchSessionsRequest.class,
      responseType = io.github.sessiond.v1.WatchSessionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.WatchSessionsRequest,
      io.github.sessiond.v1.WatchSessionsResponse> getWatchSessionsMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.WatchSessionsRequest, io.github.sessiond.v1.WatchSessionsResponse> getWatchSessionsMethod;
    if ((getWatchSessionsMethod = StoreServiceGrpc.getWatchSessionsMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getWatchSessionsMethod = StoreServiceGrpc.getWatchSessionsMethod) == null) {
          StoreServiceGrpc.getWatchSessionsMethod = getWatchSessionsMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.WatchSessionsRequest, io.github.sessiond.v1.WatchSessionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "WatchSessions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.WatchSessionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.WatchSessionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("WatchSessions"))
              .build();
        }
      }
    }
    return getWatchSessionsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.GetBlobRequest,
      io.github.sessiond.v1.GetBlobResponse> getGetBlobMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetBlob",
      requestType = io.github.sessiond.v1.GetBlobRequest.class,
      responseType = io.github.sessiond.v1.GetBlobResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.GetBlobRequest,
      io.github.sessiond.v1.GetBlobResponse> getGetBlobMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.GetBlobRequest, io.github.sessiond.v1.GetBlobResponse> getGetBlobMethod;
    if ((getGetBlobMethod = StoreServiceGrpc.getGetBlobMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getGetBlobMethod = StoreServiceGrpc.getGetBlobMethod) == null) {
          StoreServiceGrpc.getGetBlobMethod = getGetBlobMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.GetBlobRequest, io.github.sessiond.v1.GetBlobResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetBlob"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetBlobRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.GetBlobResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("GetBlob"))
              .build();
        }
      }
    }
    return getGetBlobMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.PutBlobRequest,
      io.github.sessiond.v1.PutBlobResponse> getPutBlobMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PutBlob",
      requestType = io.github.sessiond.v1.PutBlobRequest.class,
      responseType = io.github.sessiond.v1.PutBlobResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.PutBlobRequest,
      io.github.sessiond.v1.PutBlobResponse> getPutBlobMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.PutBlobRequest, io.github.sessiond.v1.PutBlobResponse> getPutBlobMethod;
    if ((getPutBlobMethod = StoreServiceGrpc.getPutBlobMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getPutBlobMethod = StoreServiceGrpc.getPutBlobMethod) == null) {
          StoreServiceGrpc.getPutBlobMethod = getPutBlobMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.PutBlobRequest, io.github.sessiond.v1.PutBlobResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PutBlob"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.PutBlobRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.PutBlobResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("PutBlob"))
              .build();
        }
      }
    }
    return getPutBlobMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.EraseSessionsRequest,
      io.github.sessiond.v1.EraseSessionsResponse> getEraseSessionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "EraseSessions",
      requestType = io.github.sessiond.v1.EraseSessionsRequest.class,
      responseType = io.github.sessiond.v1.EraseSessionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.EraseSessionsRequest,
      io.github.sessiond.v1.EraseSessionsResponse> getEraseSessionsMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.EraseSessionsRequest, io.github.sessiond.v1.EraseSessionsResponse> getEraseSessionsMethod;
    if ((getEraseSessionsMethod = StoreServiceGrpc.getEraseSessionsMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getEraseSessionsMethod = StoreServiceGrpc.getEraseSessionsMethod) == null) {
          StoreServiceGrpc.getEraseSessionsMethod = getEraseSessionsMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.EraseSessionsRequest, io.github.sessiond.v1.EraseSessionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "EraseSessions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.EraseSessionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.EraseSessionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("EraseSessions"))
              .build();
        }
      }
    }
    return getEraseSessionsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.UsageReportRequest,
      io.github.sessiond.v1.UsageReportResponse> getUsageReportMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UsageReport",
      requestType = io.github.sessiond.v1.UsageReportRequest.class,
      responseType = io.github.sessiond.v1.UsageReportResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.UsageReportRequest,
      io.github.sessiond.v1.UsageReportResponse> getUsageReportMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.UsageReportRequest, io.github.sessiond.v1.UsageReportResponse> getUsageReportMethod;
    if ((getUsageReportMethod = StoreServiceGrpc.getUsageReportMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getUsageReportMethod = StoreServiceGrpc.getUsageReportMethod) == null) {
          StoreServiceGrpc.getUsageReportMethod = getUsageReportMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.UsageReportRequest, io.github.sessiond.v1.UsageReportResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UsageReport"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.UsageReportRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.UsageReportResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("UsageReport"))
              .build();
        }
      }
    }
    return getUsageReportMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.ShareSessionRequest,
      io.github.sessiond.v1.ShareSessionResponse> getShareSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ShareSession",
      requestType = io.github.sessiond.v1.ShareSessionRequest.class,
      responseType = io.github.sessiond.v1.ShareSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.ShareSessionRequest,
      io.github.sessiond.v1.ShareSessionResponse> getShareSessionMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.ShareSessionRequest, io.github.sessiond.v1.ShareSessionResponse> getShareSessionMethod;
    if ((getShareSessionMethod = StoreServiceGrpc.getShareSessionMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getShareSessionMethod = StoreServiceGrpc.getShareSessionMethod) == null) {
          StoreServiceGrpc.getShareSessionMethod = getShareSessionMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.ShareSessionRequest, io.github.sessiond.v1.ShareSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ShareSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ShareSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ShareSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("ShareSession"))
              .build();
        }
      }
    }
    return getShareSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.RevokeShareRequest,
      io.github.sessiond.v1.RevokeShareResponse> getRevokeShareMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RevokeShare",
      requestType = io.github.sessiond.v1.RevokeShareRequest.class,
      responseType = io.github.sessiond.v1.RevokeShareResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.RevokeShareRequest,
      io.github.sessiond.v1.RevokeShareResponse> getRevokeShareMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.RevokeShareRequest, io.github.sessiond.v1.RevokeShareResponse> getRevokeShareMethod;
    if ((getRevokeShareMethod = StoreServiceGrpc.getRevokeShareMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getRevokeShareMethod = StoreServiceGrpc.getRevokeShareMethod) == null) {
          StoreServiceGrpc.getRevokeShareMethod = getRevokeShareMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.RevokeShareRequest, io.github.sessiond.v1.RevokeShareResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RevokeShare"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.RevokeShareRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.RevokeShareResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("RevokeShare"))
              .build();
        }
      }
    }
    return getRevokeShareMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.ListSharesRequest,
      io.github.sessiond.v1.ListSharesResponse> getListSharesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListShares",
      requestType = io.github.sessiond.v1.ListSharesRequest.class,
      responseType = io.github.sessiond.v1.ListSharesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.ListSharesRequest,
      io.github.sessiond.v1.ListSharesResponse> getListSharesMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.ListSharesRequest, io.github.sessiond.v1.ListSharesResponse> getListSharesMethod;
    if ((getListSharesMethod = StoreServiceGrpc.getListSharesMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getListSharesMethod = StoreServiceGrpc.getListSharesMethod) == null) {
          StoreServiceGrpc.getListSharesMethod = getListSharesMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.ListSharesRequest, io.github.sessiond.v1.ListSharesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListShares"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ListSharesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ListSharesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("ListShares"))
              .build();
        }
      }
    }
    return getListSharesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.sessiond.v1.ReadShareRequest,
      io.github.sessiond.v1.ReadShareResponse> getReadShareMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ReadShare",
      requestType = io.github.sessiond.v1.ReadShareRequest.class,
      responseType = io.github.sessiond.v1.ReadShareResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.sessiond.v1.ReadShareRequest,
      io.github.sessiond.v1.ReadShareResponse> getReadShareMethod() {
    io.grpc.MethodDescriptor<io.github.sessiond.v1.ReadShareRequest, io.github.sessiond.v1.ReadShareResponse> getReadShareMethod;
    if ((getReadShareMethod = StoreServiceGrpc.getReadShareMethod) == null) {
      synchronized (StoreServiceGrpc.class) {
        if ((getReadShareMethod = StoreServiceGrpc.getReadShareMethod) == null) {
          StoreServiceGrpc.getReadShareMethod = getReadShareMethod =
              io.grpc.MethodDescriptor.<io.github.sessiond.v1.ReadShareRequest, io.github.sessiond.v1.ReadShareResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ReadShare"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ReadShareRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.sessiond.v1.ReadShareResponse.getDefaultInstance()))
              .setSchemaDescriptor(new StoreServiceMethodDescriptorSupplier("ReadShare"))
              .build();
        }
      }
    }
    return getReadShareMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static StoreServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<StoreServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<StoreServiceStub>() {
        @java.lang.Override
        public StoreServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new StoreServiceStub(channel, callOptions);
        }
      };
    return StoreServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static StoreServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<StoreServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<StoreServiceBlockingV2Stub>() {
        @java.lang.Override
        public StoreServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new StoreServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return StoreServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static StoreServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<StoreServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<StoreServiceBlockingStub>() {
        @java.lang.Override
        public StoreServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new StoreServiceBlockingStub(channel, callOptions);
        }
      };
    return StoreServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static StoreServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<StoreServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<StoreServiceFutureStub>() {
        @java.lang.Override
        public StoreServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new StoreServiceFutureStub(channel, callOptions);
        }
      };
    return StoreServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * StoreService is the repository of sessions: create, find, list, delete,
   * fork and watch the sessions of a workspace.
   * Common rules:
   * - workspace matches [A-Za-z0-9][A-Za-z0-9._-]{0,127}; empty means
   *   "default". Workspaces are isolated from each other. A session of a
   *   workspace the caller's token may not use is NOT_FOUND.
   * - session is a full id or a unique prefix of at least 4 characters.
   *   Shorter or malformed -&gt; INVALID_ARGUMENT; no match -&gt; NOT_FOUND; several
   *   matches -&gt; FAILED_PRECONDITION naming some candidates.
   * - A session whose log has mid-file corruption -&gt; DATA_LOSS naming the line.
   * - Missing / wrong token -&gt; UNAUTHENTICATED; shutting down -&gt; UNAVAILABLE.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * CreateSession creates a session whose log starts with a SessionInfo.
     * session_id is generated (YYYYMMDD-HHMMSS-&lt;8 hex&gt;, UTC) unless given.
     * Creating an existing id with identical parameters returns it
     * (created=false); with different parameters -&gt; ALREADY_EXISTS.
     * Errors: INVALID_ARGUMENT (bad id / workspace / sizes), NOT_FOUND (the
     * parent_session_id does not exist), ALREADY_EXISTS.
     * </pre>
     */
    default void createSession(io.github.sessiond.v1.CreateSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.CreateSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetSession returns the metadata of one session.
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous).
     * </pre>
     */
    default void getSession(io.github.sessiond.v1.GetSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListSessions pages through a workspace's sessions: the top-level ones,
     * or with parent_session_id the subagents of that session, ordered by
     * creation (default) or update time, newest first (default) or oldest
     * first, narrowed by a filter (every condition set must hold). Pages are
     * keyset pages: sessions created, appended to or deleted between two
     * calls never make a page repeat or skip a session that was there
     * throughout, except that ordering by update time moves an updated
     * session (it is seen at most once per listing: a session updated after
     * the listing passed it is not shown again). Corrupt sessions are listed
     * with health CORRUPT, never hidden (a filter on tags, title or agent
     * type does not match them). Files that are not sessions are ignored.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit /
     * malformed filter).
     * </pre>
     */
    default void listSessions(io.github.sessiond.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSessionsMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListWorkspaces pages through the workspaces that hold at least one
     * session, by name (bytewise ascending), each with its number of
     * top-level sessions (what ListSessions lists without parent_session_id)
     * and of subagent sessions, corrupt ones included. A token that may use
     * some workspaces only (--auth-tokens) lists those only. Pages are keyset
     * pages on the name: workspaces created or emptied between two calls
     * never make a page repeat or skip a workspace that was there throughout.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit).
     * </pre>
     */
    default void listWorkspaces(io.github.sessiond.v1.ListWorkspacesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ListWorkspacesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListWorkspacesMethod(), responseObserver);
    }

    /**
     * <pre>
     * SearchEntries finds the message entries of a workspace whose text
     * contains every word of a query (case-insensitive, Unicode case folding;
     * text parts, thinking and tool results; tool-call arguments as their
     * JSON text), with a short snippet around the first match. Hits come
     * session by session in the order of ListSessions (newest created first
     * by default; the same filter applies), entries in seq order (all
     * branches: the tree's history, not only the current path). Paged.
     * Errors: INVALID_ARGUMENT (empty query, query over 256 characters, bad
     * page token).
     * </pre>
     */
    default void searchEntries(io.github.sessiond.v1.SearchEntriesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.SearchEntriesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSearchEntriesMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeleteSession removes a session; with include_subagents also its
     * subagent sessions (recursively). Without it, subagents stay and keep
     * their parent_session_id. With expected_head_seq only a session not
     * written to since (compare-and-delete).
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous),
     * ABORTED (expected_head_seq differs).
     * </pre>
     */
    default void deleteSession(io.github.sessiond.v1.DeleteSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.DeleteSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * ForkSession creates a new session from the path root -&gt; entry of an
     * existing one: a new SessionInfo (forked_from set) followed by copies of
     * the path's entries (original ids kept, re-parented onto the new root).
     * The source is untouched.
     * Errors: INVALID_ARGUMENT (entry is a Leaf entry / malformed),
     * NOT_FOUND (session, entry or label), ALREADY_EXISTS (new id taken).
     * </pre>
     */
    default void forkSession(io.github.sessiond.v1.ForkSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ForkSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getForkSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * ImportSession stores a whole session exactly as given: every entry with
     * its id, parent, timestamp and seq, the root SessionInfo with its
     * created_at, forked_from, title, cwd, tags, metadata and (for a subagent
     * session) parent_session_id and agent_type, and the Leaf entries, so the
     * current leaf is the log's own. It is the lossless way to move a session
     * between servers (GetEntries from one, ImportSession to the other) and to
     * bring in transcripts of other tools.
     * The entries are checked with the rules of a live Append, in the given
     * order: one tree whose root (the first entry) is a SessionInfo, parents
     * before children, unique ids, tool results answering a call on their
     * path, compactions replacing entries of their own path, Leaf targets that
     * exist. A seq, when set, must be the entry's 1-based position (seq 0 is
     * filled in); an entry without timestamp gets the server's clock; a root
     * without created_at gets its timestamp; format_version 0 becomes the
     * current one. The session id is session_id, else the one recorded in the
     * root. A subagent session's parent session must exist, and its
     * spawn_depth, when set, be the parent's plus one (0 is filled in).
     * Idempotent: importing a session whose stored log is identical returns it
     * with created=false; a different log under that id -&gt; ALREADY_EXISTS.
     * The log travels in one message (--max-message-bytes of the server
     * bounds it); a larger one can be sent as its start with ImportSession and
     * the rest with Append (no Leaf entries after the start), as `sessiond
     * import` does.
     * Errors: INVALID_ARGUMENT (naming the offending entry, or a bad id /
     * workspace), RESOURCE_EXHAUSTED (an entry over the size limit),
     * NOT_FOUND (the parent session does not exist), ALREADY_EXISTS (the id
     * holds another log).
     * </pre>
     */
    default void importSession(io.github.sessiond.v1.ImportSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ImportSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getImportSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * WatchSessions streams created / updated / deleted events of a
     * workspace. Resume with the cursor of the last event seen.
     * Errors: INVALID_ARGUMENT (bad cursor), RESOURCE_EXHAUSTED (too many
     * watchers), UNAVAILABLE (server shutting down: reconnect with the cursor).
     * </pre>
     */
    default void watchSessions(io.github.sessiond.v1.WatchSessionsRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.WatchSessionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWatchSessionsMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetBlob streams a blob of the workspace (a BlobRef's sha256) in chunks
     * of at most 1 MiB, from offset, at most length bytes (0: to the end).
     * Errors: INVALID_ARGUMENT (malformed sha256, offset past the end),
     * NOT_FOUND (no such blob in the workspace).
     * </pre>
     */
    default void getBlob(io.github.sessiond.v1.GetBlobRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetBlobResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetBlobMethod(), responseObserver);
    }

    /**
     * <pre>
     * PutBlob uploads a blob in chunks, for parts too large for one Append
     * (the server itself stores parts over its threshold that arrive inline).
     * Chunks go in order: each one's offset is the number of bytes the
     * server has (a retried chunk it has already is taken again, harmlessly);
     * the one that completes `size` bytes stores the blob durably once its
     * SHA-256 matches, and only then may an Append reference it. A blob the
     * workspace already holds answers stored at once: idempotent by hash.
     * An upload left unfinished is removed by `gc` after a grace period.
     * Errors: INVALID_ARGUMENT (malformed sha256, a chunk past size, content
     * that does not hash to sha256: the upload is discarded),
     * FAILED_PRECONDITION (offset is not the number of bytes received: the
     * message says how many; another client uploading the same content
     * through another replica moves it on. An empty chunk at offset 0 asks
     * how many without sending any; the clients do that and go on),
     * RESOURCE_EXHAUSTED (size over the server's --max-blob-bytes).
     * </pre>
     */
    default void putBlob(io.github.sessiond.v1.PutBlobRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.PutBlobResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPutBlobMethod(), responseObserver);
    }

    /**
     * <pre>
     * EraseSessions erases sessions: the ones named, every one whose tags
     * hold a filter, or every one of the workspace, each with its subagent
     * sessions (recursively). An erased session keeps its tree (ids, parents,
     * seqs, kinds, timestamps) and its SessionInfo entries (title, tags);
     * every other entry reads with Entry.withheld (reason ERASED) and its
     * content is gone: a sealed session's data key is destroyed, a session in
     * clear is rewritten. Idempotent. One audit record without content is
     * written per call and returned.
     * Errors: INVALID_ARGUMENT (not exactly one of session_ids, tags, all; by
     * empty; malformed id or tag), NOT_FOUND (a named session), UNIMPLEMENTED
     * (an engine without erasure: PostgreSQL for now).
     * </pre>
     */
    default void eraseSessions(io.github.sessiond.v1.EraseSessionsRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.EraseSessionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getEraseSessionsMethod(), responseObserver);
    }

    /**
     * <pre>
     * UsageReport sums a workspace's usage over a time window in one call:
     * every assistant message whose timestamp is in [start, end) (a window may
     * cut through a session), of every session (subagents included) that
     * holds the filter's tags, grouped by time bucket, model and the values
     * of chosen tag keys. Pricing as GetUsage.
     * Errors: INVALID_ARGUMENT (start or end unset, end not after start, a
     * window over 400 days, more than 8 group_by_tags, a malformed tag).
     * </pre>
     */
    default void usageReport(io.github.sessiond.v1.UsageReportRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.UsageReportResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUsageReportMethod(), responseObserver);
    }

    /**
     * <pre>
     * ShareSession makes a read-only snapshot of a session's path up to an
     * entry, behind an unguessable token, with an expiry. The viewer serves it
     * at /share/&lt;token&gt; without the workspace's auth token; ReadShare reads it
     * the same way. Redaction and erasure done later apply to it; deleting or
     * erasing the session revokes it.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (expiry in the
     * past or over 365 days, a Leaf entry).
     * </pre>
     */
    default void shareSession(io.github.sessiond.v1.ShareSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ShareSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getShareSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * RevokeShare makes a share unreadable at once. Idempotent.
     * Errors: NOT_FOUND (no such share in the workspace).
     * </pre>
     */
    default void revokeShare(io.github.sessiond.v1.RevokeShareRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.RevokeShareResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRevokeShareMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListShares pages through a workspace's shares (optionally of one
     * session), newest first, revoked and expired ones included (marked).
     * </pre>
     */
    default void listShares(io.github.sessiond.v1.ListSharesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ListSharesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSharesMethod(), responseObserver);
    }

    /**
     * <pre>
     * ReadShare reads a share's snapshot by its token alone: no auth token is
     * needed (the share token is the secret). Paged like GetState.
     * Errors: NOT_FOUND (unknown, revoked, expired, or its session deleted or
     * erased: the same answer for each, so a token reveals nothing).
     * </pre>
     */
    default void readShare(io.github.sessiond.v1.ReadShareRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ReadShareResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getReadShareMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service StoreService.
   * <pre>
   * StoreService is the repository of sessions: create, find, list, delete,
   * fork and watch the sessions of a workspace.
   * Common rules:
   * - workspace matches [A-Za-z0-9][A-Za-z0-9._-]{0,127}; empty means
   *   "default". Workspaces are isolated from each other. A session of a
   *   workspace the caller's token may not use is NOT_FOUND.
   * - session is a full id or a unique prefix of at least 4 characters.
   *   Shorter or malformed -&gt; INVALID_ARGUMENT; no match -&gt; NOT_FOUND; several
   *   matches -&gt; FAILED_PRECONDITION naming some candidates.
   * - A session whose log has mid-file corruption -&gt; DATA_LOSS naming the line.
   * - Missing / wrong token -&gt; UNAUTHENTICATED; shutting down -&gt; UNAVAILABLE.
   * </pre>
   */
  public static abstract class StoreServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return StoreServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service StoreService.
   * <pre>
   * StoreService is the repository of sessions: create, find, list, delete,
   * fork and watch the sessions of a workspace.
   * Common rules:
   * - workspace matches [A-Za-z0-9][A-Za-z0-9._-]{0,127}; empty means
   *   "default". Workspaces are isolated from each other. A session of a
   *   workspace the caller's token may not use is NOT_FOUND.
   * - session is a full id or a unique prefix of at least 4 characters.
   *   Shorter or malformed -&gt; INVALID_ARGUMENT; no match -&gt; NOT_FOUND; several
   *   matches -&gt; FAILED_PRECONDITION naming some candidates.
   * - A session whose log has mid-file corruption -&gt; DATA_LOSS naming the line.
   * - Missing / wrong token -&gt; UNAUTHENTICATED; shutting down -&gt; UNAVAILABLE.
   * </pre>
   */
  public static final class StoreServiceStub
      extends io.grpc.stub.AbstractAsyncStub<StoreServiceStub> {
    private StoreServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected StoreServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new StoreServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreateSession creates a session whose log starts with a SessionInfo.
     * session_id is generated (YYYYMMDD-HHMMSS-&lt;8 hex&gt;, UTC) unless given.
     * Creating an existing id with identical parameters returns it
     * (created=false); with different parameters -&gt; ALREADY_EXISTS.
     * Errors: INVALID_ARGUMENT (bad id / workspace / sizes), NOT_FOUND (the
     * parent_session_id does not exist), ALREADY_EXISTS.
     * </pre>
     */
    public void createSession(io.github.sessiond.v1.CreateSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.CreateSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetSession returns the metadata of one session.
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous).
     * </pre>
     */
    public void getSession(io.github.sessiond.v1.GetSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListSessions pages through a workspace's sessions: the top-level ones,
     * or with parent_session_id the subagents of that session, ordered by
     * creation (default) or update time, newest first (default) or oldest
     * first, narrowed by a filter (every condition set must hold). Pages are
     * keyset pages: sessions created, appended to or deleted between two
     * calls never make a page repeat or skip a session that was there
     * throughout, except that ordering by update time moves an updated
     * session (it is seen at most once per listing: a session updated after
     * the listing passed it is not shown again). Corrupt sessions are listed
     * with health CORRUPT, never hidden (a filter on tags, title or agent
     * type does not match them). Files that are not sessions are ignored.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit /
     * malformed filter).
     * </pre>
     */
    public void listSessions(io.github.sessiond.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListWorkspaces pages through the workspaces that hold at least one
     * session, by name (bytewise ascending), each with its number of
     * top-level sessions (what ListSessions lists without parent_session_id)
     * and of subagent sessions, corrupt ones included. A token that may use
     * some workspaces only (--auth-tokens) lists those only. Pages are keyset
     * pages on the name: workspaces created or emptied between two calls
     * never make a page repeat or skip a workspace that was there throughout.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit).
     * </pre>
     */
    public void listWorkspaces(io.github.sessiond.v1.ListWorkspacesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ListWorkspacesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListWorkspacesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * SearchEntries finds the message entries of a workspace whose text
     * contains every word of a query (case-insensitive, Unicode case folding;
     * text parts, thinking and tool results; tool-call arguments as their
     * JSON text), with a short snippet around the first match. Hits come
     * session by session in the order of ListSessions (newest created first
     * by default; the same filter applies), entries in seq order (all
     * branches: the tree's history, not only the current path). Paged.
     * Errors: INVALID_ARGUMENT (empty query, query over 256 characters, bad
     * page token).
     * </pre>
     */
    public void searchEntries(io.github.sessiond.v1.SearchEntriesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.SearchEntriesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSearchEntriesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeleteSession removes a session; with include_subagents also its
     * subagent sessions (recursively). Without it, subagents stay and keep
     * their parent_session_id. With expected_head_seq only a session not
     * written to since (compare-and-delete).
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous),
     * ABORTED (expected_head_seq differs).
     * </pre>
     */
    public void deleteSession(io.github.sessiond.v1.DeleteSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.DeleteSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ForkSession creates a new session from the path root -&gt; entry of an
     * existing one: a new SessionInfo (forked_from set) followed by copies of
     * the path's entries (original ids kept, re-parented onto the new root).
     * The source is untouched.
     * Errors: INVALID_ARGUMENT (entry is a Leaf entry / malformed),
     * NOT_FOUND (session, entry or label), ALREADY_EXISTS (new id taken).
     * </pre>
     */
    public void forkSession(io.github.sessiond.v1.ForkSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ForkSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getForkSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ImportSession stores a whole session exactly as given: every entry with
     * its id, parent, timestamp and seq, the root SessionInfo with its
     * created_at, forked_from, title, cwd, tags, metadata and (for a subagent
     * session) parent_session_id and agent_type, and the Leaf entries, so the
     * current leaf is the log's own. It is the lossless way to move a session
     * between servers (GetEntries from one, ImportSession to the other) and to
     * bring in transcripts of other tools.
     * The entries are checked with the rules of a live Append, in the given
     * order: one tree whose root (the first entry) is a SessionInfo, parents
     * before children, unique ids, tool results answering a call on their
     * path, compactions replacing entries of their own path, Leaf targets that
     * exist. A seq, when set, must be the entry's 1-based position (seq 0 is
     * filled in); an entry without timestamp gets the server's clock; a root
     * without created_at gets its timestamp; format_version 0 becomes the
     * current one. The session id is session_id, else the one recorded in the
     * root. A subagent session's parent session must exist, and its
     * spawn_depth, when set, be the parent's plus one (0 is filled in).
     * Idempotent: importing a session whose stored log is identical returns it
     * with created=false; a different log under that id -&gt; ALREADY_EXISTS.
     * The log travels in one message (--max-message-bytes of the server
     * bounds it); a larger one can be sent as its start with ImportSession and
     * the rest with Append (no Leaf entries after the start), as `sessiond
     * import` does.
     * Errors: INVALID_ARGUMENT (naming the offending entry, or a bad id /
     * workspace), RESOURCE_EXHAUSTED (an entry over the size limit),
     * NOT_FOUND (the parent session does not exist), ALREADY_EXISTS (the id
     * holds another log).
     * </pre>
     */
    public void importSession(io.github.sessiond.v1.ImportSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ImportSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getImportSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * WatchSessions streams created / updated / deleted events of a
     * workspace. Resume with the cursor of the last event seen.
     * Errors: INVALID_ARGUMENT (bad cursor), RESOURCE_EXHAUSTED (too many
     * watchers), UNAVAILABLE (server shutting down: reconnect with the cursor).
     * </pre>
     */
    public void watchSessions(io.github.sessiond.v1.WatchSessionsRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.WatchSessionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getWatchSessionsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetBlob streams a blob of the workspace (a BlobRef's sha256) in chunks
     * of at most 1 MiB, from offset, at most length bytes (0: to the end).
     * Errors: INVALID_ARGUMENT (malformed sha256, offset past the end),
     * NOT_FOUND (no such blob in the workspace).
     * </pre>
     */
    public void getBlob(io.github.sessiond.v1.GetBlobRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetBlobResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getGetBlobMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * PutBlob uploads a blob in chunks, for parts too large for one Append
     * (the server itself stores parts over its threshold that arrive inline).
     * Chunks go in order: each one's offset is the number of bytes the
     * server has (a retried chunk it has already is taken again, harmlessly);
     * the one that completes `size` bytes stores the blob durably once its
     * SHA-256 matches, and only then may an Append reference it. A blob the
     * workspace already holds answers stored at once: idempotent by hash.
     * An upload left unfinished is removed by `gc` after a grace period.
     * Errors: INVALID_ARGUMENT (malformed sha256, a chunk past size, content
     * that does not hash to sha256: the upload is discarded),
     * FAILED_PRECONDITION (offset is not the number of bytes received: the
     * message says how many; another client uploading the same content
     * through another replica moves it on. An empty chunk at offset 0 asks
     * how many without sending any; the clients do that and go on),
     * RESOURCE_EXHAUSTED (size over the server's --max-blob-bytes).
     * </pre>
     */
    public void putBlob(io.github.sessiond.v1.PutBlobRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.PutBlobResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPutBlobMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * EraseSessions erases sessions: the ones named, every one whose tags
     * hold a filter, or every one of the workspace, each with its subagent
     * sessions (recursively). An erased session keeps its tree (ids, parents,
     * seqs, kinds, timestamps) and its SessionInfo entries (title, tags);
     * every other entry reads with Entry.withheld (reason ERASED) and its
     * content is gone: a sealed session's data key is destroyed, a session in
     * clear is rewritten. Idempotent. One audit record without content is
     * written per call and returned.
     * Errors: INVALID_ARGUMENT (not exactly one of session_ids, tags, all; by
     * empty; malformed id or tag), NOT_FOUND (a named session), UNIMPLEMENTED
     * (an engine without erasure: PostgreSQL for now).
     * </pre>
     */
    public void eraseSessions(io.github.sessiond.v1.EraseSessionsRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.EraseSessionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getEraseSessionsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * UsageReport sums a workspace's usage over a time window in one call:
     * every assistant message whose timestamp is in [start, end) (a window may
     * cut through a session), of every session (subagents included) that
     * holds the filter's tags, grouped by time bucket, model and the values
     * of chosen tag keys. Pricing as GetUsage.
     * Errors: INVALID_ARGUMENT (start or end unset, end not after start, a
     * window over 400 days, more than 8 group_by_tags, a malformed tag).
     * </pre>
     */
    public void usageReport(io.github.sessiond.v1.UsageReportRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.UsageReportResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUsageReportMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ShareSession makes a read-only snapshot of a session's path up to an
     * entry, behind an unguessable token, with an expiry. The viewer serves it
     * at /share/&lt;token&gt; without the workspace's auth token; ReadShare reads it
     * the same way. Redaction and erasure done later apply to it; deleting or
     * erasing the session revokes it.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (expiry in the
     * past or over 365 days, a Leaf entry).
     * </pre>
     */
    public void shareSession(io.github.sessiond.v1.ShareSessionRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ShareSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getShareSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * RevokeShare makes a share unreadable at once. Idempotent.
     * Errors: NOT_FOUND (no such share in the workspace).
     * </pre>
     */
    public void revokeShare(io.github.sessiond.v1.RevokeShareRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.RevokeShareResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRevokeShareMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListShares pages through a workspace's shares (optionally of one
     * session), newest first, revoked and expired ones included (marked).
     * </pre>
     */
    public void listShares(io.github.sessiond.v1.ListSharesRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ListSharesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSharesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ReadShare reads a share's snapshot by its token alone: no auth token is
     * needed (the share token is the secret). Paged like GetState.
     * Errors: NOT_FOUND (unknown, revoked, expired, or its session deleted or
     * erased: the same answer for each, so a token reveals nothing).
     * </pre>
     */
    public void readShare(io.github.sessiond.v1.ReadShareRequest request,
        io.grpc.stub.StreamObserver<io.github.sessiond.v1.ReadShareResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getReadShareMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service StoreService.
   * <pre>
   * StoreService is the repository of sessions: create, find, list, delete,
   * fork and watch the sessions of a workspace.
   * Common rules:
   * - workspace matches [A-Za-z0-9][A-Za-z0-9._-]{0,127}; empty means
   *   "default". Workspaces are isolated from each other. A session of a
   *   workspace the caller's token may not use is NOT_FOUND.
   * - session is a full id or a unique prefix of at least 4 characters.
   *   Shorter or malformed -&gt; INVALID_ARGUMENT; no match -&gt; NOT_FOUND; several
   *   matches -&gt; FAILED_PRECONDITION naming some candidates.
   * - A session whose log has mid-file corruption -&gt; DATA_LOSS naming the line.
   * - Missing / wrong token -&gt; UNAUTHENTICATED; shutting down -&gt; UNAVAILABLE.
   * </pre>
   */
  public static final class StoreServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<StoreServiceBlockingV2Stub> {
    private StoreServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected StoreServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new StoreServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * CreateSession creates a session whose log starts with a SessionInfo.
     * session_id is generated (YYYYMMDD-HHMMSS-&lt;8 hex&gt;, UTC) unless given.
     * Creating an existing id with identical parameters returns it
     * (created=false); with different parameters -&gt; ALREADY_EXISTS.
     * Errors: INVALID_ARGUMENT (bad id / workspace / sizes), NOT_FOUND (the
     * parent_session_id does not exist), ALREADY_EXISTS.
     * </pre>
     */
    public io.github.sessiond.v1.CreateSessionResponse createSession(io.github.sessiond.v1.CreateSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCreateSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetSession returns the metadata of one session.
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous).
     * </pre>
     */
    public io.github.sessiond.v1.GetSessionResponse getSession(io.github.sessiond.v1.GetSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListSessions pages through a workspace's sessions: the top-level ones,
     * or with parent_session_id the subagents of that session, ordered by
     * creation (default) or update time, newest first (default) or oldest
     * first, narrowed by a filter (every condition set must hold). Pages are
     * keyset pages: sessions created, appended to or deleted between two
     * calls never make a page repeat or skip a session that was there
     * throughout, except that ordering by update time moves an updated
     * session (it is seen at most once per listing: a session updated after
     * the listing passed it is not shown again). Corrupt sessions are listed
     * with health CORRUPT, never hidden (a filter on tags, title or agent
     * type does not match them). Files that are not sessions are ignored.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit /
     * malformed filter).
     * </pre>
     */
    public io.github.sessiond.v1.ListSessionsResponse listSessions(io.github.sessiond.v1.ListSessionsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListWorkspaces pages through the workspaces that hold at least one
     * session, by name (bytewise ascending), each with its number of
     * top-level sessions (what ListSessions lists without parent_session_id)
     * and of subagent sessions, corrupt ones included. A token that may use
     * some workspaces only (--auth-tokens) lists those only. Pages are keyset
     * pages on the name: workspaces created or emptied between two calls
     * never make a page repeat or skip a workspace that was there throughout.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit).
     * </pre>
     */
    public io.github.sessiond.v1.ListWorkspacesResponse listWorkspaces(io.github.sessiond.v1.ListWorkspacesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListWorkspacesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * SearchEntries finds the message entries of a workspace whose text
     * contains every word of a query (case-insensitive, Unicode case folding;
     * text parts, thinking and tool results; tool-call arguments as their
     * JSON text), with a short snippet around the first match. Hits come
     * session by session in the order of ListSessions (newest created first
     * by default; the same filter applies), entries in seq order (all
     * branches: the tree's history, not only the current path). Paged.
     * Errors: INVALID_ARGUMENT (empty query, query over 256 characters, bad
     * page token).
     * </pre>
     */
    public io.github.sessiond.v1.SearchEntriesResponse searchEntries(io.github.sessiond.v1.SearchEntriesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSearchEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteSession removes a session; with include_subagents also its
     * subagent sessions (recursively). Without it, subagents stay and keep
     * their parent_session_id. With expected_head_seq only a session not
     * written to since (compare-and-delete).
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous),
     * ABORTED (expected_head_seq differs).
     * </pre>
     */
    public io.github.sessiond.v1.DeleteSessionResponse deleteSession(io.github.sessiond.v1.DeleteSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ForkSession creates a new session from the path root -&gt; entry of an
     * existing one: a new SessionInfo (forked_from set) followed by copies of
     * the path's entries (original ids kept, re-parented onto the new root).
     * The source is untouched.
     * Errors: INVALID_ARGUMENT (entry is a Leaf entry / malformed),
     * NOT_FOUND (session, entry or label), ALREADY_EXISTS (new id taken).
     * </pre>
     */
    public io.github.sessiond.v1.ForkSessionResponse forkSession(io.github.sessiond.v1.ForkSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getForkSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ImportSession stores a whole session exactly as given: every entry with
     * its id, parent, timestamp and seq, the root SessionInfo with its
     * created_at, forked_from, title, cwd, tags, metadata and (for a subagent
     * session) parent_session_id and agent_type, and the Leaf entries, so the
     * current leaf is the log's own. It is the lossless way to move a session
     * between servers (GetEntries from one, ImportSession to the other) and to
     * bring in transcripts of other tools.
     * The entries are checked with the rules of a live Append, in the given
     * order: one tree whose root (the first entry) is a SessionInfo, parents
     * before children, unique ids, tool results answering a call on their
     * path, compactions replacing entries of their own path, Leaf targets that
     * exist. A seq, when set, must be the entry's 1-based position (seq 0 is
     * filled in); an entry without timestamp gets the server's clock; a root
     * without created_at gets its timestamp; format_version 0 becomes the
     * current one. The session id is session_id, else the one recorded in the
     * root. A subagent session's parent session must exist, and its
     * spawn_depth, when set, be the parent's plus one (0 is filled in).
     * Idempotent: importing a session whose stored log is identical returns it
     * with created=false; a different log under that id -&gt; ALREADY_EXISTS.
     * The log travels in one message (--max-message-bytes of the server
     * bounds it); a larger one can be sent as its start with ImportSession and
     * the rest with Append (no Leaf entries after the start), as `sessiond
     * import` does.
     * Errors: INVALID_ARGUMENT (naming the offending entry, or a bad id /
     * workspace), RESOURCE_EXHAUSTED (an entry over the size limit),
     * NOT_FOUND (the parent session does not exist), ALREADY_EXISTS (the id
     * holds another log).
     * </pre>
     */
    public io.github.sessiond.v1.ImportSessionResponse importSession(io.github.sessiond.v1.ImportSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getImportSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * WatchSessions streams created / updated / deleted events of a
     * workspace. Resume with the cursor of the last event seen.
     * Errors: INVALID_ARGUMENT (bad cursor), RESOURCE_EXHAUSTED (too many
     * watchers), UNAVAILABLE (server shutting down: reconnect with the cursor).
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, io.github.sessiond.v1.WatchSessionsResponse>
        watchSessions(io.github.sessiond.v1.WatchSessionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getWatchSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetBlob streams a blob of the workspace (a BlobRef's sha256) in chunks
     * of at most 1 MiB, from offset, at most length bytes (0: to the end).
     * Errors: INVALID_ARGUMENT (malformed sha256, offset past the end),
     * NOT_FOUND (no such blob in the workspace).
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, io.github.sessiond.v1.GetBlobResponse>
        getBlob(io.github.sessiond.v1.GetBlobRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getGetBlobMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * PutBlob uploads a blob in chunks, for parts too large for one Append
     * (the server itself stores parts over its threshold that arrive inline).
     * Chunks go in order: each one's offset is the number of bytes the
     * server has (a retried chunk it has already is taken again, harmlessly);
     * the one that completes `size` bytes stores the blob durably once its
     * SHA-256 matches, and only then may an Append reference it. A blob the
     * workspace already holds answers stored at once: idempotent by hash.
     * An upload left unfinished is removed by `gc` after a grace period.
     * Errors: INVALID_ARGUMENT (malformed sha256, a chunk past size, content
     * that does not hash to sha256: the upload is discarded),
     * FAILED_PRECONDITION (offset is not the number of bytes received: the
     * message says how many; another client uploading the same content
     * through another replica moves it on. An empty chunk at offset 0 asks
     * how many without sending any; the clients do that and go on),
     * RESOURCE_EXHAUSTED (size over the server's --max-blob-bytes).
     * </pre>
     */
    public io.github.sessiond.v1.PutBlobResponse putBlob(io.github.sessiond.v1.PutBlobRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPutBlobMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * EraseSessions erases sessions: the ones named, every one whose tags
     * hold a filter, or every one of the workspace, each with its subagent
     * sessions (recursively). An erased session keeps its tree (ids, parents,
     * seqs, kinds, timestamps) and its SessionInfo entries (title, tags);
     * every other entry reads with Entry.withheld (reason ERASED) and its
     * content is gone: a sealed session's data key is destroyed, a session in
     * clear is rewritten. Idempotent. One audit record without content is
     * written per call and returned.
     * Errors: INVALID_ARGUMENT (not exactly one of session_ids, tags, all; by
     * empty; malformed id or tag), NOT_FOUND (a named session), UNIMPLEMENTED
     * (an engine without erasure: PostgreSQL for now).
     * </pre>
     */
    public io.github.sessiond.v1.EraseSessionsResponse eraseSessions(io.github.sessiond.v1.EraseSessionsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getEraseSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * UsageReport sums a workspace's usage over a time window in one call:
     * every assistant message whose timestamp is in [start, end) (a window may
     * cut through a session), of every session (subagents included) that
     * holds the filter's tags, grouped by time bucket, model and the values
     * of chosen tag keys. Pricing as GetUsage.
     * Errors: INVALID_ARGUMENT (start or end unset, end not after start, a
     * window over 400 days, more than 8 group_by_tags, a malformed tag).
     * </pre>
     */
    public io.github.sessiond.v1.UsageReportResponse usageReport(io.github.sessiond.v1.UsageReportRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUsageReportMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ShareSession makes a read-only snapshot of a session's path up to an
     * entry, behind an unguessable token, with an expiry. The viewer serves it
     * at /share/&lt;token&gt; without the workspace's auth token; ReadShare reads it
     * the same way. Redaction and erasure done later apply to it; deleting or
     * erasing the session revokes it.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (expiry in the
     * past or over 365 days, a Leaf entry).
     * </pre>
     */
    public io.github.sessiond.v1.ShareSessionResponse shareSession(io.github.sessiond.v1.ShareSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getShareSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * RevokeShare makes a share unreadable at once. Idempotent.
     * Errors: NOT_FOUND (no such share in the workspace).
     * </pre>
     */
    public io.github.sessiond.v1.RevokeShareResponse revokeShare(io.github.sessiond.v1.RevokeShareRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRevokeShareMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListShares pages through a workspace's shares (optionally of one
     * session), newest first, revoked and expired ones included (marked).
     * </pre>
     */
    public io.github.sessiond.v1.ListSharesResponse listShares(io.github.sessiond.v1.ListSharesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSharesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ReadShare reads a share's snapshot by its token alone: no auth token is
     * needed (the share token is the secret). Paged like GetState.
     * Errors: NOT_FOUND (unknown, revoked, expired, or its session deleted or
     * erased: the same answer for each, so a token reveals nothing).
     * </pre>
     */
    public io.github.sessiond.v1.ReadShareResponse readShare(io.github.sessiond.v1.ReadShareRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getReadShareMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service StoreService.
   * <pre>
   * StoreService is the repository of sessions: create, find, list, delete,
   * fork and watch the sessions of a workspace.
   * Common rules:
   * - workspace matches [A-Za-z0-9][A-Za-z0-9._-]{0,127}; empty means
   *   "default". Workspaces are isolated from each other. A session of a
   *   workspace the caller's token may not use is NOT_FOUND.
   * - session is a full id or a unique prefix of at least 4 characters.
   *   Shorter or malformed -&gt; INVALID_ARGUMENT; no match -&gt; NOT_FOUND; several
   *   matches -&gt; FAILED_PRECONDITION naming some candidates.
   * - A session whose log has mid-file corruption -&gt; DATA_LOSS naming the line.
   * - Missing / wrong token -&gt; UNAUTHENTICATED; shutting down -&gt; UNAVAILABLE.
   * </pre>
   */
  public static final class StoreServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<StoreServiceBlockingStub> {
    private StoreServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected StoreServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new StoreServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreateSession creates a session whose log starts with a SessionInfo.
     * session_id is generated (YYYYMMDD-HHMMSS-&lt;8 hex&gt;, UTC) unless given.
     * Creating an existing id with identical parameters returns it
     * (created=false); with different parameters -&gt; ALREADY_EXISTS.
     * Errors: INVALID_ARGUMENT (bad id / workspace / sizes), NOT_FOUND (the
     * parent_session_id does not exist), ALREADY_EXISTS.
     * </pre>
     */
    public io.github.sessiond.v1.CreateSessionResponse createSession(io.github.sessiond.v1.CreateSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetSession returns the metadata of one session.
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous).
     * </pre>
     */
    public io.github.sessiond.v1.GetSessionResponse getSession(io.github.sessiond.v1.GetSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListSessions pages through a workspace's sessions: the top-level ones,
     * or with parent_session_id the subagents of that session, ordered by
     * creation (default) or update time, newest first (default) or oldest
     * first, narrowed by a filter (every condition set must hold). Pages are
     * keyset pages: sessions created, appended to or deleted between two
     * calls never make a page repeat or skip a session that was there
     * throughout, except that ordering by update time moves an updated
     * session (it is seen at most once per listing: a session updated after
     * the listing passed it is not shown again). Corrupt sessions are listed
     * with health CORRUPT, never hidden (a filter on tags, title or agent
     * type does not match them). Files that are not sessions are ignored.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit /
     * malformed filter).
     * </pre>
     */
    public io.github.sessiond.v1.ListSessionsResponse listSessions(io.github.sessiond.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListWorkspaces pages through the workspaces that hold at least one
     * session, by name (bytewise ascending), each with its number of
     * top-level sessions (what ListSessions lists without parent_session_id)
     * and of subagent sessions, corrupt ones included. A token that may use
     * some workspaces only (--auth-tokens) lists those only. Pages are keyset
     * pages on the name: workspaces created or emptied between two calls
     * never make a page repeat or skip a workspace that was there throughout.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit).
     * </pre>
     */
    public io.github.sessiond.v1.ListWorkspacesResponse listWorkspaces(io.github.sessiond.v1.ListWorkspacesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListWorkspacesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * SearchEntries finds the message entries of a workspace whose text
     * contains every word of a query (case-insensitive, Unicode case folding;
     * text parts, thinking and tool results; tool-call arguments as their
     * JSON text), with a short snippet around the first match. Hits come
     * session by session in the order of ListSessions (newest created first
     * by default; the same filter applies), entries in seq order (all
     * branches: the tree's history, not only the current path). Paged.
     * Errors: INVALID_ARGUMENT (empty query, query over 256 characters, bad
     * page token).
     * </pre>
     */
    public io.github.sessiond.v1.SearchEntriesResponse searchEntries(io.github.sessiond.v1.SearchEntriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSearchEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteSession removes a session; with include_subagents also its
     * subagent sessions (recursively). Without it, subagents stay and keep
     * their parent_session_id. With expected_head_seq only a session not
     * written to since (compare-and-delete).
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous),
     * ABORTED (expected_head_seq differs).
     * </pre>
     */
    public io.github.sessiond.v1.DeleteSessionResponse deleteSession(io.github.sessiond.v1.DeleteSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ForkSession creates a new session from the path root -&gt; entry of an
     * existing one: a new SessionInfo (forked_from set) followed by copies of
     * the path's entries (original ids kept, re-parented onto the new root).
     * The source is untouched.
     * Errors: INVALID_ARGUMENT (entry is a Leaf entry / malformed),
     * NOT_FOUND (session, entry or label), ALREADY_EXISTS (new id taken).
     * </pre>
     */
    public io.github.sessiond.v1.ForkSessionResponse forkSession(io.github.sessiond.v1.ForkSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getForkSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ImportSession stores a whole session exactly as given: every entry with
     * its id, parent, timestamp and seq, the root SessionInfo with its
     * created_at, forked_from, title, cwd, tags, metadata and (for a subagent
     * session) parent_session_id and agent_type, and the Leaf entries, so the
     * current leaf is the log's own. It is the lossless way to move a session
     * between servers (GetEntries from one, ImportSession to the other) and to
     * bring in transcripts of other tools.
     * The entries are checked with the rules of a live Append, in the given
     * order: one tree whose root (the first entry) is a SessionInfo, parents
     * before children, unique ids, tool results answering a call on their
     * path, compactions replacing entries of their own path, Leaf targets that
     * exist. A seq, when set, must be the entry's 1-based position (seq 0 is
     * filled in); an entry without timestamp gets the server's clock; a root
     * without created_at gets its timestamp; format_version 0 becomes the
     * current one. The session id is session_id, else the one recorded in the
     * root. A subagent session's parent session must exist, and its
     * spawn_depth, when set, be the parent's plus one (0 is filled in).
     * Idempotent: importing a session whose stored log is identical returns it
     * with created=false; a different log under that id -&gt; ALREADY_EXISTS.
     * The log travels in one message (--max-message-bytes of the server
     * bounds it); a larger one can be sent as its start with ImportSession and
     * the rest with Append (no Leaf entries after the start), as `sessiond
     * import` does.
     * Errors: INVALID_ARGUMENT (naming the offending entry, or a bad id /
     * workspace), RESOURCE_EXHAUSTED (an entry over the size limit),
     * NOT_FOUND (the parent session does not exist), ALREADY_EXISTS (the id
     * holds another log).
     * </pre>
     */
    public io.github.sessiond.v1.ImportSessionResponse importSession(io.github.sessiond.v1.ImportSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getImportSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * WatchSessions streams created / updated / deleted events of a
     * workspace. Resume with the cursor of the last event seen.
     * Errors: INVALID_ARGUMENT (bad cursor), RESOURCE_EXHAUSTED (too many
     * watchers), UNAVAILABLE (server shutting down: reconnect with the cursor).
     * </pre>
     */
    public java.util.Iterator<io.github.sessiond.v1.WatchSessionsResponse> watchSessions(
        io.github.sessiond.v1.WatchSessionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getWatchSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetBlob streams a blob of the workspace (a BlobRef's sha256) in chunks
     * of at most 1 MiB, from offset, at most length bytes (0: to the end).
     * Errors: INVALID_ARGUMENT (malformed sha256, offset past the end),
     * NOT_FOUND (no such blob in the workspace).
     * </pre>
     */
    public java.util.Iterator<io.github.sessiond.v1.GetBlobResponse> getBlob(
        io.github.sessiond.v1.GetBlobRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getGetBlobMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * PutBlob uploads a blob in chunks, for parts too large for one Append
     * (the server itself stores parts over its threshold that arrive inline).
     * Chunks go in order: each one's offset is the number of bytes the
     * server has (a retried chunk it has already is taken again, harmlessly);
     * the one that completes `size` bytes stores the blob durably once its
     * SHA-256 matches, and only then may an Append reference it. A blob the
     * workspace already holds answers stored at once: idempotent by hash.
     * An upload left unfinished is removed by `gc` after a grace period.
     * Errors: INVALID_ARGUMENT (malformed sha256, a chunk past size, content
     * that does not hash to sha256: the upload is discarded),
     * FAILED_PRECONDITION (offset is not the number of bytes received: the
     * message says how many; another client uploading the same content
     * through another replica moves it on. An empty chunk at offset 0 asks
     * how many without sending any; the clients do that and go on),
     * RESOURCE_EXHAUSTED (size over the server's --max-blob-bytes).
     * </pre>
     */
    public io.github.sessiond.v1.PutBlobResponse putBlob(io.github.sessiond.v1.PutBlobRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPutBlobMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * EraseSessions erases sessions: the ones named, every one whose tags
     * hold a filter, or every one of the workspace, each with its subagent
     * sessions (recursively). An erased session keeps its tree (ids, parents,
     * seqs, kinds, timestamps) and its SessionInfo entries (title, tags);
     * every other entry reads with Entry.withheld (reason ERASED) and its
     * content is gone: a sealed session's data key is destroyed, a session in
     * clear is rewritten. Idempotent. One audit record without content is
     * written per call and returned.
     * Errors: INVALID_ARGUMENT (not exactly one of session_ids, tags, all; by
     * empty; malformed id or tag), NOT_FOUND (a named session), UNIMPLEMENTED
     * (an engine without erasure: PostgreSQL for now).
     * </pre>
     */
    public io.github.sessiond.v1.EraseSessionsResponse eraseSessions(io.github.sessiond.v1.EraseSessionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getEraseSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * UsageReport sums a workspace's usage over a time window in one call:
     * every assistant message whose timestamp is in [start, end) (a window may
     * cut through a session), of every session (subagents included) that
     * holds the filter's tags, grouped by time bucket, model and the values
     * of chosen tag keys. Pricing as GetUsage.
     * Errors: INVALID_ARGUMENT (start or end unset, end not after start, a
     * window over 400 days, more than 8 group_by_tags, a malformed tag).
     * </pre>
     */
    public io.github.sessiond.v1.UsageReportResponse usageReport(io.github.sessiond.v1.UsageReportRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUsageReportMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ShareSession makes a read-only snapshot of a session's path up to an
     * entry, behind an unguessable token, with an expiry. The viewer serves it
     * at /share/&lt;token&gt; without the workspace's auth token; ReadShare reads it
     * the same way. Redaction and erasure done later apply to it; deleting or
     * erasing the session revokes it.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (expiry in the
     * past or over 365 days, a Leaf entry).
     * </pre>
     */
    public io.github.sessiond.v1.ShareSessionResponse shareSession(io.github.sessiond.v1.ShareSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getShareSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * RevokeShare makes a share unreadable at once. Idempotent.
     * Errors: NOT_FOUND (no such share in the workspace).
     * </pre>
     */
    public io.github.sessiond.v1.RevokeShareResponse revokeShare(io.github.sessiond.v1.RevokeShareRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRevokeShareMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListShares pages through a workspace's shares (optionally of one
     * session), newest first, revoked and expired ones included (marked).
     * </pre>
     */
    public io.github.sessiond.v1.ListSharesResponse listShares(io.github.sessiond.v1.ListSharesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSharesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ReadShare reads a share's snapshot by its token alone: no auth token is
     * needed (the share token is the secret). Paged like GetState.
     * Errors: NOT_FOUND (unknown, revoked, expired, or its session deleted or
     * erased: the same answer for each, so a token reveals nothing).
     * </pre>
     */
    public io.github.sessiond.v1.ReadShareResponse readShare(io.github.sessiond.v1.ReadShareRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getReadShareMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service StoreService.
   * <pre>
   * StoreService is the repository of sessions: create, find, list, delete,
   * fork and watch the sessions of a workspace.
   * Common rules:
   * - workspace matches [A-Za-z0-9][A-Za-z0-9._-]{0,127}; empty means
   *   "default". Workspaces are isolated from each other. A session of a
   *   workspace the caller's token may not use is NOT_FOUND.
   * - session is a full id or a unique prefix of at least 4 characters.
   *   Shorter or malformed -&gt; INVALID_ARGUMENT; no match -&gt; NOT_FOUND; several
   *   matches -&gt; FAILED_PRECONDITION naming some candidates.
   * - A session whose log has mid-file corruption -&gt; DATA_LOSS naming the line.
   * - Missing / wrong token -&gt; UNAUTHENTICATED; shutting down -&gt; UNAVAILABLE.
   * </pre>
   */
  public static final class StoreServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<StoreServiceFutureStub> {
    private StoreServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected StoreServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new StoreServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreateSession creates a session whose log starts with a SessionInfo.
     * session_id is generated (YYYYMMDD-HHMMSS-&lt;8 hex&gt;, UTC) unless given.
     * Creating an existing id with identical parameters returns it
     * (created=false); with different parameters -&gt; ALREADY_EXISTS.
     * Errors: INVALID_ARGUMENT (bad id / workspace / sizes), NOT_FOUND (the
     * parent_session_id does not exist), ALREADY_EXISTS.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.CreateSessionResponse> createSession(
        io.github.sessiond.v1.CreateSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetSession returns the metadata of one session.
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.GetSessionResponse> getSession(
        io.github.sessiond.v1.GetSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListSessions pages through a workspace's sessions: the top-level ones,
     * or with parent_session_id the subagents of that session, ordered by
     * creation (default) or update time, newest first (default) or oldest
     * first, narrowed by a filter (every condition set must hold). Pages are
     * keyset pages: sessions created, appended to or deleted between two
     * calls never make a page repeat or skip a session that was there
     * throughout, except that ordering by update time moves an updated
     * session (it is seen at most once per listing: a session updated after
     * the listing passed it is not shown again). Corrupt sessions are listed
     * with health CORRUPT, never hidden (a filter on tags, title or agent
     * type does not match them). Files that are not sessions are ignored.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit /
     * malformed filter).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.ListSessionsResponse> listSessions(
        io.github.sessiond.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListWorkspaces pages through the workspaces that hold at least one
     * session, by name (bytewise ascending), each with its number of
     * top-level sessions (what ListSessions lists without parent_session_id)
     * and of subagent sessions, corrupt ones included. A token that may use
     * some workspaces only (--auth-tokens) lists those only. Pages are keyset
     * pages on the name: workspaces created or emptied between two calls
     * never make a page repeat or skip a workspace that was there throughout.
     * Errors: INVALID_ARGUMENT (bad page token / page size over the limit).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.ListWorkspacesResponse> listWorkspaces(
        io.github.sessiond.v1.ListWorkspacesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListWorkspacesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * SearchEntries finds the message entries of a workspace whose text
     * contains every word of a query (case-insensitive, Unicode case folding;
     * text parts, thinking and tool results; tool-call arguments as their
     * JSON text), with a short snippet around the first match. Hits come
     * session by session in the order of ListSessions (newest created first
     * by default; the same filter applies), entries in seq order (all
     * branches: the tree's history, not only the current path). Paged.
     * Errors: INVALID_ARGUMENT (empty query, query over 256 characters, bad
     * page token).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.SearchEntriesResponse> searchEntries(
        io.github.sessiond.v1.SearchEntriesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSearchEntriesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeleteSession removes a session; with include_subagents also its
     * subagent sessions (recursively). Without it, subagents stay and keep
     * their parent_session_id. With expected_head_seq only a session not
     * written to since (compare-and-delete).
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (ambiguous),
     * ABORTED (expected_head_seq differs).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.DeleteSessionResponse> deleteSession(
        io.github.sessiond.v1.DeleteSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ForkSession creates a new session from the path root -&gt; entry of an
     * existing one: a new SessionInfo (forked_from set) followed by copies of
     * the path's entries (original ids kept, re-parented onto the new root).
     * The source is untouched.
     * Errors: INVALID_ARGUMENT (entry is a Leaf entry / malformed),
     * NOT_FOUND (session, entry or label), ALREADY_EXISTS (new id taken).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.ForkSessionResponse> forkSession(
        io.github.sessiond.v1.ForkSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getForkSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ImportSession stores a whole session exactly as given: every entry with
     * its id, parent, timestamp and seq, the root SessionInfo with its
     * created_at, forked_from, title, cwd, tags, metadata and (for a subagent
     * session) parent_session_id and agent_type, and the Leaf entries, so the
     * current leaf is the log's own. It is the lossless way to move a session
     * between servers (GetEntries from one, ImportSession to the other) and to
     * bring in transcripts of other tools.
     * The entries are checked with the rules of a live Append, in the given
     * order: one tree whose root (the first entry) is a SessionInfo, parents
     * before children, unique ids, tool results answering a call on their
     * path, compactions replacing entries of their own path, Leaf targets that
     * exist. A seq, when set, must be the entry's 1-based position (seq 0 is
     * filled in); an entry without timestamp gets the server's clock; a root
     * without created_at gets its timestamp; format_version 0 becomes the
     * current one. The session id is session_id, else the one recorded in the
     * root. A subagent session's parent session must exist, and its
     * spawn_depth, when set, be the parent's plus one (0 is filled in).
     * Idempotent: importing a session whose stored log is identical returns it
     * with created=false; a different log under that id -&gt; ALREADY_EXISTS.
     * The log travels in one message (--max-message-bytes of the server
     * bounds it); a larger one can be sent as its start with ImportSession and
     * the rest with Append (no Leaf entries after the start), as `sessiond
     * import` does.
     * Errors: INVALID_ARGUMENT (naming the offending entry, or a bad id /
     * workspace), RESOURCE_EXHAUSTED (an entry over the size limit),
     * NOT_FOUND (the parent session does not exist), ALREADY_EXISTS (the id
     * holds another log).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.ImportSessionResponse> importSession(
        io.github.sessiond.v1.ImportSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getImportSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * PutBlob uploads a blob in chunks, for parts too large for one Append
     * (the server itself stores parts over its threshold that arrive inline).
     * Chunks go in order: each one's offset is the number of bytes the
     * server has (a retried chunk it has already is taken again, harmlessly);
     * the one that completes `size` bytes stores the blob durably once its
     * SHA-256 matches, and only then may an Append reference it. A blob the
     * workspace already holds answers stored at once: idempotent by hash.
     * An upload left unfinished is removed by `gc` after a grace period.
     * Errors: INVALID_ARGUMENT (malformed sha256, a chunk past size, content
     * that does not hash to sha256: the upload is discarded),
     * FAILED_PRECONDITION (offset is not the number of bytes received: the
     * message says how many; another client uploading the same content
     * through another replica moves it on. An empty chunk at offset 0 asks
     * how many without sending any; the clients do that and go on),
     * RESOURCE_EXHAUSTED (size over the server's --max-blob-bytes).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.PutBlobResponse> putBlob(
        io.github.sessiond.v1.PutBlobRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPutBlobMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * EraseSessions erases sessions: the ones named, every one whose tags
     * hold a filter, or every one of the workspace, each with its subagent
     * sessions (recursively). An erased session keeps its tree (ids, parents,
     * seqs, kinds, timestamps) and its SessionInfo entries (title, tags);
     * every other entry reads with Entry.withheld (reason ERASED) and its
     * content is gone: a sealed session's data key is destroyed, a session in
     * clear is rewritten. Idempotent. One audit record without content is
     * written per call and returned.
     * Errors: INVALID_ARGUMENT (not exactly one of session_ids, tags, all; by
     * empty; malformed id or tag), NOT_FOUND (a named session), UNIMPLEMENTED
     * (an engine without erasure: PostgreSQL for now).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.EraseSessionsResponse> eraseSessions(
        io.github.sessiond.v1.EraseSessionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getEraseSessionsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * UsageReport sums a workspace's usage over a time window in one call:
     * every assistant message whose timestamp is in [start, end) (a window may
     * cut through a session), of every session (subagents included) that
     * holds the filter's tags, grouped by time bucket, model and the values
     * of chosen tag keys. Pricing as GetUsage.
     * Errors: INVALID_ARGUMENT (start or end unset, end not after start, a
     * window over 400 days, more than 8 group_by_tags, a malformed tag).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.UsageReportResponse> usageReport(
        io.github.sessiond.v1.UsageReportRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUsageReportMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ShareSession makes a read-only snapshot of a session's path up to an
     * entry, behind an unguessable token, with an expiry. The viewer serves it
     * at /share/&lt;token&gt; without the workspace's auth token; ReadShare reads it
     * the same way. Redaction and erasure done later apply to it; deleting or
     * erasing the session revokes it.
     * Errors: NOT_FOUND (session or entry), INVALID_ARGUMENT (expiry in the
     * past or over 365 days, a Leaf entry).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.ShareSessionResponse> shareSession(
        io.github.sessiond.v1.ShareSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getShareSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * RevokeShare makes a share unreadable at once. Idempotent.
     * Errors: NOT_FOUND (no such share in the workspace).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.RevokeShareResponse> revokeShare(
        io.github.sessiond.v1.RevokeShareRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRevokeShareMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListShares pages through a workspace's shares (optionally of one
     * session), newest first, revoked and expired ones included (marked).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.ListSharesResponse> listShares(
        io.github.sessiond.v1.ListSharesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSharesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ReadShare reads a share's snapshot by its token alone: no auth token is
     * needed (the share token is the secret). Paged like GetState.
     * Errors: NOT_FOUND (unknown, revoked, expired, or its session deleted or
     * erased: the same answer for each, so a token reveals nothing).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.sessiond.v1.ReadShareResponse> readShare(
        io.github.sessiond.v1.ReadShareRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getReadShareMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_CREATE_SESSION = 0;
  private static final int METHODID_GET_SESSION = 1;
  private static final int METHODID_LIST_SESSIONS = 2;
  private static final int METHODID_LIST_WORKSPACES = 3;
  private static final int METHODID_SEARCH_ENTRIES = 4;
  private static final int METHODID_DELETE_SESSION = 5;
  private static final int METHODID_FORK_SESSION = 6;
  private static final int METHODID_IMPORT_SESSION = 7;
  private static final int METHODID_WATCH_SESSIONS = 8;
  private static final int METHODID_GET_BLOB = 9;
  private static final int METHODID_PUT_BLOB = 10;
  private static final int METHODID_ERASE_SESSIONS = 11;
  private static final int METHODID_USAGE_REPORT = 12;
  private static final int METHODID_SHARE_SESSION = 13;
  private static final int METHODID_REVOKE_SHARE = 14;
  private static final int METHODID_LIST_SHARES = 15;
  private static final int METHODID_READ_SHARE = 16;

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
        case METHODID_CREATE_SESSION:
          serviceImpl.createSession((io.github.sessiond.v1.CreateSessionRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.CreateSessionResponse>) responseObserver);
          break;
        case METHODID_GET_SESSION:
          serviceImpl.getSession((io.github.sessiond.v1.GetSessionRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetSessionResponse>) responseObserver);
          break;
        case METHODID_LIST_SESSIONS:
          serviceImpl.listSessions((io.github.sessiond.v1.ListSessionsRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.ListSessionsResponse>) responseObserver);
          break;
        case METHODID_LIST_WORKSPACES:
          serviceImpl.listWorkspaces((io.github.sessiond.v1.ListWorkspacesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.ListWorkspacesResponse>) responseObserver);
          break;
        case METHODID_SEARCH_ENTRIES:
          serviceImpl.searchEntries((io.github.sessiond.v1.SearchEntriesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.SearchEntriesResponse>) responseObserver);
          break;
        case METHODID_DELETE_SESSION:
          serviceImpl.deleteSession((io.github.sessiond.v1.DeleteSessionRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.DeleteSessionResponse>) responseObserver);
          break;
        case METHODID_FORK_SESSION:
          serviceImpl.forkSession((io.github.sessiond.v1.ForkSessionRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.ForkSessionResponse>) responseObserver);
          break;
        case METHODID_IMPORT_SESSION:
          serviceImpl.importSession((io.github.sessiond.v1.ImportSessionRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.ImportSessionResponse>) responseObserver);
          break;
        case METHODID_WATCH_SESSIONS:
          serviceImpl.watchSessions((io.github.sessiond.v1.WatchSessionsRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.WatchSessionsResponse>) responseObserver);
          break;
        case METHODID_GET_BLOB:
          serviceImpl.getBlob((io.github.sessiond.v1.GetBlobRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.GetBlobResponse>) responseObserver);
          break;
        case METHODID_PUT_BLOB:
          serviceImpl.putBlob((io.github.sessiond.v1.PutBlobRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.PutBlobResponse>) responseObserver);
          break;
        case METHODID_ERASE_SESSIONS:
          serviceImpl.eraseSessions((io.github.sessiond.v1.EraseSessionsRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.EraseSessionsResponse>) responseObserver);
          break;
        case METHODID_USAGE_REPORT:
          serviceImpl.usageReport((io.github.sessiond.v1.UsageReportRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.UsageReportResponse>) responseObserver);
          break;
        case METHODID_SHARE_SESSION:
          serviceImpl.shareSession((io.github.sessiond.v1.ShareSessionRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.ShareSessionResponse>) responseObserver);
          break;
        case METHODID_REVOKE_SHARE:
          serviceImpl.revokeShare((io.github.sessiond.v1.RevokeShareRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.RevokeShareResponse>) responseObserver);
          break;
        case METHODID_LIST_SHARES:
          serviceImpl.listShares((io.github.sessiond.v1.ListSharesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.ListSharesResponse>) responseObserver);
          break;
        case METHODID_READ_SHARE:
          serviceImpl.readShare((io.github.sessiond.v1.ReadShareRequest) request,
              (io.grpc.stub.StreamObserver<io.github.sessiond.v1.ReadShareResponse>) responseObserver);
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
          getCreateSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.CreateSessionRequest,
              io.github.sessiond.v1.CreateSessionResponse>(
                service, METHODID_CREATE_SESSION)))
        .addMethod(
          getGetSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.GetSessionRequest,
              io.github.sessiond.v1.GetSessionResponse>(
                service, METHODID_GET_SESSION)))
        .addMethod(
          getListSessionsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.ListSessionsRequest,
              io.github.sessiond.v1.ListSessionsResponse>(
                service, METHODID_LIST_SESSIONS)))
        .addMethod(
          getListWorkspacesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.ListWorkspacesRequest,
              io.github.sessiond.v1.ListWorkspacesResponse>(
                service, METHODID_LIST_WORKSPACES)))
        .addMethod(
          getSearchEntriesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.SearchEntriesRequest,
              io.github.sessiond.v1.SearchEntriesResponse>(
                service, METHODID_SEARCH_ENTRIES)))
        .addMethod(
          getDeleteSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.DeleteSessionRequest,
              io.github.sessiond.v1.DeleteSessionResponse>(
                service, METHODID_DELETE_SESSION)))
        .addMethod(
          getForkSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.ForkSessionRequest,
              io.github.sessiond.v1.ForkSessionResponse>(
                service, METHODID_FORK_SESSION)))
        .addMethod(
          getImportSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.ImportSessionRequest,
              io.github.sessiond.v1.ImportSessionResponse>(
                service, METHODID_IMPORT_SESSION)))
        .addMethod(
          getWatchSessionsMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              io.github.sessiond.v1.WatchSessionsRequest,
              io.github.sessiond.v1.WatchSessionsResponse>(
                service, METHODID_WATCH_SESSIONS)))
        .addMethod(
          getGetBlobMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              io.github.sessiond.v1.GetBlobRequest,
              io.github.sessiond.v1.GetBlobResponse>(
                service, METHODID_GET_BLOB)))
        .addMethod(
          getPutBlobMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.PutBlobRequest,
              io.github.sessiond.v1.PutBlobResponse>(
                service, METHODID_PUT_BLOB)))
        .addMethod(
          getEraseSessionsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.EraseSessionsRequest,
              io.github.sessiond.v1.EraseSessionsResponse>(
                service, METHODID_ERASE_SESSIONS)))
        .addMethod(
          getUsageReportMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.UsageReportRequest,
              io.github.sessiond.v1.UsageReportResponse>(
                service, METHODID_USAGE_REPORT)))
        .addMethod(
          getShareSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.ShareSessionRequest,
              io.github.sessiond.v1.ShareSessionResponse>(
                service, METHODID_SHARE_SESSION)))
        .addMethod(
          getRevokeShareMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.RevokeShareRequest,
              io.github.sessiond.v1.RevokeShareResponse>(
                service, METHODID_REVOKE_SHARE)))
        .addMethod(
          getListSharesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.ListSharesRequest,
              io.github.sessiond.v1.ListSharesResponse>(
                service, METHODID_LIST_SHARES)))
        .addMethod(
          getReadShareMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.sessiond.v1.ReadShareRequest,
              io.github.sessiond.v1.ReadShareResponse>(
                service, METHODID_READ_SHARE)))
        .build();
  }

  private static abstract class StoreServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    StoreServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.github.sessiond.v1.StoreServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("StoreService");
    }
  }

  private static final class StoreServiceFileDescriptorSupplier
      extends StoreServiceBaseDescriptorSupplier {
    StoreServiceFileDescriptorSupplier() {}
  }

  private static final class StoreServiceMethodDescriptorSupplier
      extends StoreServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    StoreServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (StoreServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new StoreServiceFileDescriptorSupplier())
              .addMethod(getCreateSessionMethod())
              .addMethod(getGetSessionMethod())
              .addMethod(getListSessionsMethod())
              .addMethod(getListWorkspacesMethod())
              .addMethod(getSearchEntriesMethod())
              .addMethod(getDeleteSessionMethod())
              .addMethod(getForkSessionMethod())
              .addMethod(getImportSessionMethod())
              .addMethod(getWatchSessionsMethod())
              .addMethod(getGetBlobMethod())
              .addMethod(getPutBlobMethod())
              .addMethod(getEraseSessionsMethod())
              .addMethod(getUsageReportMethod())
              .addMethod(getShareSessionMethod())
              .addMethod(getRevokeShareMethod())
              .addMethod(getListSharesMethod())
              .addMethod(getReadShareMethod())
              .build();
        }
      }
    }
    return result;
  }
}
