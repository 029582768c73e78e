/**
 * Shared pieces of the rpc-* client scripts: argument parsing, the
 * sessiond / echo clients (the same connect-node gRPC transport on both),
 * the ~500 B message every append scenario writes, and the last-line JSON
 * answer that `runClient` reads.
 */
import { create } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { EchoService } from "../../gen/bench/v1/echo_pb.js";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
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

/** Progress on stderr (the runner passes stderr through). */
export function log(line: string): void {
  process.stderr.write(`  [client] ${line}\n`);
}

/** A sessiond client over gRPC, no retries (one HTTP/2 connection). */
export function sessiond(url: string): SessiondClient {
  return createSessiondClient({ baseUrl: url, protocol: "grpc", retry: false });
}

/** An echo client on the same transport (one HTTP/2 connection). */
export function echo(url: string): Client<typeof EchoService> {
  return createClient(EchoService, createGrpcTransport({ baseUrl: url }));
}

/** Text of a ~500 B user message (the entry is ~500 B as protobuf). */
export const TEXT = "The quick brown fox jumps over the lazy dog. ".repeat(11).slice(0, 480);

/** One ~500 B USER text message; the id is filled in by the client. */
export function message(text = TEXT): Entry {
  return create(EntrySchema, {
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
}

/** The echo payload: as many bytes as the append's entry. */
export const PAYLOAD = new Uint8Array(500).fill(97);

/** Creates a session and returns its id. */
export async function newSession(c: SessiondClient, title: string): Promise<string> {
  const { session } = await c.store.createSession({ title });
  if (session === undefined) throw new Error("CreateSession returned no session");
  return session.id;
}

export const now = () => performance.now();
