import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  type CommonClientOptions,
  clientInterceptors,
  clientsOver,
  type SessiondClient,
} from "../client/sessiond-client.js";

/** The protocols a browser can speak: gRPC proper needs HTTP/2 trailers, which fetch cannot read. */
export type WebProtocol = "connect" | "grpc-web";

export interface SessiondWebClientOptions extends CommonClientOptions {
  /**
   * The server, e.g. https://sessiond.example:50051, or `location.origin`
   * for a page the server itself serves. Browsers reach a plaintext port
   * only over HTTP/1.1 (they never speak h2c).
   */
  baseUrl: string;
  /** Wire protocol (default "connect": unary and server streaming work over HTTP/1.1). */
  protocol?: WebProtocol;
  /** JSON instead of binary protobuf on the wire (default false): readable in devtools, larger. */
  useJson?: boolean;
  /** A fetch of your own (e.g. with credentials); default: the global fetch. */
  fetch?: typeof globalThis.fetch;
}

/**
 * The sessiond client for browsers (and any runtime with fetch): the same
 * typed `store` / `session` clients, client-side ids and retries as
 * `sessiond/client`, over `@connectrpc/connect-web`.
 */
export function createSessiondClient(opts: SessiondWebClientOptions): SessiondClient {
  const common = {
    baseUrl: opts.baseUrl,
    useBinaryFormat: !opts.useJson,
    interceptors: clientInterceptors(opts),
    ...(opts.fetch === undefined ? {} : { fetch: opts.fetch }),
  };
  const base =
    (opts.protocol ?? "connect") === "connect"
      ? createConnectTransport(common)
      : createGrpcWebTransport(common);
  return clientsOver(base, opts);
}
