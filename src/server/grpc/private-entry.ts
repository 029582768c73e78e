import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type * as grpc from "@grpc/grpc-js";

/** Serves one HTTP/2 stream that carries a native gRPC call. */
export type GrpcStreamHandler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void;

/**
 * The ONE place that reaches into @grpc/grpc-js's private API: the per-stream
 * entry `Server.prototype._streamHandler(extraInterceptors, stream, headers)`.
 *
 * Why: grpc-js has no public way to serve a single HTTP/2 stream. Its public
 * entry points take whole ports (`bindAsync`) or whole connections
 * (`createConnectionInjector`), but one connection carries native gRPC,
 * Connect and gRPC-Web streams side by side, and only per stream can they be
 * told apart (by content-type). The method needs nothing of the server but
 * its registered handlers and options: it calls `onStreamOpened` (a no-op for
 * sessions grpc-js never saw), `_verifyContentType`, `_retrieveHandler`,
 * `getServerInterceptingCall(..., this.options)` and `_runHandlerForCall`.
 * It is the handler grpc-js itself uses when channelz is disabled, so the
 * server must be created with `'grpc.enable_channelz': 0`.
 *
 * Checked against @grpc/grpc-js 1.14.7 (pinned exactly in package.json).
 * Returns undefined when the method is missing (another grpc-js version):
 * the caller then serves native gRPC through connect-node and logs why.
 */
export function privateStreamHandler(server: grpc.Server): GrpcStreamHandler | undefined {
  const fn = (server as unknown as { _streamHandler?: unknown })._streamHandler;
  if (typeof fn !== "function") return undefined;
  const extraInterceptors: never[] = [];
  return (stream, headers) => {
    fn.call(server, extraInterceptors, stream, headers);
  };
}
