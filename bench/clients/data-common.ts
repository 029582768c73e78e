/**
 * Shared pieces of the data-* client scripts (rows 4, 5, 6, 9): arguments,
 * the one-line JSON answer `runClient` reads, and clients of sessiond, the
 * echo baseline and the health service on one HTTP/2 connection each, all
 * speaking the Connect protocol (binary) with connect-node's client: sessiond
 * serves it with connect-node, like the connect-node echo baseline (native
 * gRPC has its own rows, scenario g).
 */
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { EchoService } from "../../gen/bench/v1/echo_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";

/** The JSON object passed as the only argument by `runClient`. */
export function args<T>(): T {
  return JSON.parse(process.argv[2] ?? "{}") as T;
}

/** The answer: one JSON line, the last on stdout; then exit. */
export function answer(result: unknown): never {
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

/** sessiond over Connect, no retries, plus the health service on the same connection. */
export function sessiond(url: string): SessiondClient & { health: Client<typeof Health> } {
  const c = createSessiondClient({ baseUrl: url, protocol: "connect", retry: false });
  return { ...c, health: createClient(Health, c.transport) };
}

/** The echo baseline on the same transport settings. */
export function echo(url: string): Client<typeof EchoService> {
  return createClient(EchoService, createConnectTransport({ baseUrl: url, httpVersion: "2" }));
}

/** Milliseconds an async call takes, and its result. */
export async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await f();
  return { ms: performance.now() - t0, value };
}
