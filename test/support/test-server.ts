import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { afterEach } from "vitest";

/** An in-process h2c server for the unit tests of single services (health, reflection). */
export interface TestServer {
  baseUrl: string;
  close(): Promise<void>;
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/**
 * Serves `routes` on an ephemeral loopback port; closed after each test.
 * close() also ends open HTTP/2 sessions (Node 20's server.close() does not).
 * `interceptors` are the production ones a test needs (e.g. the edge that
 * maps domain errors to codes).
 */
export async function startTestServer(
  routes: (router: ConnectRouter) => void,
  shutdownSignal?: AbortSignal,
  interceptors: Interceptor[] = [],
): Promise<TestServer> {
  const server = http2.createServer(
    connectNodeAdapter({ routes, interceptors, ...(shutdownSignal ? { shutdownSignal } : {}) }),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  const handle: TestServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}
