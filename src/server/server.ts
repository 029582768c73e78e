import { setMaxListeners } from "node:events";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo, Server as NetServer, Socket } from "node:net";
import { isIP } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { file_grpc_health_v1_health, Health } from "../../gen/grpc/health/v1/health_pb.js";
import {
  file_sessiond_v1_session_service,
  SessionService,
} from "../../gen/sessiond/v1/session_service_pb.js";
import {
  file_sessiond_v1_store_service,
  StoreService,
} from "../../gen/sessiond/v1/store_service_pb.js";
import type { SessionStore } from "../store/index.js";
import type { ServerConfig } from "./config.js";
import {
  DEFAULT_GRPC_SERVER,
  DEFAULT_KEEPALIVE_MS,
  DEFAULT_KEEPALIVE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTION_AGE_GRACE_MS,
  DEFAULT_MAX_CONNECTION_AGE_MS,
} from "./defaults.js";
import { edgeInterceptor, shuttingDown } from "./edge.js";
import { grpcJsFront } from "./grpc/front.js";
import { routeNativeGrpc } from "./grpc/route.js";
import { connectAppend } from "./http/connect-append.js";
import { retireOldConnections } from "./http/connection-age.js";
import { withHttpPaths } from "./http/http-paths.js";
import { closeIdleConnections } from "./http/idle-connections.js";
import { InFlight } from "./http/in-flight.js";
import { pingOpenConnections } from "./http/keepalive.js";
import { plaintextPort } from "./http/plaintext-port.js";
import { withUiAssets } from "./http/ui-assets.js";
import { discardUnreadRest } from "./http/unread-rest.js";
import { startBlobSweep } from "./ops/blob-sweeper.js";
import { CallLog } from "./ops/call-log.js";
import { batchedLines, SERVER_LOG_SPACING_MS } from "./ops/log-batch.js";
import { isoNow, Logger } from "./ops/logger.js";
import { ServerMetrics } from "./ops/metrics.js";
import { Readiness } from "./ops/readiness.js";
import { startRetention } from "./ops/retention-sweeper.js";
import { usageMetricsOf } from "./ops/usage-metrics.js";
import { authInterceptor } from "./rpc/auth.js";
import type { ServiceDeps } from "./rpc/deps.js";
import { HealthStatus, registerHealth } from "./rpc/health.js";
import { registerReflection } from "./rpc/reflection.js";
import { appendCall, sessionService } from "./rpc/session-service.js";
import { storeService } from "./rpc/store-service.js";
import { WatchSlots } from "./rpc/watch-slots.js";
import { restateConnectRefusals } from "./wire/connect-refusals.js";

export interface RunningServer {
  /** Base URL clients use, e.g. http://127.0.0.1:50051. */
  readonly url: string;
  readonly port: number;
  /**
   * Graceful shutdown: stop accepting, finish in-flight unary calls (bounded
   * by shutdownGraceMs), end watch streams with UNAVAILABLE, close HTTP/2
   * sessions, close the store.
   */
  close(): Promise<void>;
}

/** The first byte of a TLS record carrying a handshake (a ClientHello). */
const TLS_HANDSHAKE = 0x16;
const BAD_REQUEST = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
/**
 * Receive windows of a server connection (HTTP/2 starts both at 64 KiB): an
 * Append or PutBlob of 1 MiB waited for sixteen WINDOW_UPDATE round trips.
 * Measured on loopback between two Node processes, a 1 MiB request took
 * 2.4 ms with the default windows and 0.8-1.3 ms with these. The connection
 * window bounds what one client may have in flight towards the server across
 * all its streams (the max message size bounds one request anyway).
 */
const STREAM_WINDOW_BYTES = 2 * 1024 * 1024;
const CONNECTION_WINDOW_BYTES = 16 * 1024 * 1024;

function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

/**
 * Serves StoreService and SessionService on one port for gRPC, gRPC-Web and
 * Connect, over HTTP/2 and HTTP/1.1 (cleartext: each connection by its first
 * bytes, plaintext-port.ts; TLS: by ALPN), with grpc.health.v1 and server
 * reflection so generic clients need no protos.
 */
