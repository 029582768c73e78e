/**
 * T6: the client connections the hostile load runs on.
 *
 * Node's HTTP/2 layer (nghttp2's rapid-reset protection, CVE-2023-44487)
 * answers a connection that resets more than 1000 streams in a burst (then
 * 33 per second) with GOAWAY(INTERNAL_ERROR), and every call still in flight
 * on it fails. Node 20 has no option to change that budget. The shapes that
 * reset their streams (Shape.isolate "resets": 1–3 ms client deadlines,
 * uploads the server stops reading) therefore run on a lane of their own
 * whose connections are renewed after RESETS_PER_CONNECTION requests (each
 * resets at most one stream), half of nghttp2's burst. Oversize typed
 * uploads ("half-open") leave their stream half-open and spoil a connection
 * after ~90: they share that lane, at most HALF_OPEN_PER_CONNECTION per
 * connection. Every other shape runs on the ordinary lane, one connection
 * for the whole phase, which must never see a GOAWAY.
 *
 * Server-streaming calls of the typed clients reset their streams too, in
 * connect-node's client (2.1): a stream the caller stops reading is closed
 * with CANCEL, and one that ends with an error status with INTERNAL_ERROR
 * (its h2Request closes the stream when the trailers' error reaches it,
 * before Node marks the stream closed; seen: ~1,400 such resets from the
 * watch shapes' errors on the ordinary connection within 20 s, which took it
 * past the budget on a fast box). So every lane connection sends its typed
 * streaming calls over connections of their own, renewed after
 * RESETS_PER_CONNECTION streams (StreamConnections); unary calls, health
 * and raw requests stay on the lane connection itself.
 *
 * A lane connection is one HTTP/2 connection for every typed client (gRPC,
 * Connect, health, the auth phase's token variants: tokens are per-request
 * headers) plus one raw HTTP/2 session for hand-made requests. The typed
 * clients are built like createSessiondClient({ retry: false }) (ids
 * interceptor, bearer token) but on a session manager we can watch, so a
 * GOAWAY is seen where it arrives instead of guessed from error messages.
 */
import http2 from "node:http2";
import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { SessionService } from "../../../gen/sessiond/v1/session_service_pb.js";
import { StoreService } from "../../../gen/sessiond/v1/store_service_pb.js";
import { idsInterceptor } from "../../../src/client/ids-interceptor.js";
import type { SessiondClient } from "../../../src/client/index.js";
import type { Ctx } from "./hostile-shapes.js";

/** Requests per connection on the resetting lane: half of nghttp2's burst of 1000. */
export const RESETS_PER_CONNECTION = 500;
/** Oversize typed uploads per connection: Node refuses new streams after ~90 half-open ones. */
export const HALF_OPEN_PER_CONNECTION = 40;

/** The GOAWAY error code nghttp2's rapid-reset protection sends. */
export const RAPID_RESET_GOAWAY = http2.constants.NGHTTP2_INTERNAL_ERROR;

/**
 * How a call fails when its connection is closed under it by a GOAWAY:
 * connect-node's INTERNAL / UNAVAILABLE wrapping Node's session error, or a
 * raw stream's error. Only tolerated on the resetting lane, and only after
 * that very connection received the rapid-reset GOAWAY.
 */
const GOAWAY_CODES = new Set(["Internal", "Unavailable", "Canceled", "StreamError", "ClientError"]);
const GOAWAY_CAUSE =
  /GOAWAY|error code 2\b|INTERNAL_ERROR|ERR_HTTP2_(SESSION_ERROR|GOAWAY_SESSION|INVALID_SESSION|STREAM_CANCEL|STREAM_ERROR)|session closed|stream closed/i;

export function failedByGoaway(code: string, message: string): boolean {
  return GOAWAY_CODES.has(code) && GOAWAY_CAUSE.test(message);
}

/** Reports every HTTP/2 session a request goes out on. */
class WatchedManager extends Http2SessionManager {
  /** Streams not closed yet (an oversize upload's stays open: see Shape.isolate). */
  readonly open = new Set<http2.ClientHttp2Stream>();
  /** The sessions its streams went out on. */
  readonly sessions = new Set<http2.ClientHttp2Session>();

  constructor(
    url: string,
    private readonly seen: (s: http2.ClientHttp2Session) => void,
  ) {
    super(url);
  }

