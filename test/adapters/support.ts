import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { openStore } from "../../src/index.js";
import { type RunningServer, serverConfig, startServer } from "../../src/server/index.js";
import type { SessionStore } from "../../src/store/index.js";

/** A sessiond server in this process on a store of the test's choice, and a client of it. */
export interface AdapterServer {
  client: SessiondClient;
  server: RunningServer;
  /** Stops the server and closes its store. */
  close(): Promise<void>;
}

/** Serves `store` on an ephemeral loopback port. */
export async function serveStore(store: SessionStore): Promise<AdapterServer> {
  const server = await startServer(store, serverConfig({ port: 0, log: () => {} }));
  const client = createSessiondClient({ baseUrl: server.url, timeoutMs: 15_000 });
  return { client, server, close: () => server.close() };
}

/** A fresh data directory for JSONL stores, removed by the returned function. */
export async function dataDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "sessiond-adapter-"));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A server on a JSONL store in `dir`: a new one per call is a process restart. */
export function serveDir(dir: string): Promise<AdapterServer> {
  return serveStore(openStore({ dataDir: dir }));
}

/**
 * A JSONL server of its own for each test of the file that calls this (at
 * its top level): a fresh data dir before each test, closed and removed
 * after. The function returned gives the current test's server.
 */
export function serverPerTest(): () => AdapterServer {
  let dir: Awaited<ReturnType<typeof dataDir>> | undefined;
  let srv: AdapterServer | undefined;
  beforeEach(async () => {
    dir = await dataDir();
    srv = await serveDir(dir.dir);
  });
  afterEach(async () => {
    await srv?.close();
    await dir?.remove();
    srv = undefined;
  });
  return () => {
    if (srv === undefined) throw new Error("serverPerTest: no server outside a test");
    return srv;
  };
}
