import type http2 from "node:http2";
import { type GrpcJsFront, isNativeGrpc } from "./front.js";

type StreamListener = (
  this: unknown,
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  ...rest: unknown[]
) => void;

/**
 * Routes each HTTP/2 stream of `server`: native gRPC to grpc-js, everything
 * else (Connect, gRPC-Web, gRPC+JSON) to the listeners already installed,
 * i.e. the compat request handler Node set up for connect-node. Per stream,
 * so one connection can carry all three protocols. The compat listener is
 * taken off and called by this one with the same `this` and arguments; a
 * native gRPC stream never reaches the compat layer (whose response object
 * would register its own 'wantTrailers' listener on it).
 */
export function routeNativeGrpc(
  server: http2.Http2Server | http2.Http2SecureServer,
  front: GrpcJsFront,
): void {
  const others = server.listeners("stream") as StreamListener[];
  for (const listener of others) server.removeListener("stream", listener);
  server.on("stream", function route(this: unknown, stream, headers, ...rest: unknown[]) {
    if (isNativeGrpc(headers["content-type"]) && front.serves(headers[":path"])) {
      front.handle(stream, headers);
    } else for (const listener of others) listener.apply(this, [stream, headers, ...rest]);
  } as StreamListener);
}
