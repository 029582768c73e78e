import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { isoNow, type Logger } from "../ops/logger.js";
import type { ServerMetrics } from "../ops/metrics.js";
import type { Readiness } from "../ops/readiness.js";

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;
type Handler = (req: Request, res: Response) => void;

/** What the plain HTTP paths answer from. */
export interface HttpPathsOptions {
  readonly readiness: Readiness;
  /** Undefined when metrics are off (`--metrics off`): /metrics is then 404. */
  readonly metrics: ServerMetrics | undefined;
  /**
   * When set, /metrics wants `Authorization: Bearer <this>`: a server with
   * API tokens keeps its metrics (method mix, session counts) from its API's
   * users, and a scraper gets a token that can do nothing else.
   */
  readonly metricsToken: string | undefined;
  /**
   * Without a metrics token, whether /metrics is open: yes on a server
   * without API tokens (loopback or --insecure), no (403) on one with them.
   */
  readonly metricsOpen: boolean;
  readonly logger: Logger;
}

/**
 * The paths people and an operator's tools GET on the API port, over
 * HTTP/1.1 and HTTP/2 alike: `/` (someone who opened the server's URL: a
 * redirect to the web viewer, with a body that says what the port serves),
 * `/livez` (the process serves: always 200 while it runs), `/readyz` (200,
 * or 503 with the reason: readiness.ts) and `/metrics` (Prometheus text).
 * Every other request goes on to `next` (the RPCs). Probes and scrapes are
 * logged at `debug` only: they come every few seconds.
 */
export function withHttpPaths(options: HttpPathsOptions, next: Handler): Handler {
  return (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (
      (req.method !== "GET" && req.method !== "HEAD") ||
      (path !== "/" && path !== "/livez" && path !== "/readyz" && path !== "/metrics")
    ) {
      next(req, res);
      return;
    }
    const start = performance.now();
    void answer(options, path, req).then(({ status, type, body, location }) => {
      // The prober may have gone while storage was probed.
      if (res.destroyed) return;
      res.writeHead(status, {
        "content-type": type,
        "cache-control": "no-store",
        ...(location === undefined ? {} : { location }),
      });
      if (req.method === "HEAD") res.end();
      else res.end(body);
      options.logger.write("debug", {
        time: isoNow(),
        method: `${req.method} ${path}`,
        code: `HTTP ${status}`,
        ms: Math.round((performance.now() - start) * 100) / 100,
      });
    });
  };
}

const TEXT = "text/plain; charset=utf-8";

/** What `/` says to a person who opened the server's URL (or curled it). */
const ROOT = `sessiond: the web viewer is at /ui/
The API is on this port: gRPC, Connect and gRPC-Web, over HTTP/2 and HTTP/1.1,
at /sessiond.v1.StoreService/<Method> and /sessiond.v1.SessionService/<Method>
(grpc.health.v1 and server reflection too: grpcurl and buf curl need no protos).
Probes: /livez, /readyz. Metrics: /metrics.
`;

async function answer(
  o: HttpPathsOptions,
  path: string,
  req: Request,
): Promise<{ status: number; type: string; body: string; location?: string }> {
  if (path === "/") return { status: 302, type: TEXT, body: ROOT, location: "/ui/" };
  if (path === "/livez") return { status: 200, type: TEXT, body: "ok\n" };
  if (path === "/readyz") {
    const why = await o.readiness.check();
    return why === undefined
      ? { status: 200, type: TEXT, body: "ok\n" }
      : { status: 503, type: TEXT, body: `not ready: ${why}\n` };
  }
  if (o.metrics === undefined) return { status: 404, type: TEXT, body: "metrics are off\n" };
  if (o.metricsToken !== undefined && !bearerIs(req, o.metricsToken)) {
    return { status: 401, type: TEXT, body: "metrics need the metrics token\n" };
  }
  if (o.metricsToken === undefined && !o.metricsOpen) {
    return {
      status: 403,
      type: TEXT,
      body: "a server with --auth-tokens serves metrics only with --metrics-token-file\n",
    };
  }
  try {
    return {
      status: 200,
      type: o.metrics.registry.contentType,
      body: await o.metrics.registry.metrics(),
    };
  } catch {
    return { status: 500, type: TEXT, body: "metrics failed\n" };
  }
}

function bearerIs(req: Request, token: string): boolean {
  const header = req.headers.authorization;
  const got = Buffer.from(typeof header === "string" ? header : "");
  const want = Buffer.from(`Bearer ${token}`);
  return got.length === want.length && timingSafeEqual(got, want);
}
