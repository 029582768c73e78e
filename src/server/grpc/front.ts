import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import {
  type ConnectRouter,
  createServiceImplSpec,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type ServiceImplSpec,
} from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import type { CallLog, CallRecord } from "../ops/call-log.js";
import { OneMessage } from "../wire/one-message.js";
import { type AnyCall, begin, chain, LiveCalls } from "./call-context.js";
import { normalize, pump, readable, single } from "./call-io.js";
import { grpcServiceDefinition, Undecodable } from "./definition.js";
import { type DirectAppendOptions, directAppend, takesDirectly } from "./direct-append.js";
import { type GrpcStreamHandler, privateStreamHandler } from "./private-entry.js";
import { tapStream } from "./stream-tap.js";
import { parseError, respondStatus, statusOf, timeoutError } from "./wire-status.js";

/**
 * Native gRPC (`application/grpc`, `application/grpc+proto`) is served by
 * @grpc/grpc-js, which costs a fraction of connect-node's CPU per call; every
 * other protocol on the same port and connection (Connect, gRPC-Web, and
 * gRPC with the JSON codec, which grpc-js cannot decode) stays on
 * connect-node. Both run the SAME service implementations and interceptors
 * (edge: logging, error mapping, response size, in-flight count; auth): the
 * connect-style handlers are called here with a HandlerContext made by
 * connect's own `createHandlerContext`, behind the same interceptor chain
 * connect-node builds, and the result is mapped to grpc-js's call objects.
 */

/** True for the content types grpc-js serves: binary protobuf gRPC, never gRPC-Web or JSON. */
export function isNativeGrpc(contentType: string | undefined): boolean {
  return contentType !== undefined && NATIVE.test(contentType);
}
const NATIVE = /^application\/grpc(\+proto)?(;|$)/i;

export interface GrpcJsFrontOptions {
  /** The same route registrations connect-node gets. */
  readonly routes: (router: ConnectRouter) => void;
  /** The same interceptors connect-node gets, outermost first. */
  readonly interceptors: readonly Interceptor[];
  /** Aborted (with the UNAVAILABLE error) when the server shuts down. */
  readonly shutdownSignal: AbortSignal;
  /** Largest request or response message, bytes. */
  readonly maxMessageBytes: number;
  /** Largest deadline a client may ask for, ms (0 = no limit), as connect-node's maxTimeoutMs. */
  readonly maxDeadlineMs: number;
  readonly calls: CallLog;
  /**
   * Append answered on its stream by direct-append.ts instead of through
   * grpc-js and the interceptor chain; undefined: every method through grpc-js.
   */
  readonly append?: DirectAppendOptions | undefined;
}

export interface GrpcJsFront {
  /**
   * True for the paths of the methods grpc-js serves. An unknown path stays
   * with connect-node, which answers it (HTTP 404) as before.
   */
  serves(path: string | undefined): boolean;
  /** Serves one native gRPC stream (see isNativeGrpc and serves). */
  handle(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void;
}

/** A header the front sets on every call (overwriting any a client sent) to find its log record. */
const CALL_ID = "x-sessiond-call-id";

/**
 * Builds the grpc-js side, or returns undefined when grpc-js's per-stream
 * entry is missing (see private-entry.ts): the caller falls back to
 * connect-node for native gRPC.
 */
export function grpcJsFront(options: GrpcJsFrontOptions): GrpcJsFront | undefined {
  const server = new grpc.Server({
    "grpc.enable_channelz": 0,
    "grpc.max_receive_message_length": options.maxMessageBytes,
    "grpc.max_send_message_length": options.maxMessageBytes,
  });
  const entry: GrpcStreamHandler | undefined = privateStreamHandler(server);
  if (entry === undefined) return undefined;

  const live = new LiveCalls(options.shutdownSignal);
  const direct = options.append === undefined ? undefined : directAppend(options.append);
  const pending = new Map<string, CallRecord>();
  let nextId = 0;
  const take = (metadata: grpc.Metadata): CallRecord | undefined => {
    const id = metadata.get(CALL_ID)[0];
    metadata.remove(CALL_ID);
    if (id === undefined) return undefined;
    const record = pending.get(String(id));
    pending.delete(String(id));
    return record;
  };
  const paths = new Set<string>();
  for (const spec of captureServices(options.routes)) {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const m of Object.values(spec.methods)) {
      impl[m.method.localName] = methodHandler(m);
      paths.add(`/${spec.service.typeName}/${m.method.name}`);
    }
    server.addService(grpcServiceDefinition(spec.service), impl);
  }

