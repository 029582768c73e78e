import type http2 from "node:http2";

/** How long a connection may live (see retireOldConnections). */
export interface ConnectionAgeConfig {
  /** A connection this old, ms, is asked to go (GOAWAY); 0 = never. Up to 10 % less, at random. */
  readonly maxAgeMs: number;
  /** Then its open streams get this long to finish before it is closed, ms. */
  readonly graceMs: number;
}

/**
 * HTTP/2 clients keep one connection for as long as it works, so replicas
 * behind a layer-4 load balancer keep the clients they had when they
 * started: a replica added later, or one restarted, gets none of the old
 * ones. Retiring connections at a maximum age spreads them again. At
 * `maxAgeMs` (less up to 10 % at random, so connections made together do
 * not all go at once) the server sends GOAWAY: the client opens its next
 * calls on a new connection (through the balancer) and the calls already
 * open go on. After `graceMs` what is still open (watch streams, which
 * never end on their own) is cut; a resumable watch then resumes on the new
 * connection from its last seq. grpc-js's max-connection-age would do this
 * for native gRPC, but it never runs here (the front hands grpc-js single
 * streams, not connections), so the front owns it for every protocol.
 */
export function retireOldConnections(
  server: http2.Http2Server | http2.Http2SecureServer,
  config: ConnectionAgeConfig,
): void {
  if (config.maxAgeMs <= 0) return;
  server.on("session", (session: http2.ServerHttp2Session) => {
    let grace: NodeJS.Timeout | undefined;
    const age = setTimeout(
      () => {
        if (session.closed || session.destroyed) return;
        // close() sends GOAWAY and lets open streams finish; a session with none closes at once.
        session.close();
        grace = setTimeout(() => session.destroy(), config.graceMs);
        grace.unref();
      },
      config.maxAgeMs * (1 - Math.random() * 0.1),
    );
    age.unref();
    session.once("close", () => {
      clearTimeout(age);
      clearTimeout(grace);
    });
  });
}
