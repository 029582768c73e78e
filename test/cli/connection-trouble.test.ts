import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/** What the CLI says when it cannot talk to the server. */

let server: SessiondProcess;

beforeAll(async () => {
  server = await startSessiond();
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

/** A port on 127.0.0.1 that nothing listens on (just released by the kernel). */
function deadPort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

describe("sessiond connection trouble", () => {
  it("tail -f against a dead server keeps saying it is still reconnecting, with the attempt count", async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    const tail = startCli(["tail", "-f", "some-session", "--server", url]);
    try {
      const still = new RegExp(
        `still reconnecting to ${url.replace(/\./g, "\\.")} \\(attempt (\\d+), last error: .*\\(unavailable\\)\\)`,
      );
      const m = await tail.waitForStderr(still, 50_000);
      expect(Number(m[1])).toBeGreaterThan(1);
      const lines = tail.stderr().trim().split("\n");
      expect(lines[0]).toMatch(
        /^sessiond: connection lost \(.*\(unavailable\)\); reconnecting after seq 0$/,
      );
      expect(tail.stdout()).toBe("");
    } finally {
      expect(await tail.stop()).toBe(0);
    }
  });

  it("--server https:// against a plaintext server says so in one line, without OpenSSL's internals", async () => {
    const r = await runCli(["ls", "--server", server.url.replace(/^http:/, "https:")]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("sessiond: TLS handshake failed: is the server plaintext? use http://\n");
  });
});
