/**
 * Shared pieces of the rpc-* client scripts: argument parsing, the
 * sessiond / echo clients (the same client stack on both, chosen by the
 * `via` argument), the ~500 B message every append scenario writes, and the
 * last-line JSON answer that `runClient` reads.
 *
 * `via`: "connect" (default) is connect-node's client speaking the Connect
 * protocol (binary, HTTP/2), which sessiond serves with connect-node like
 * the connect-node echo baseline; "grpc" is connect-node's client speaking
 * gRPC; "grpc-js" is a plain @grpc/grpc-js client (native gRPC, as the
 * fleets call the server), used against sessiond and the grpc-js echo.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { EchoService } from "../../gen/bench/v1/echo_pb.js";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { createSessiondClient } from "../../src/client/index.js";
import { grpcJsEcho, grpcJsSessiond } from "./grpcjs.js";

export type Via = "connect" | "grpc" | "grpc-js";

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

/** The client stack of this run (the `via` argument). */
export const VIA: Via = args<{ via?: Via }>().via ?? "connect";

/** What the scripts call on sessiond: the same shape on every client stack. */
export type BenchSessiond = ReturnType<typeof grpcJsSessiond>;
/** What the scripts call on an echo server. */
export type BenchEcho = ReturnType<typeof grpcJsEcho>;

/** A sessiond client, no retries (one HTTP/2 connection). */
export function sessiond(url: string): BenchSessiond {
  if (VIA === "grpc-js") return grpcJsSessiond(url);
  return createSessiondClient({ baseUrl: url, protocol: VIA, retry: false });
}

/** An echo client on the same client stack (one HTTP/2 connection). */
export function echo(url: string): BenchEcho {
  if (VIA === "grpc-js") return grpcJsEcho(url);
  const transport =
    VIA === "grpc"
      ? createGrpcTransport({ baseUrl: url })
      : createConnectTransport({ baseUrl: url, httpVersion: "2" });
  return createClient(EchoService, transport);
}

/** Init shape of a sessiond request (what `BenchSessiond` methods accept). */
export type AppendInit = Parameters<BenchSessiond["session"]["append"]>[0];
export type { MessageInitShape };

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
export async function newSession(c: BenchSessiond, title: string): Promise<string> {
  const { session } = await c.store.createSession({ title });
  if (session === undefined) throw new Error("CreateSession returned no session");
  return session.id;
}

export const now = () => performance.now();
