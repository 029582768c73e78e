import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import type http from "node:http";
import type http2 from "node:http2";
import { extname, join } from "node:path";

/** A request handler of either server (HTTP/1.1 or the HTTP/2 compatibility API). */
export type RequestHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

/** Where the viewer lives on the port: every path under it is ours, never Connect's. */
const UI_PREFIX = "/ui/";

/**
 * Share links: /share/<token> is the viewer's page (it reads the share with
 * ReadShare, which needs no auth token), and /share/<asset> the viewer's
 * files, which the page names relative to itself. The page is the same
 * for every token (ReadShare fills it); its HTTP status says whether the
 * share may be read now (`shareLive`): 404 after a revoke or an expiry, so
 * that a link checker or a proxy sees what the page draws.
 */
const SHARE_PREFIX = "/share/";
const SHARE_TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The viewer's policy: its own scripts, styles and API only (no inline script,
 * no eval, no CDN); images only from blob: URLs the app makes of image parts.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
  /** Names with a content hash (esbuild's [name]-[hash]) never change: cache them for good. */
  readonly immutable: boolean;
}

/**
 * Reads the built viewer (scripts/build-ui.mjs) once: a handful of small
 * files, served from memory. A missing folder (running from source without
 * a build) leaves the viewer out with a 404 that says how to build it.
 */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return assets;
  }
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    const body = readFileSync(join(dir, name));
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    assets.set(name, { body, type, etag, immutable: /-[A-Z0-9]{8}\.(js|css)$/.test(name) });
  }
  return assets;
}

export interface UiAssetsOptions {
  /**
   * Whether a share token may be read now; unset: every token-shaped page
   * answers 200. A check that fails answers 200 too (the page then shows
   * what ReadShare says).
   */
  shareLive?: ((token: string) => Promise<boolean>) | undefined;
}

/**
 * Serves the web viewer at /ui/ on the API's own port, in front of `next`
 * (Connect): a GET under /ui/ never reaches the RPC handlers, anything else
 * goes on untouched. Written by hand because it is a dozen static files with
 * fixed headers; a static-file library would add more than it saves.
 */
export function withUiAssets(
  dir: string | undefined,
  next: RequestHandler,
  opts: UiAssetsOptions = {},
): RequestHandler {
  const assets = dir === undefined ? new Map<string, Asset>() : loadAssets(dir);
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0] as string;
    const share = path.startsWith(SHARE_PREFIX);
    if (path !== "/ui" && !path.startsWith(UI_PREFIX) && !share) return next(req, res);
    const r = res as http.ServerResponse;
    r.setHeader("X-Content-Type-Options", "nosniff");
    r.setHeader("Referrer-Policy", "no-referrer");
    if (req.method !== "GET" && req.method !== "HEAD") {
      r.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain" });
      r.end("method not allowed\n");
      return;
    }
    if (path === "/ui") {
      r.writeHead(308, { Location: UI_PREFIX });
      r.end();
      return;
    }
    const name = share
      ? shareName(path, assets)
      : path === UI_PREFIX
        ? "index.html"
        : path.slice(UI_PREFIX.length);
    const asset = name === undefined ? undefined : assets.get(name);
    if (asset === undefined) {
      const hint = assets.size === 0 ? " (the viewer is not built: npm run build)" : "";
      r.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
      r.end(`not found${hint}\n`);
      return;
    }
    r.setHeader("Content-Security-Policy", CSP);
    if (share && name === "index.html") {
      // A page named by a secret: kept by no cache, indexed by no robot.
      r.setHeader("Cache-Control", "no-store");
      r.setHeader("X-Robots-Tag", "noindex, nofollow");
      const send = (status: number) => {
        r.writeHead(status, { "Content-Type": asset.type, "Content-Length": asset.body.length });
        r.end(req.method === "HEAD" ? undefined : asset.body);
      };
      if (opts.shareLive === undefined) return send(200);
      const token = path.slice(SHARE_PREFIX.length).replace(/\/$/, "");
      opts.shareLive(token).then(
        (live) => send(live ? 200 : 404),
        () => send(200),
      );
      return;
    }
    r.setHeader("ETag", asset.etag);
    r.setHeader(
      "Cache-Control",
      asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    );
    if (req.headers["if-none-match"] === asset.etag) {
      r.writeHead(304);
      r.end();
      return;
    }
    r.writeHead(200, { "Content-Type": asset.type, "Content-Length": asset.body.length });
    r.end(req.method === "HEAD" ? undefined : asset.body);
  };
}

/** What /share/<rest> serves: a viewer file by its name, else the page for a token-shaped rest. */
function shareName(path: string, assets: ReadonlyMap<string, Asset>): string | undefined {
  const rest = path.slice(SHARE_PREFIX.length).replace(/\/$/, "");
  if (rest !== "index.html" && assets.has(rest)) return rest;
  return SHARE_TOKEN.test(rest) ? "index.html" : undefined;
}
