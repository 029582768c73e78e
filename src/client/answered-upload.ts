import http2 from "node:http2";

/**
 * Ends the upload of a call the server has already answered. A server may
 * answer before it has read the whole request (one over its
 * --max-message-bytes is refused once the length prefix is in) and then
 * read no more of it: the rest of the upload waits for flow-control window
 * that never comes, the stream stays open, and connect-node keeps the
 * connection ref'd while any stream is open, so the caller's process never
 * exits. HTTP/2 lets a server answer early (RFC 9113, 8.1); once the answer
 * has been read to its end and the client had not finished sending, the
 * rest is not wanted: the stream is reset with NO_ERROR.
 *
 * Only an upload the caller had not ended is cut. connect-node ends a
 * request only after every write has gone out, so an ended one is already
 * on its way and needs no RST_STREAM (each counts against the server's
 * rapid-reset budget). The reset waits a turn of the event loop, so the
 * failed write it causes finds the call already settled with the server's
 * answer.
 */
export function resetUploadWhenAnswered(stream: http2.ClientHttp2Stream): void {
  stream.once("end", () => {
    if (stream.writableEnded) return;
    setImmediate(() => {
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
    });
  });
}
