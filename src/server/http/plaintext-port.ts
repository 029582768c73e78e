import type http from "node:http";
import type http2 from "node:http2";
import net from "node:net";

/** The client connection preface of HTTP/2 (RFC 9113 §3.4): what a prior-knowledge h2c peer sends first. */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * A silence after which a new connection may be taken for HTTP/2 and get
 * the server's SETTINGS first (`sessiond serve --h2c-speak-first-ms`; off
 * by default). A grpc-core client on its older iomgr poller (grpcio 1.51;
 * 1.85 with GRPC_EXPERIMENTS=-event_engine_client) with a short reconnect
 * backoff looks at its connection only when its 5 s backup poller runs,
 * writes its preface and reads once: SETTINGS sent in reply arrive after
 * it has stopped looking, so it needs them already waiting, as a grpc-core
 * server sends them at accept (measured: never connected in 15-20 s
 * without, at its first backup poll with). But an HTTP/1.1 client that
 * sends its request later than that (a loaded machine, a browser's spare
 * connection) then reads HTTP/2 bytes and fails: the integration suite
 * saw `Expected HTTP/` parse errors at random with 20 ms on a loaded box.
 * So the default waits for the client, as Go's h2c and Envoy do, and a
 * deployment whose cleartext clients are gRPC turns this on.
 */
export const SETTINGS_FIRST_MS = 20;

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
 * matching means HTTP/2. With `settingsFirstMs` > 0 (see
 * SETTINGS_FIRST_MS), a peer silent that long is taken for an HTTP/2
 * client waiting for the server to speak first: it goes to the http2
 * server, which sends its SETTINGS at once.
 * A peer that sends some of the preface and then too little to tell is
 * closed after `idleMs` (0: never), like any idle connection.
 */
export function plaintextPort(
  h2: http2.Http2Server,
  h1: http.Server,
  idleMs: number,
  settingsFirstMs = 0,
): net.Server {
  return net.createServer((socket) => {
    let seen: Buffer = Buffer.alloc(0);
    const idle = idleMs > 0 ? setTimeout(() => socket.destroy(), idleMs) : undefined;
    const handOver = () => {
      clearTimeout(idle);
      clearTimeout(silent);
      socket.off("data", onData);
      socket.off("error", onError);
    };
    let decided = false;
    const toHttp2 = () => {
      if (decided || socket.destroyed) return;
      decided = true;
      // The HTTP/2 session reads what is buffered on the socket when it
      // starts (Node does this for sockets handed over with data read).
      handOver();
      socket.pause();
      if (seen.length > 0) socket.unshift(seen);
      h2.emit("connection", socket);
    };
    // After a stall of the event loop the timer runs before the bytes that
    // came meanwhile are read: the decision waits for them (setImmediate
    // runs after this turn's I/O).
    const silent =
      settingsFirstMs > 0 ? setTimeout(() => setImmediate(toHttp2), settingsFirstMs) : undefined;
    const onData = (chunk: Buffer) => {
      clearTimeout(silent);
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      if (!seen.subarray(0, n).equals(PREFACE.subarray(0, n))) {
        // The HTTP/1 server reads the socket's handle directly from now on
        // (its parser consumes it) and listens for 'data' only for what came
        // before: hand it the bytes read so far that way.
        decided = true;
        handOver();
        h1.emit("connection", socket);
        socket.emit("data", seen);
      } else if (n === PREFACE.length) toHttp2();
    };
    // Before it is handed on, a socket error (a reset) just ends it.
    const onError = () => socket.destroy();
    socket.on("data", onData);
    socket.on("error", onError);
    socket.once("close", () => {
      clearTimeout(idle);
      clearTimeout(silent);
    });
  });
}
