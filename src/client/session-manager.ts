import http2 from "node:http2";
import { Http2SessionManager } from "@connectrpc/connect-node";

const { constants } = http2;

/** How long a failed call's stream may take to close by itself before it is reset. */
export const RESET_GRACE_MS = 100;

/**
 * The HTTP/2 connection of a Node client: connect-node's session manager,
 * but a stream the server is ending by itself is not reset.
 *
 * connect-node's client (2.1.2) closes the HTTP/2 stream of a failed call
 * with RST_STREAM (its h2Request: `stream.close(INTERNAL_ERROR)` unless Node
 * marks the stream closed). A server stream answered with a gRPC
 * "trailers-only" error (a watch of a session that does not exist:
 * NOT_FOUND) fails as soon as Node emits the response headers, in the same
 * turn, before Node has processed the END_STREAM those headers carry; so a
 * reset went out for every such call. The server's HTTP/2 layer counts every
 * RST_STREAM it receives against its rapid-reset budget (nghttp2,
 * CVE-2023-44487: 1,000, then 33 a second): measured on one connection,
 * 3,200 failed watches from 16 loops had the server close it (GOAWAY
 * INTERNAL_ERROR) once, and the 48 calls in flight on it then failed
 * INTERNAL. Over Connect and gRPC-Web the error is the last message and
 * the END_STREAM follows in a frame of its own, with the same result. Here
 * the reset of a failed call (INTERNAL_ERROR) on a healthy connection waits
 * up to RESET_GRACE_MS for the stream to close by itself: a stream the server is ending closes within a
 * millisecond or so (the END_STREAM follows its last bytes on the same
 * connection) and is left alone; one still open then is reset as before
 * (a deadline, say: its reset comes that much later).
 * A cancel (CANCEL: a watch the caller left) and a call on a closing
 * connection are reset at once, as connect-node does (deferring those made
 * resumable watches see a cut stream as a finished one).
 */
export class SessionManager extends Http2SessionManager {
  override async request(
    ...args: Parameters<Http2SessionManager["request"]>
  ): Promise<http2.ClientHttp2Stream> {
    const stream = await super.request(...args);
    const close = stream.close.bind(stream);
    stream.close = (code?: number, callback?: () => void) => {
      const session = stream.session;
      if (
        code !== constants.NGHTTP2_INTERNAL_ERROR ||
        stream.closed ||
        !session ||
        session.closed ||
        session.destroyed
      ) {
        close(code, callback);
        return;
      }
      const onClose = () => {
        clearTimeout(timer);
        callback?.();
      };
      const timer = setTimeout(() => {
        stream.off("close", onClose);
        close(code, callback);
      }, RESET_GRACE_MS);
      stream.once("close", onClose);
    };
    return stream;
  }
}
