/**
 * sessiond/web, the browser client, against a real server, on its plaintext
 * port (which tells HTTP/1.1 from HTTP/2 by a connection's first bytes) and
 * over TLS (ALPN): the global fetch of a separate Node process (HTTP/1.1
 * only, as a browser speaks to a port that is not h2) carries Connect and
 * gRPC-Web, binary and JSON. Unary calls, a server stream (watch), builders
 * and the transcript, the bearer token, a fork. (A real browser runs the web
 * viewer's tests, issue 18.)
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCertificates, type TestCertificates } from "../harness/certs.js";
import { REPO, type SessiondProcess, startSessiond } from "../harness/server.js";

const run = promisify(execFile);
const SCRIPT = join(REPO, "test/integration/support/web-client-run.ts");
const dir = mkdtempSync(join(tmpdir(), "sessiond-web-"));

describe("sessiond/web over fetch (HTTP/1.1), plaintext and TLS", () => {
  let tlsServer: SessiondProcess;
  let plainServer: SessiondProcess;
  let certs: TestCertificates;

  beforeAll(async () => {
    certs = makeCertificates(dir);
    const tokens = join(dir, "tokens.json");
    writeFileSync(
      tokens,
      JSON.stringify({ tokens: [{ token: "t-web-0123456789abcdef", workspaces: ["*"] }] }),
    );
    [tlsServer, plainServer] = await Promise.all([
      startSessiond({
        args: [
          "--tls-cert",
          certs.serverCert,
          "--tls-key",
          certs.serverKey,
          "--auth-tokens",
          tokens,
        ],
      }),
      startSessiond({ args: ["--auth-tokens", tokens] }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([tlsServer?.stop(), plainServer?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  async function webClient(protocol: string, json: boolean, baseUrl: string) {
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", SCRIPT, baseUrl, protocol, json ? "1" : "0"],
      { cwd: REPO, timeout: 30_000, env: { ...process.env, NODE_EXTRA_CA_CERTS: certs.ca } },
    );
    return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
  }

  for (const [port, protocol, json] of [
    ["plaintext", "connect", false],
    ["plaintext", "connect", true],
    ["plaintext", "grpc-web", false],
    ["TLS", "connect", false],
    ["TLS", "connect", true],
    ["TLS", "grpc-web", false],
  ] as const) {
    it(`${port}, ${protocol}${json ? " (JSON)" : ""}: create, append built entries, state, watch, fork`, {
      timeout: 40_000,
    }, async () => {
      const server = port === "TLS" ? tlsServer : plainServer;
      expect(server.url.startsWith(port === "TLS" ? "https://" : "http://")).toBe(true);
      const seen = await webClient(protocol, json, server.url);
      expect(seen.headSeq).toBe("4");
      expect(seen.lines).toEqual(["user:weather?:", "assistant:checking:weather", "tool:12°C:"]);
      // Ids were assigned by the client before sending: 16 hex characters each.
      for (const id of seen.ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
      expect(seen.watched).toEqual(["2", "3", "4"]);
      expect(seen.forked).toBe(true);
      expect(seen.id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/);
    });
  }

  it("the server sees the token: a wrong one is UNAUTHENTICATED", { timeout: 40_000 }, async () => {
    const server = plainServer;
    const err = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        `import("${join(REPO, "src/web/index.ts")}").then(async (w) => {
          const c = w.createSessiondClient({ baseUrl: "${server.url}", token: "nope", retry: false });
          try { await c.store.listSessions({}); console.log("ok"); }
          catch (e) { console.log("code", e.code, e.rawMessage); }
        })`,
      ],
      { cwd: REPO, timeout: 30_000, env: { ...process.env, NODE_EXTRA_CA_CERTS: certs.ca } },
    );
    // 16 is Code.Unauthenticated.
    expect(err.stdout).toMatch(/^code 16 /);
  });
});
