import http2 from "node:http2";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { endUploadWhenAnswered } from "./answered-upload.js";

const { constants } = http2;

/**
 * Receive windows of a client connection. HTTP/2 starts every stream and the
 * connection at 64 KiB: a 1 MiB GetBlob chunk or a 4 MiB page then waits
 * for the client's WINDOW_UPDATE sixteen to sixty-four times on the way.
 * Measured on loopback, a 1 MiB body between two Node processes took 2.4 ms
 * with the default windows and 0.8-1.3 ms with a 1 MiB stream window. The
 * connection's window bounds what one connection may have in flight
 * towards this process, whatever the number of streams.
 */
export const STREAM_WINDOW_BYTES = 2 * 1024 * 1024;
export const CONNECTION_WINDOW_BYTES = 16 * 1024 * 1024;

/** The session options of a client connection: the caller's (TLS) plus the stream window. */
export function clientSessionOptions<T extends object>(options: T | undefined) {
  return { ...options, settings: { initialWindowSize: STREAM_WINDOW_BYTES } };
}

const widened = new WeakSet<http2.Http2Session>();

/** The connection window is not a setting: it is widened once, on the first stream. */
function widenConnectionWindow(session: http2.Http2Session | undefined): void {
  if (session === undefined || widened.has(session) || session.destroyed) return;
  widened.add(session);
  session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
}

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
 * resumable watches see a cut stream as a finished one). An upload the
 * server answered before reading it all is ended (endUploadWhenAnswered).
 */
export class SessionManager extends Http2SessionManager {
  override async request(
    ...args: Parameters<Http2SessionManager["request"]>
  ): Promise<http2.ClientHttp2Stream> {
    const stream = await super.request(...args);
    widenConnectionWindow(stream.session);
    endUploadWhenAnswered(stream);
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
