/**
 * Who may read /metrics: anyone on a server without API tokens (it listens
 * on loopback, or was told --insecure), only the holder of the metrics
 * token on a server with API tokens (an API token is not enough), nobody
 * with --metrics off. /livez and /readyz never ask for a token. Over
 * HTTP/1.1 and HTTP/2 alike, on the API port.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { removeDataDir } from "../harness/server.js";
import { getH1, getH2 } from "../support/prometheus.js";
import { EXTERNAL, type SessiondProcess, skipExternal, startSessiond } from "./support/server.js";

if (EXTERNAL) skipExternal("/metrics access (needs servers with flags of their own)");

const GETS = [
  ["HTTP/1.1", getH1],
  ["HTTP/2", getH2],
] as const;

let server: SessiondProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
  if (dir) rmSync(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
});

function tokenFiles(): { tokens: string; metrics: string } {
  dir = mkdtempSync(join(tmpdir(), "sessiond-metrics-"));
  const tokens = join(dir, "tokens.json");
  writeFileSync(
    tokens,
    JSON.stringify({ tokens: [{ token: "api-token-0123456789", workspaces: ["*"] }] }),
  );
  const metrics = join(dir, "metrics-token");
  writeFileSync(metrics, "scrape-token-0123456789\n");
  return { tokens, metrics };
}

describe.skipIf(EXTERNAL)("/metrics", () => {
  it("is open in the Prometheus text format on a server without tokens", async () => {
    server = await startSessiond();
    for (const [, get] of GETS) {
      const res = await get(server.url, "/metrics");
      expect(res.status).toBe(200);
      expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.body).toContain("# TYPE sessiond_requests_total counter");
    }
  });

  it("wants the metrics token, not an API token, on a server with tokens", async () => {
    const files = tokenFiles();
    server = await startSessiond({
      args: ["--auth-tokens", files.tokens, "--metrics-token-file", files.metrics],
    });
    for (const [, get] of GETS) {
      expect((await get(server.url, "/metrics")).status).toBe(401);
      const api = await get(server.url, "/metrics", {
        authorization: "Bearer api-token-0123456789",
      });
      expect(api.status).toBe(401);
      const ok = await get(server.url, "/metrics", {
        authorization: "Bearer scrape-token-0123456789",
      });
      expect(ok.status).toBe(200);
      expect((await get(server.url, "/livez")).status).toBe(200);
      expect((await get(server.url, "/readyz")).status).toBe(200);
    }
  });

  it("is refused on a server with tokens and no metrics token", async () => {
    const files = tokenFiles();
    server = await startSessiond({ args: ["--auth-tokens", files.tokens] });
    for (const [, get] of GETS) {
      const res = await get(server.url, "/metrics", {
        authorization: "Bearer api-token-0123456789",
      });
      expect(res.status).toBe(403);
      expect(res.body).toContain("--metrics-token-file");
    }
  });

  it("is 404 with --metrics off, while the probes answer", async () => {
    server = await startSessiond({ args: ["--metrics", "off"] });
    for (const [, get] of GETS) {
      expect((await get(server.url, "/metrics")).status).toBe(404);
      expect((await get(server.url, "/livez")).status).toBe(200);
    }
  });
});
