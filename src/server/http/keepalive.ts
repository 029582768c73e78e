import type http2 from "node:http2";
import { openStreams } from "./open-streams.js";

/** How the server finds HTTP/2 connections whose client died without closing them. */
export interface KeepaliveConfig {
  /** A PING every this many ms on a connection with open streams (0 = never). */
  readonly intervalMs: number;
  /** No answer to a PING within this many ms closes the connection. */
  readonly timeoutMs: number;
}

/**
 * A client that dies without closing its connection (its host lost power, a
 * NAT or proxy dropped the mapping) sends no FIN and no RST. Its watch
 * streams would stay open on the server, each holding a watcher slot
 * (--max-watchers-per-session, --max-watchers) and its buffers, until the
 * kernel gives up retransmitting the heartbeats, which takes about fifteen
 * minutes. So every `intervalMs` the server PINGs each HTTP/2 connection
 * that has open streams, and destroys one whose PING goes unanswered for
 * `timeoutMs`: its streams end and their slots are free again. A watch's
 * client sends nothing of its own, so traffic from it cannot stand in for
 * the answer. A connection without open streams is the idle timeout's
 * (idle-connections.ts). grpc-js's own keepalive would do this for native
 * gRPC, but it never runs here: the front hands grpc-js single streams, not
 * connections (src/server/grpc/front.ts), so the front owns it, for every
 * protocol at once. HTTP/1.1 has no PING; those connections are left to TCP.
 */
export function pingOpenConnections(
  server: http2.Http2Server | http2.Http2SecureServer,
  config: KeepaliveConfig,
): void {
  if (config.intervalMs <= 0 || config.timeoutMs <= 0) return;
  server.on("session", (session: http2.ServerHttp2Session) => {
    const streams = openStreams(session);
    let waiting: NodeJS.Timeout | undefined;
    const tick = setInterval(() => {
      if (streams.open === 0 || waiting !== undefined || session.destroyed) return;
      waiting = setTimeout(() => session.destroy(), config.timeoutMs);
      waiting.unref();
      let sent: boolean;
      try {
        sent = session.ping((err) => {
          // An error means the session is going away anyway (closed, destroyed).
          if (err === null) {
            clearTimeout(waiting);
            waiting = undefined;
          }
        });
      } catch {
        sent = false; // closed meanwhile
      }
      if (!sent) {
        // Too many PINGs unanswered already (Node's maxOutstandingPings): as good as none answered.
        clearTimeout(waiting);
        session.destroy();
      }
    }, config.intervalMs);
    tick.unref();
    session.once("close", () => {
      clearInterval(tick);
      clearTimeout(waiting);
    });
  });
}
