import http2 from "node:http2";

/** How long the rest of an answered call's upload may take before its stream is reset. */
export const ANSWERED_UPLOAD_GRACE_MS = 1_000;

/**
 * Finishes the upload of a call the server has already answered. A server
 * may answer before it has read the whole request (one over its
 * --max-message-bytes is refused once the length prefix is in, RFC 9113
 * 8.1 allows it). connect-node (2.1.2) then stops feeding the request and
 * never ends it, so the stream stays open, and connect-node keeps the
 * connection ref'd while any stream is open: the caller's process never
 * exited. Here the request is ended after the bytes already queued (a
 * server that reads them to the end, as sessiond does, closes the stream
 * cleanly), and a stream still open after ANSWERED_UPLOAD_GRACE_MS (a
 * server that reads no more) is reset with CANCEL (Node sends a NO_ERROR
 * reset of an ended stream only once its data is out). Not reset at once:
 * Node (20) keeps counting the queued bytes of a stream reset with data
 * pending against the connection's session memory, and a few refused
 * uploads of 5 MB then had it refuse new streams (ENHANCE_YOUR_CALM).
 */
export function endUploadWhenAnswered(stream: http2.ClientHttp2Stream): void {
  stream.once("end", () => {
    if (stream.writableEnded) return;
    stream.end();
    const timer = setTimeout(() => {
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
    }, ANSWERED_UPLOAD_GRACE_MS);
    stream.once("close", () => clearTimeout(timer));
  });
}
