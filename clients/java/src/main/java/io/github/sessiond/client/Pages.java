package io.github.sessiond.client;

import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.GetStateResponse;
import io.github.sessiond.v1.GetTreeRequest;
import io.github.sessiond.v1.GetTreeResponse;
import io.github.sessiond.v1.SessionServiceGrpc.SessionServiceBlockingStub;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * GetState and GetTree answer in pages once a state or a tree outgrows one
 * response (a non-empty {@code next_page_token} means "not all of it"). These
 * read every page and return one response, as an unpaged call would; all pages
 * describe the snapshot of the first, so the result is consistent while
 * entries are appended. A {@code page_token} in the request is ignored:
 * reading starts at the first page.
 */
public final class Pages {
  private Pages() {}

  /**
   * The whole state: GetState page after page, the messages merged into the
   * first response ({@code next_page_token} empty).
   *
   * @throws SessiondException the code and message of the first page that failed
   */
  public static GetStateResponse readState(SessionServiceBlockingStub stub, GetStateRequest req) {
    try {
      GetStateRequest r = req.toBuilder().clearPageToken().build();
      GetStateResponse first = stub.getState(r);
      GetStateResponse.Builder merged = first.toBuilder();
      String token = first.getNextPageToken();
      while (!token.isEmpty()) {
        GetStateResponse page = stub.getState(r.toBuilder().setPageToken(token).build());
        if (page.getState().getMessagesCount() == 0 && !page.getNextPageToken().isEmpty()) {
          throw stuck("GetState");
        }
        merged.getStateBuilder().addAllMessages(page.getState().getMessagesList());
        token = page.getNextPageToken();
      }
      return merged.setNextPageToken("").build();
    } catch (StatusRuntimeException e) {
      throw SessiondException.from(e);
    }
  }

  /**
   * The whole tree: GetTree page after page, the nodes merged into the first
   * response ({@code next_page_token} empty).
   *
   * @throws SessiondException the code and message of the first page that failed
   */
  public static GetTreeResponse readTree(SessionServiceBlockingStub stub, GetTreeRequest req) {
    try {
      GetTreeRequest r = req.toBuilder().clearPageToken().build();
      GetTreeResponse first = stub.getTree(r);
      GetTreeResponse.Builder merged = first.toBuilder();
      String token = first.getNextPageToken();
      while (!token.isEmpty()) {
        GetTreeResponse page = stub.getTree(r.toBuilder().setPageToken(token).build());
        if (page.getNodesCount() == 0 && !page.getNextPageToken().isEmpty()) {
          throw stuck("GetTree");
        }
        merged.addAllNodes(page.getNodesList());
        token = page.getNextPageToken();
      }
      return merged.setNextPageToken("").build();
    } catch (StatusRuntimeException e) {
      throw SessiondException.from(e);
    }
  }

  /** A page that brings nothing yet promises more would make the loop endless. */
  private static SessiondException stuck(String method) {
    return new SessiondException(
        Status.Code.INTERNAL, method + ": the server sent an empty page with a next page token");
  }
}
