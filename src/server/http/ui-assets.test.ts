import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RequestHandler, type UiAssetsOptions, withUiAssets } from "./ui-assets.js";

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** The viewer's handler in front of a stand-in for Connect that answers "connect". */
async function serve(dir: string | undefined, opts: UiAssetsOptions = {}): Promise<string> {
  const next: RequestHandler = (_req, res) => {
    (res as http.ServerResponse).end("connect");
  };
  const server = http.createServer(withUiAssets(dir, next, opts) as http.RequestListener);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A GET of `path` exactly as given. */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    http
      .get(`${base}${path}`.replace(/\/ui\/.*$/, ""), { path }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c.toString();
        });
        res.on("end", () => done({ status: res.statusCode ?? 0, body }));
      })
      .on("error", fail);
  });
}

function builtUi(): string {
  const dir = mkdtempSync(join(tmpdir(), "sessiond-ui-test-"));
  writeFileSync(join(dir, "index.html"), '<script type="module" src="main-ABCDEFGH.js"></script>');
  writeFileSync(join(dir, "main-ABCDEFGH.js"), "export {};");
  writeFileSync(join(dir, "app-ABCDEFGH.css"), "body{}");
  writeFileSync(join(dir, "notes.txt"), "not an asset type");
  mkdirSync(join(dir, "sub"));
  return dir;
}

describe("the web viewer's files at /ui/", () => {
  it("serves index.html at /ui/ with a strict CSP, revalidated by its ETag", async () => {
    const url = await serve(builtUi());
    const res = await fetch(`${url}/ui/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const etag = res.headers.get("etag") as string;
    const again = await fetch(`${url}/ui/`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
  });

  it("serves hashed scripts and styles with their types, cached for good", async () => {
    const url = await serve(builtUi());
    const js = await fetch(`${url}/ui/main-ABCDEFGH.js`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await js.text()).toBe("export {};");
    const css = await fetch(`${url}/ui/app-ABCDEFGH.css`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
  });

  it("answers 404 for anything else under /ui/, never a file outside the folder", async () => {
    const url = await serve(builtUi());
    // Sent as written (fetch would resolve the dots before sending).
    for (const path of [
      "/ui/nope.js",
      "/ui/notes.txt",
      "/ui/sub",
      "/ui/../package.json",
      "/ui/%2e%2e/package.json",
    ]) {
      const res = await rawGet(url, path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).not.toContain("connect");
    }
  });

  it("refuses other methods, redirects /ui to /ui/, and hands everything else to Connect", async () => {
    const url = await serve(builtUi());
    expect((await fetch(`${url}/ui/`, { method: "POST" })).status).toBe(405);
    const redirect = await fetch(`${url}/ui`, { redirect: "manual" });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get("location")).toBe("/ui/");
    for (const path of ["/sessiond.v1.StoreService/ListSessions", "/uix", "/"]) {
      expect(await (await fetch(`${url}${path}`, { method: "POST" })).text(), path).toBe("connect");
    }
  });

  it("serves over HTTP/2 too (TLS ports answer browsers with h2)", async () => {
    const server = http2.createServer(withUiAssets(builtUi(), () => {}));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const headers = await new Promise<http2.IncomingHttpHeaders>((done, fail) => {
        const req = client.request({ ":path": "/ui/main-ABCDEFGH.js" });
        let got: http2.IncomingHttpHeaders = {};
        req.on("response", (h) => {
          got = h;
        });
        req.on("end", () => done(got));
        req.on("error", fail);
        req.resume();
        req.end();
      });
      expect(headers[":status"]).toBe(200);
      expect(headers["content-type"]).toBe("text/javascript; charset=utf-8");
      expect(String(headers["content-security-policy"])).toContain("default-src 'self'");
    } finally {
      client.close();
      await new Promise((r) => server.close(r));
    }
  });

  it("says how to build the viewer when it is not built", async () => {
    const url = await serve(join(tmpdir(), "sessiond-no-such-ui-dir"));
    const res = await fetch(`${url}/ui/`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("npm run build");
    expect((await fetch(`${url}/ui/`, { method: "HEAD" })).status).toBe(404);
  });
});

describe("share links at /share/<token>", () => {
  const token = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde";

  it("serves the viewer's page for a token, uncached and unindexed, with the viewer's CSP", async () => {
    const url = await serve(builtUi());
    const res = await fetch(`${url}/share/${token}`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("main-ABCDEFGH.js");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-robots-tag")).toContain("noindex");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(res.headers.get("etag")).toBeNull();
  });

  it("answers the page with 404 for a share that may not be read now, 200 for one that may", async () => {
    const asked: string[] = [];
    const url = await serve(builtUi(), {
      shareLive: async (t) => {
        asked.push(t);
        if (t.startsWith("Broken")) throw new Error("storage down");
        return t === token;
      },
    });
    const live = await fetch(`${url}/share/${token}`);
    expect(live.status).toBe(200);
    expect(await live.text()).toContain("main-ABCDEFGH.js");
    const gone = `Revoked${token.slice(7)}`;
    for (const method of ["GET", "HEAD"]) {
      const res = await fetch(`${url}/share/${gone}`, { method });
      expect(res.status, method).toBe(404);
      // The same page, which draws the 404 with what ReadShare says, uncached.
      expect(res.headers.get("cache-control"), method).toBe("no-store");
      expect(res.headers.get("content-security-policy"), method).toContain("script-src 'self'");
    }
    expect(await (await fetch(`${url}/share/${gone}`)).text()).toContain("main-ABCDEFGH.js");
    // A check that fails leaves it to the page (ReadShare's own answer).
    expect((await fetch(`${url}/share/Broken${token.slice(6)}`)).status).toBe(200);
    // The viewer's files are not share tokens.
    expect((await fetch(`${url}/share/main-ABCDEFGH.js`)).status).toBe(200);
    expect(asked).not.toContain("main-ABCDEFGH.js");
  });

  it("serves the viewer's files the page names relative to /share/", async () => {
    const url = await serve(builtUi());
    const js = await fetch(`${url}/share/main-ABCDEFGH.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await js.text()).toBe("export {};");
  });

  it("404s what is neither a file nor token-shaped, and never hands /share/ to Connect", async () => {
    const url = await serve(builtUi());
    for (const path of ["/share/", "/share/a/b", "/share/notes.txt", "/share/%2e%2e"]) {
      const res = await rawGet(url, path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).not.toBe("connect");
    }
    expect((await fetch(`${url}/share/${token}`, { method: "POST" })).status).toBe(405);
  });
});