  function methodHandler(spec: MethodImplSpec): grpc.UntypedHandleCall {
    const start = (call: AnyCall) => begin(call, spec, live, take(call.metadata));
    const impl = spec.impl as (input: unknown, ctx: HandlerContext) => unknown;
    switch (spec.kind) {
      case "unary":
        return ((
          call: grpc.ServerUnaryCall<unknown, unknown>,
          callback: grpc.sendUnaryData<unknown>,
        ) => {
          // Like connect-node: an undecodable request is refused before any interceptor.
          if (call.request instanceof Undecodable) {
            callback(statusOf(parseError(call.request)));
            return;
          }
          const c = start(call);
          const next = chain(options.interceptors, async (req) => ({
            ...c.responseCommon,
            stream: false,
            message: normalize(spec.method.output, await impl(req.message, c.merge(req))),
          }));
          next(c.request(false, call.request)).then(
            (res) => {
              c.finish();
              callback(null, res.message);
            },
            (err) => {
              c.finish();
              callback(statusOf(err));
            },
          );
        }) as grpc.handleUnaryCall<unknown, unknown>;
      case "server_streaming":
        return ((call: grpc.ServerWritableStream<unknown, unknown>) => {
          if (call.request instanceof Undecodable) {
            call.emit("error", statusOf(parseError(call.request)));
            return;
          }
          const c = start(call);
          const next = chain(options.interceptors, async (req) => ({
            ...c.responseCommon,
            stream: true,
            message: impl(
              await single(req.message as AsyncIterable<unknown>),
              c.merge(req),
            ) as AsyncIterable<unknown>,
          }));
          const message = new OneMessage(call.request);
          void pump(call, c, next(c.request(true, message)));
        }) as grpc.handleServerStreamingCall<unknown, unknown>;
      case "client_streaming":
        return ((
          call: grpc.ServerReadableStream<unknown, unknown>,
          callback: grpc.sendUnaryData<unknown>,
        ) => {
          const c = start(call);
          const next = chain(options.interceptors, async (req) => ({
            ...c.responseCommon,
            stream: false,
            message: normalize(spec.method.output, await impl(req.message, c.merge(req))),
          }));
          next(c.request(true, readable(call))).then(
            (res) => {
              c.finish();
              callback(null, res.message);
            },
            (err) => {
              c.finish();
              callback(statusOf(err));
            },
          );
        }) as grpc.handleClientStreamingCall<unknown, unknown>;
      case "bidi_streaming":
        return ((call: grpc.ServerDuplexStream<unknown, unknown>) => {
          const c = start(call);
          const next = chain(options.interceptors, async (req) => ({
            ...c.responseCommon,
            stream: true,
            message: impl(req.message, c.merge(req)) as AsyncIterable<unknown>,
          }));
          void pump(call, c, next(c.request(true, readable(call))));
        }) as grpc.handleBidiStreamingCall<unknown, unknown>;
    }
  }

  return {
    serves: (path) => path !== undefined && paths.has(path),
    handle(stream, headers) {
      const path = headers[":path"];
      const log = options.calls.stream(path);
      // connect-node refuses a bad or too long grpc-timeout (INVALID_ARGUMENT) before
      // any interceptor; grpc-js would answer INTERNAL or accept any deadline.
      const refused = timeoutError(headers["grpc-timeout"], options.maxDeadlineMs);
      if (refused === undefined && direct !== undefined && takesDirectly(headers)) {
        direct(stream, headers, log);
        return;
      }
      tapStream(stream, log);
      if (refused !== undefined) {
        stream.on("error", () => {});
        respondStatus(stream, refused);
        return;
      }
      const id = String(nextId++);
      pending.set(id, log.record);
      stream.once("close", () => pending.delete(id));
      headers[CALL_ID] = id;
      entry(stream, headers);
    },
  };
}

/** The services `routes` registers, as connect's implementation specs. */
function captureServices(routes: (router: ConnectRouter) => void): ServiceImplSpec[] {
  const specs: ServiceImplSpec[] = [];
  const router = {
    handlers: [],
    service(service: Parameters<ConnectRouter["service"]>[0], impl: object) {
      specs.push(createServiceImplSpec(service, impl));
      return router;
    },
    rpc() {
      throw new Error("grpc-js front: router.rpc is not supported, register whole services");
    },
  };
  routes(router as unknown as ConnectRouter);
  return specs;
}