  override async request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream> {
    const stream = await super.request(method, path, headers, options);
    this.seen(stream.session as http2.ClientHttp2Session);
    this.sessions.add(stream.session as http2.ClientHttp2Session);
    this.open.add(stream);
    stream.once("close", () => this.open.delete(stream));
    return stream;
  }
}

/**
 * The session manager of a lane connection's streaming calls: each call
 * goes out on a WatchedManager that is replaced after `renewAfter` calls
 * (the old one is closed once its streams are done). It offers what
 * connect-node's client uses of a session manager.
 */
class StreamConnections {
  private current: WatchedManager;
  private begun = 0;
  private readonly retired: WatchedManager[] = [];

  constructor(
    private readonly url: string,
    private readonly seen: (s: http2.ClientHttp2Session) => void,
    private readonly renewAfter: number,
  ) {
    this.current = new WatchedManager(url, seen);
  }

  get authority(): string {
    return this.current.authority;
  }

  request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream> {
    if (this.begun >= this.renewAfter) {
      this.retire(this.current);
      this.current = new WatchedManager(this.url, this.seen);
      this.begun = 0;
    }
    this.begun++;
    return this.current.request(method, path, headers, options);
  }

  notifyResponseByteRead(stream: http2.ClientHttp2Stream): void {
    this.current.notifyResponseByteRead(stream);
    for (const m of this.retired) m.notifyResponseByteRead(stream);
  }

  /** Closes every connection it made (see LaneConnection.close). */
  close(): void {
    for (const m of [...this.retired, this.current]) closeManager(m);
  }

  private retire(m: WatchedManager): void {
    this.retired.push(m);
    const closeWhenDone = () => {
      if (m.open.size > 0) {
        setTimeout(closeWhenDone, 100).unref();
        return;
      }
      closeManager(m);
      this.retired.splice(this.retired.indexOf(m), 1);
    };
    closeWhenDone();
  }
}

/** Cancels a manager's open streams, then closes its connection gracefully. */
function closeManager(m: WatchedManager): void {
  for (const st of m.open) st.close(http2.constants.NGHTTP2_CANCEL);
  for (const s of m.sessions) if (!s.closed && !s.destroyed) s.close();
}

/**
 * A transport whose unary calls go through `unary` and whose streaming
 * calls through `streaming` (same protocol and options, another session
 * manager).
 */
function splitTransport(unary: Transport, streaming: Transport): Transport {
  return {
    unary: (...args) => unary.unary(...args),
    stream: (...args) => streaming.stream(...args),
  };
}

