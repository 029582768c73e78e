import type { Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";

/** A protocol and the HTTP version it runs on. */
export type Way = readonly [protocol: "connect" | "grpc-web" | "grpc", httpVersion: "1.1" | "2"];

/** Each way a client reaches the server: the browser's two, over both HTTP versions, and gRPC. */
export const WAYS: readonly Way[] = [
  ["connect", "1.1"],
  ["connect", "2"],
  ["grpc-web", "1.1"],
  ["grpc-web", "2"],
  ["grpc", "2"],
];

/**
 * A bare connect-node transport for `way`, with no interceptors and no
 * client-side limits but those in `limits`: what the server answers is what
 * the test sees.
 */
export function transportOf(
  baseUrl: string,
  [protocol, httpVersion]: Way,
  limits: { writeMaxBytes?: number } = {},
): Transport {
  if (protocol === "grpc") return createGrpcTransport({ baseUrl, ...limits });
  const opts = { baseUrl, httpVersion, useBinaryFormat: protocol === "grpc-web", ...limits };
  return protocol === "connect" ? createConnectTransport(opts) : createGrpcWebTransport(opts);
}
