import type http from "node:http";
import type http2 from "node:http2";
import net from "node:net";

/** The client connection preface of HTTP/2 (RFC 9113 §3.4): what a prior-knowledge h2c peer sends first. */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * One plaintext port for HTTP/2 and HTTP/1.1. gRPC clients speak HTTP/2
 * with prior knowledge (h2c); browsers never speak HTTP/2 without TLS, and
 * Node's http2 has `allowHTTP1` for TLS servers only (there ALPN decides).
 * So each new connection is routed by its first bytes: the HTTP/2 preface
 * goes to the http2 server, anything else (an HTTP/1.1 request line, e.g.
 * a browser's Connect or gRPC-Web call from sessiond/web) to the HTTP/1.1
 * server. Both get the socket through their own 'connection' event and the
 * bytes read so far, so each parses the connection from its first byte as
 * if it had accepted it.
 *
 * Bytes are compared as they come: the first one that differs from the
 * preface means HTTP/1.1 ("POST" differs at its second byte), all 24
 * matching means HTTP/2. A peer that connects and sends too little to tell
 * is closed after `idleMs` (0: never), like any idle connection.
 */
export function plaintextPort(h2: http2.Http2Server, h1: http.Server, idleMs: number): net.Server {
  return net.createServer((socket) => {
    let seen: Buffer = Buffer.alloc(0);
    const timer = idleMs > 0 ? setTimeout(() => socket.destroy(), idleMs) : undefined;
    const handOver = () => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      if (!seen.subarray(0, n).equals(PREFACE.subarray(0, n))) {
        // The HTTP/1 server reads the socket's handle directly from now on
        // (its parser consumes it) and listens for 'data' only for what came
        // before: hand it the bytes read so far that way.
        handOver();
        h1.emit("connection", socket);
        socket.emit("data", seen);
      } else if (n === PREFACE.length) {
        // The HTTP/2 session reads what is buffered on the socket when it
        // starts (Node does this for sockets handed over with data read).
        handOver();
        socket.pause();
        socket.unshift(seen);
        h2.emit("connection", socket);
      }
    };
    // Before it is handed on, a socket error (a reset) just ends it.
    const onError = () => socket.destroy();
    socket.on("data", onData);
    socket.on("error", onError);
    socket.once("close", () => clearTimeout(timer));
  });
}