export async function startServer(
  store: SessionStore,
  config: ServerConfig,
): Promise<RunningServer> {
  if (config.tokens.length === 0 && !config.insecure && !isLoopback(config.host)) {
    throw new Error(
      `refusing to listen on ${config.host} without auth tokens: pass --auth-tokens FILE, or --insecure to allow it`,
    );
  }
  // Node loads undici (its fetch, Headers, Request) on first use, ~35 ms on
  // this box; every request path builds Headers, so the first request of a
  // fresh server would wait for it. It is loaded at start instead.
  void new Headers();
  const logger = new Logger(
    config.logLevel ?? "info",
    config.log ??
      batchedLines((text) => process.stderr.write(text), undefined, SERVER_LOG_SPACING_MS),
  );
  // Process metrics come with the CLI's ServerMetrics: an embedding process has its own.
  const metrics =
    config.metrics === false
      ? undefined
      : (config.metrics ?? new ServerMetrics({ processMetrics: false }));
  const deps: ServiceDeps = {
    store,
    slots: new WatchSlots(config.limits.maxWatchersTotal, config.limits.maxWatchersPerSession),
    health: new HealthStatus(),
    config,
    countUsage: metrics && usageMetricsOf(metrics.registry, config.prices).count,
  };
  const inFlight = new InFlight();
  const shutdown = new AbortController();
  // Every call in flight (either server) listens on it: no leak past 10 listeners.
  setMaxListeners(0, shutdown.signal);
  metrics?.watch({
    watchStreams: () => deps.slots.open,
    sessionWatchers: () => deps.slots.unkeyed,
    topWatchers: (n) => deps.slots.top(n),
    engine: () => store.engine.stats?.() ?? {},
  });
  const readiness = new Readiness(store);
  const calls = new CallLog(logger, metrics?.call);
  // One set of routes and interceptors for both servers: connect-node
  // (Connect, gRPC-Web) and grpc-js (native gRPC, see grpc/front.ts).
  const routes = (router: ConnectRouter) => {
    router.service(StoreService, storeService(deps));
    router.service(SessionService, sessionService(deps));
    registerHealth(router, deps.health);
    registerReflection(router, {
      files: [
        file_sessiond_v1_store_service,
        file_sessiond_v1_session_service,
        file_grpc_health_v1_health,
      ],
      services: [StoreService.typeName, SessionService.typeName, Health.typeName],
    });
    restateConnectRefusals(router);
  };
  const interceptors = [
    edgeInterceptor(inFlight, config.limits.maxMessageBytes),
    authInterceptor(config.tokens),
  ];
  // 0 means "no limit" for us; for connect-node it would refuse every deadline.
  const maxTimeoutMs = config.limits.maxDeadlineMs > 0 ? config.limits.maxDeadlineMs : undefined;
  // The store's Append with its handler's checks, for the two direct paths (Connect, native gRPC).
  const storeAppend = appendCall(deps);
  const handler = connectNodeAdapter({
    routes,
    interceptors,
    contextValues: calls.contextValues,
    readMaxBytes: config.limits.maxMessageBytes,
    writeMaxBytes: config.limits.maxMessageBytes,
    maxTimeoutMs,
    shutdownSignal: shutdown.signal,
    // An empty list disables compression; undefined keeps connect's gzip + br.
    acceptCompression: config.compression ? undefined : [],
  });
  // Append over Connect on a path of its own (http/connect-append.ts), as
  // over native gRPC; not when responses may be compressed (connect-node's).
  const connectHandler =
    config.directAppend === false || config.compression
      ? handler
      : connectAppend(
          {
            append: storeAppend,
            inFlight,
            maxMessageBytes: config.limits.maxMessageBytes,
            maxTimeoutMs,
            recordOf: (req) => calls.recordOf(req),
          },
          handler,
        );
  const settings = {
    maxConcurrentStreams: config.limits.maxConcurrentStreams,
    initialWindowSize: STREAM_WINDOW_BYTES,
  };
  // GETs of the probes and /metrics (http-paths.ts) and under /ui/, the web
  // viewer's static files (ui-assets.ts); the rest is Connect.
  const logged = withHttpPaths(
    {
      readiness,
      metrics,
      metricsToken: config.metricsToken,
      metricsOpen: config.tokens.length === 0,
      logger,
    },
    withUiAssets(config.uiDir, calls.wrap(discardUnreadRest(connectHandler)), {
      shareLive: (token) => store.shares.live(token),
    }),
  );
  const server = config.tls
    ? http2.createSecureServer(
        {
          cert: config.tls.cert,
          key: config.tls.key,
          ca: config.tls.clientCa,
          requestCert: config.tls.clientCa !== undefined,
          rejectUnauthorized: config.tls.clientCa !== undefined,
          allowHTTP1: true,
          settings,
          // A peer silent before TLS is up is idle too.
          ...(config.idleTimeoutMs > 0 ? { handshakeTimeout: config.idleTimeoutMs } : {}),
        },
        logged,
      )
    : http2.createServer({ settings }, logged);
  // Cleartext HTTP/1.1 (browsers): its own server on the same port. A
  // connection is idle between requests only (a watch stream over HTTP/1.1
  // is a request in progress, never cut, whatever its heartbeats).
  const h1 = config.tls ? undefined : http.createServer(logged);
  if (h1 !== undefined) {
    h1.keepAliveTimeout = config.idleTimeoutMs;
    h1.timeout = 0;
    h1.on("clientError", (err: Error & { rawPacket?: Buffer }, socket) => {
      // A TLS client on the cleartext port (https:// by mistake): a plaintext
      // answer makes its TLS stack report "wrong version number", which
      // clients (the CLI too) explain; a bare close would read as a reset.
      if (err.rawPacket?.[0] === TLS_HANDSHAKE && socket.writable) socket.end(BAD_REQUEST);
      else socket.destroy();
    });
  }
  const listener: NetServer =
    h1 === undefined
      ? server
      : plaintextPort(server, h1, config.idleTimeoutMs, config.h2cSpeakFirstMs ?? 0);

  // Node 20's close() leaves open sessions alone: track them to end them on shutdown.
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s: http2.ServerHttp2Session) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
    // The connection window is not a setting: widened once the session is up.
    s.once("connect", () => s.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
    s.on("error", () => s.destroy());
  });
  closeIdleConnections(server, config.idleTimeoutMs);
  pingOpenConnections(server, {
    intervalMs: config.keepaliveMs ?? DEFAULT_KEEPALIVE_MS,
    timeoutMs: config.keepaliveTimeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS,
  });
  retireOldConnections(server, {
    maxAgeMs: config.maxConnectionAgeMs ?? DEFAULT_MAX_CONNECTION_AGE_MS,
    graceMs: config.maxConnectionAgeGraceMs ?? DEFAULT_MAX_CONNECTION_AGE_GRACE_MS,
  });
  // Sockets are tracked too: a closed session can leave its socket half-open
  // (FIN sent, the client never closes its side), and server.close() waits
  // for it; shutdown destroys what is left.
  const sockets = new Set<Socket>();
  listener.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // Garbage on the port must never take the process down.
  server.on("sessionError", () => {});
  server.on("clientError", () => {});

  // Native gRPC is answered by @grpc/grpc-js (several times cheaper per call),
  // per stream on the same connections; connect-node keeps Connect and gRPC-Web.
  if ((config.grpcServer ?? DEFAULT_GRPC_SERVER) === "grpc-js") {
    const front = grpcJsFront({
      routes,
      interceptors,
      shutdownSignal: shutdown.signal,
      maxMessageBytes: config.limits.maxMessageBytes,
      maxDeadlineMs: config.limits.maxDeadlineMs,
      calls,
      // Append, the call of every agent turn, on a path of its own (grpc/direct-append.ts).
      append:
        config.directAppend === false
          ? undefined
          : {
              append: storeAppend,
              inFlight,
              maxMessageBytes: config.limits.maxMessageBytes,
            },
    });
    if (front !== undefined) routeNativeGrpc(server, front);
    else {
      logger.write("warn", {
        time: isoNow(),
        event: "grpc-js unavailable",
        error:
          "@grpc/grpc-js has no per-stream entry (Server._streamHandler): native gRPC is served by connect-node",
      });
    }
  }

  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(config.port, config.host, () => {
      listener.off("error", reject);
      resolve();
    });
  });
  const port = (listener.address() as AddressInfo).port;
  const hostForUrl = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `${config.tls ? "https" : "http"}://${hostForUrl}:${port}`;

  const retention =
    config.retention === undefined
      ? undefined
      : startRetention(store, config.retention, (line) => logger.raw("info", line));
  const blobSweep = startBlobSweep(store, Math.max(60_000, store.limits.blobGraceMs), (line) =>
    logger.raw("info", line),
  );
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      readiness.drain();
      deps.health.shutdown();
      const sweepStopped = Promise.all([retention?.stop(), blobSweep.stop()]);
      if ((config.drainDelayMs ?? 0) > 0) await delay(config.drainDelayMs);
      const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
      // GOAWAY first: the calls open on a connection go on, a new stream on it
      // is refused (REFUSED_STREAM, which clients retry elsewhere). Before, a
      // watch reopened at once (as resumable watches do on the UNAVAILABLE
      // below) went out on the draining server's connection, until the
      // connection was closed or destroyed under it; a connect-node client can
      // leave a stream cut that way pending for good (connectrpc/connect-es#1678,
      // the likely cause of a T9 watcher silent for 42 s).
      for (const s of sessions) s.close();
      shutdown.abort(shuttingDown());
      await inFlight.drained(config.shutdownGraceMs);
      h1?.closeIdleConnections();
      const forced = setTimeout(() => {
        for (const s of sessions) s.destroy();
        for (const s of sockets) s.destroy();
      }, 1000);
      await stopped;
      clearTimeout(forced);
      await sweepStopped;
      await store.close();
    })();
    return closing;
  };
  return { url, port, close };
}
