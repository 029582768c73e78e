import type http2 from "node:http2";
import tls from "node:tls";
import { openStreams } from "./open-streams.js";

/**
 * Closes connections that are idle for `idleMs`: no open stream and no
 * traffic in either direction. What it protects against is peers that connect
 * and go silent (a half-sent preface, garbage Node answers with GOAWAY but
 * never closes); a watch stream, with or without heartbeats, is never idle.
 *
 * The HTTP/2 session owns the idle timer, not the socket: once a session
 * consumes a socket, the socket's own timer is no longer refreshed by reads
 * or writes, so it would cut every connection `idleMs` after it opened.
 * Node refreshes the session's timer on every frame it reads or writes
 * (headers, data, ping, settings). HTTP/1.1 connections (TLS with ALPN
 * http/1.1) keep a socket timer, which the HTTP/1 parser and writes do
 * refresh; a stalled TLS handshake is the TLS server's `handshakeTimeout`.
 */
export function closeIdleConnections(
  server: http2.Http2Server | http2.Http2SecureServer,
  idleMs: number,
): void {
  if (idleMs <= 0) return;
  server.on("session", (session: http2.ServerHttp2Session) => {
    const streams = openStreams(session);
    const onQuiet = () => {
      if (streams.open > 0) session.setTimeout(idleMs, onQuiet);
      else session.destroy();
    };
    session.setTimeout(idleMs, onQuiet);
  });
  if (server instanceof tls.Server) {
    server.on("secureConnection", (socket: tls.TLSSocket) => {
      if (socket.alpnProtocol !== "h2") socket.setTimeout(idleMs, () => socket.destroy());
    });
  }
}