function bearer(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

export interface LaneTokens {
  /** The token every typed client sends (auth phase). */
  readonly token?: string;
  /** Auth phase: a wrong token, and the token of the other workspace only. */
  readonly wrong?: string;
  readonly onlyOther?: string;
}

/** One connection of a lane (typed clients) plus its raw HTTP/2 session. */
export class LaneConnection {
  readonly ctx: Ctx;
  /** Requests begun on it (each resets at most one stream). */
  begun = 0;
  /** Of which oversize typed uploads (each may leave its stream half-open). */
  halfOpen = 0;
  inFlight = 0;
  /** Non-zero GOAWAY error codes received on its sessions. */
  readonly goaways: number[] = [];
  private readonly sessions = new Set<http2.ClientHttp2Session>();
  private readonly manager: WatchedManager;
  private readonly streams: StreamConnections;
  private rawSession: http2.ClientHttp2Session | undefined;
  private closed = false;

  constructor(
    readonly lane: Lane,
    url: string,
    port: number,
    tokens: LaneTokens,
  ) {
    const watch = (s: http2.ClientHttp2Session) => {
      if (this.sessions.has(s)) return;
      this.sessions.add(s);
      s.on("goaway", (code: number) => {
        if (code === 0) return;
        if (this.goaways.length === 0) lane.goneAway(code);
        this.goaways.push(code);
      });
    };
    this.manager = new WatchedManager(url, watch);
    this.streams = new StreamConnections(url, watch, RESETS_PER_CONNECTION);
    const common = { baseUrl: url, httpVersion: "2" as const, sessionManager: this.manager };
    const client = (token: string | undefined, protocol: "grpc" | "connect" = "grpc") => {
      const interceptors: Interceptor[] = [idsInterceptor()];
      if (token !== undefined) interceptors.push(bearer(token));
      const options = { ...common, interceptors, defaultTimeoutMs: 15_000 };
      const streaming = {
        ...options,
        sessionManager: this.streams as unknown as Http2SessionManager,
      };
      const transport =
        protocol === "grpc"
          ? splitTransport(createGrpcTransport(options), createGrpcTransport(streaming))
          : splitTransport(createConnectTransport(options), createConnectTransport(streaming));
      const c: SessiondClient = {
        store: createClient(StoreService, transport),
        session: createClient(SessionService, transport),
        transport,
      };
      return c;
    };
    const health: Client<typeof Health> = createClient(Health, createGrpcTransport(common));
    this.ctx = {
      client: client(tokens.token),
      connect: client(tokens.token, "connect"),
      raw: () => {
        if (this.rawSession === undefined || this.rawSession.closed || this.rawSession.destroyed) {
          this.rawSession = http2.connect(url);
          this.rawSession.on("error", () => {});
          watch(this.rawSession);
        }
        return this.rawSession;
      },
      port,
      health,
      auth:
        tokens.token === undefined
          ? undefined
          : {
              none: client(undefined),
              wrong: client(tokens.wrong),
              onlyOther: client(tokens.onlyOther),
              allToken: tokens.token,
            },
    };
  }

  /** True once a session of this connection received a GOAWAY with an error code. */
  get goneAway(): boolean {
    return this.goaways.length > 0;
  }

  /**
   * Closes it (called when nothing is in flight on it): first cancels the
   * streams oversize uploads left half-open (a graceful close waits for every
   * stream, and those never end, so the connection and the server's buffers
   * for it would live on), then closes its sessions gracefully. Destroying
   * them instead crashed the client process ("corrupted size vs. prev_size")
   * on Node 20.20.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const st of this.manager.open) st.close(http2.constants.NGHTTP2_CANCEL);
    this.streams.close();
    for (const s of this.sessions) if (!s.closed && !s.destroyed) s.close();
  }
}

export interface LaneStats {
  /** Connections opened. */
  connections: number;
  requests: number;
  /** Streams the raw client knows it reset (typed calls cannot tell). */
  rawResets: number;
  /** Connections that received a GOAWAY with an error code, by code. */
  goaways: Map<number, number>;
  /** Calls that failed because their connection received such a GOAWAY. */
  failedByGoaway: number;
}

/**
 * A lane: the connection its requests go out on, renewed after
 * `renewAfter` requests or once it received a GOAWAY; a replaced connection
 * is closed when its last call settles.
 */
export class Lane {
  readonly stats: LaneStats = {
    connections: 0,
    requests: 0,
    rawResets: 0,
    goaways: new Map(),
    failedByGoaway: 0,
  };
  private current: LaneConnection | undefined;

  constructor(
    readonly name: string,
    private readonly url: string,
    private readonly port: number,
    private readonly tokens: LaneTokens,
    readonly renewAfter: number,
  ) {}

  /** The connection for the next request (counted as begun on it). */
  acquire(halfOpen = false): LaneConnection {
    let c = this.current;
    if (
      c === undefined ||
      c.begun >= this.renewAfter ||
      c.halfOpen >= HALF_OPEN_PER_CONNECTION ||
      c.goneAway
    ) {
      if (c !== undefined && c.inFlight === 0) c.close();
      c = new LaneConnection(this, this.url, this.port, this.tokens);
      this.current = c;
      this.stats.connections++;
    }
    c.begun++;
    if (halfOpen) c.halfOpen++;
    c.inFlight++;
    this.stats.requests++;
    return c;
  }

  release(c: LaneConnection): void {
    c.inFlight--;
    if (c !== this.current && c.inFlight === 0) c.close();
  }

  /** Called once per connection on its first GOAWAY with an error code. */
  goneAway(code: number): void {
    this.stats.goaways.set(code, (this.stats.goaways.get(code) ?? 0) + 1);
  }

  /** Connections closed by the rapid-reset protection (GOAWAY INTERNAL_ERROR). */
  get rapidResetGoaways(): number {
    return this.stats.goaways.get(RAPID_RESET_GOAWAY) ?? 0;
  }

  /** GOAWAYs with any other error code. */
  get otherGoaways(): number {
    let n = 0;
    for (const [code, k] of this.stats.goaways) if (code !== RAPID_RESET_GOAWAY) n += k;
    return n;
  }

  close(): void {
    this.current?.close();
    this.current = undefined;
  }
}
