import type { EventEmitter } from "node:events";
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";
import {
  create,
  type DescMessage,
  type DescMethod,
  type DescService,
  isMessage,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createContextValues,
  createHandlerContext,
  createServiceImplSpec,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type ServiceImplSpec,
} from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { type CallLog, type CallRecord, callRecordKey } from "../call-log.js";
import { toConnectError } from "../errors.js";
import { grpcServiceDefinition, Undecodable } from "./definition.js";
import { type GrpcStreamHandler, privateStreamHandler } from "./private-entry.js";

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
    const start = (call: AnyCall) => begin(call, spec, options, take(call.metadata));
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
          next({ ...c.requestCommon, stream: false, message: call.request }).then(
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
            message: normalizeAll(
              spec.method.output,
              impl(
                await single(req.message as AsyncIterable<unknown>),
                c.merge(req),
              ) as AsyncIterable<unknown>,
            ),
          }));
          const request = call.request;
          async function* input() {
            yield request;
          }
          void pump(call, c, next({ ...c.requestCommon, stream: true, message: input() }));
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
          next({ ...c.requestCommon, stream: true, message: readable(call) }).then(
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
            message: normalizeAll(
              spec.method.output,
              impl(req.message, c.merge(req)) as AsyncIterable<unknown>,
            ),
          }));
          void pump(call, c, next({ ...c.requestCommon, stream: true, message: readable(call) }));
        }) as grpc.handleBidiStreamingCall<unknown, unknown>;
    }
  }

  return {
    serves: (path) => path !== undefined && paths.has(path),
    handle(stream, headers) {
      const path = headers[":path"];
      const record = options.calls.stream(stream, path);
      incompleteIsInvalid(stream);
      // connect-node refuses a bad or too long grpc-timeout (INVALID_ARGUMENT) before
      // any interceptor; grpc-js would answer INTERNAL or accept any deadline.
      const refused = timeoutError(headers["grpc-timeout"], options.maxDeadlineMs);
      if (refused !== undefined) {
        stream.on("error", () => {});
        respondStatus(stream, refused);
        return;
      }
      const id = String(nextId++);
      pending.set(id, record);
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

type AnyCall =
  | grpc.ServerUnaryCall<unknown, unknown>
  | grpc.ServerReadableStream<unknown, unknown>
  | grpc.ServerWritableStream<unknown, unknown>
  | grpc.ServerDuplexStream<unknown, unknown>;

/** connect's UnaryRequest / StreamRequest, untyped (one adapter serves every method). */
interface AnyRequest {
  readonly stream: boolean;
  readonly service: DescService;
  readonly method: DescMethod;
  readonly requestMethod: string;
  readonly url: string;
  readonly signal: AbortSignal;
  readonly header: Headers;
  readonly contextValues: ContextValues;
  readonly message: unknown;
}

/** connect's UnaryResponse / StreamResponse, untyped. */
interface AnyResponse {
  readonly stream: boolean;
  readonly service: DescService;
  readonly method: DescMethod;
  readonly header: Headers;
  readonly trailer: Headers;
  readonly message: unknown;
}

type AnyFn = (req: AnyRequest) => Promise<AnyResponse>;

/** connect's applyInterceptors: the first interceptor is the outermost. */
function chain(interceptors: readonly Interceptor[], fn: AnyFn): AnyFn {
  let next = fn as unknown as ReturnType<Interceptor>;
  for (let i = interceptors.length - 1; i >= 0; i--) next = (interceptors[i] as Interceptor)(next);
  return next as unknown as AnyFn;
}

type Context = ReturnType<typeof createHandlerContext>;

/** Abort reasons made once: a DOMException per call costs more than the rest of begin(). */
const CLIENT_CANCELLED = new ConnectError("the client cancelled the call", Code.Canceled);
const CALL_DONE = new ConnectError("the call is over", Code.Canceled);

interface Begun {
  readonly ctx: Context;
  /**
   * Ends the handler context (its deadline timer, its link to the shutdown
   * signal), as connect-node does when a call ends. Called before the status
   * is sent: grpc-js reports every finished call as 'cancelled' afterwards.
   */
  finish(): void;
  readonly requestCommon: Omit<AnyRequest, "stream" | "message">;
  readonly responseCommon: Omit<AnyResponse, "stream" | "message">;
  /** The handler context for a request as interceptors passed it on (connect's mergeRequest). */
  merge(req: AnyRequest): HandlerContext;
}

/**
 * What connect-node builds for a call before the interceptors run: the
 * handler context (its signal aborts on client cancel, deadline or server
 * shutdown) and the fields every interceptor request carries.
 */
function begin(
  call: AnyCall,
  spec: MethodImplSpec,
  options: GrpcJsFrontOptions,
  record: CallRecord | undefined,
): Begun {
  const header = new Headers();
  const fields = call.metadata.toHttp2Headers();
  for (const key in fields) {
    const value = fields[key];
    if (Array.isArray(value)) for (const v of value) header.append(key, v);
    else if (value !== undefined) header.append(key, String(value));
  }
  header.set("content-type", "application/grpc+proto");
  const values = createContextValues();
  values.set(callRecordKey, record);
  const cancel = new AbortController();
  const onCancel = () => cancel.abort(CLIENT_CANCELLED);
  if (call.cancelled) onCancel();
  else (call as EventEmitter).once("cancelled", onCancel);
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  const ctx = createHandlerContext({
    service: spec.method.parent,
    method: spec.method,
    protocolName: "grpc",
    requestMethod: "POST",
    url: `http://${call.getHost()}${call.getPath()}`,
    timeoutMs: Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined,
    shutdownSignal: options.shutdownSignal,
    requestSignal: cancel.signal,
    requestHeader: header,
    responseHeader: { "content-type": "application/grpc+proto" },
    responseTrailer: {},
    contextValues: values,
  });
  return {
    ctx,
    finish() {
      (call as EventEmitter).removeListener("cancelled", onCancel);
      ctx.abort(CALL_DONE);
    },
    requestCommon: {
      service: spec.method.parent,
      method: spec.method,
      requestMethod: "POST",
      url: ctx.url,
      signal: ctx.signal,
      header: ctx.requestHeader,
      contextValues: ctx.values,
    },
    responseCommon: {
      service: spec.method.parent,
      method: spec.method,
      header: ctx.responseHeader,
      trailer: ctx.responseTrailer,
    },
    merge: (req) => ({
      ...ctx,
      service: req.service,
      requestHeader: req.header,
      signal: req.signal,
      values: req.contextValues,
    }),
  };
}

type Writer =
  | grpc.ServerWritableStream<unknown, unknown>
  | grpc.ServerDuplexStream<unknown, unknown>;

/**
 * Writes a streaming response: each message as the client can take it
 * (write() returning false waits for 'drain'), then the status. An error
 * becomes its gRPC code and raw message; nothing else reaches the client.
 */
async function pump(call: Writer, c: Begun, response: Promise<AnyResponse>): Promise<void> {
  const ctx = c.ctx;
  try {
    const res = await response;
    const messages = res.stream ? res.message : [res.message];
    for await (const message of messages as AsyncIterable<unknown>) {
      if (call.cancelled || call.destroyed) break;
      if (!call.write(message)) await drained(call, ctx.signal);
    }
    c.finish();
    if (!call.cancelled && !call.destroyed) call.end();
  } catch (err) {
    c.finish();
    if (!call.cancelled && !call.destroyed) call.emit("error", statusOf(err));
  }
}

function drained(call: Writer, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      call.off("drain", done);
      call.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    call.on("drain", done);
    call.on("close", done);
    signal.addEventListener("abort", done);
  });
}

/**
 * grpc-js answers a request whose last envelope is cut short (the client
 * half-closed mid-message) as if no message came: UNIMPLEMENTED "Received no
 * request message ...". It is a malformed request, INVALID_ARGUMENT
 * "protocol error: incomplete envelope" as on connect-node, whenever the
 * client did send bytes. Rewritten where grpc-js writes the status.
 */
function incompleteIsInvalid(stream: ServerHttp2Stream): void {
  let received = 0;
  stream.on("data", (chunk: Buffer) => {
    received += chunk.length;
  });
  const fix = (fields: OutgoingHttpHeaders): OutgoingHttpHeaders =>
    received > 0 &&
    String(fields["grpc-status"]) === String(Code.Unimplemented) &&
    String(fields["grpc-message"] ?? "").startsWith("Received%20no%20request%20message")
      ? {
          ...fields,
          "grpc-status": String(Code.InvalidArgument),
          "grpc-message": encodeURI("protocol error: incomplete envelope"),
        }
      : fields;
  const respond = stream.respond.bind(stream);
  stream.respond = (headers, options) => respond(headers && fix(headers), options);
  const sendTrailers = stream.sendTrailers.bind(stream);
  stream.sendTrailers = (trailers) => sendTrailers(fix(trailers));
}

const parseError = (bad: Undecodable) =>
  new ConnectError(`parse binary: ${bad.reason}`, Code.InvalidArgument);

/**
 * The request stream of a client-streaming or bidi call. Not `for await` over
 * the call itself: at the end of the input that destroys the Duplex, and a
 * destroyed call can no longer send its responses' status.
 */
async function* readable(call: import("node:stream").Readable): AsyncGenerator<unknown> {
  for await (const message of call.iterator({ destroyOnReturn: false })) {
    if (message instanceof Undecodable) throw parseError(message);
    yield message;
  }
}

/** The status a client sees for an error: its gRPC code and raw message, nothing else. */
function statusOf(err: unknown): grpc.ServerErrorResponse {
  const e = toConnectError(err);
  // A status object, not an Error: grpc-js reads code and details from it.
  return {
    code: e.code as number as grpc.status,
    details: e.rawMessage,
  } as grpc.ServerErrorResponse;
}

/** connect's ensureSingle: the one input of a server-streaming call. */
async function single(input: AsyncIterable<unknown>): Promise<unknown> {
  const it = input[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done === true) {
    throw new ConnectError(
      "protocol error: missing input message for server-streaming method",
      Code.Unimplemented,
    );
  }
  const second = await it.next();
  if (second.done !== true) {
    throw new ConnectError(
      "protocol error: received extra input message for server-streaming method",
      Code.Unimplemented,
    );
  }
  return first.value;
}

/** connect's normalize: handlers may return init objects; the wire wants messages. */
function normalize(schema: DescMessage, value: unknown): unknown {
  return isMessage(value, schema) ? value : create(schema, value as never);
}

async function* normalizeAll(schema: DescMessage, values: AsyncIterable<unknown>) {
  for await (const value of values) yield normalize(schema, value);
}

/**
 * The error connect-node's parseTimeout gives for a grpc-timeout header that
 * is malformed or over maxTimeoutMs, undefined when it is fine.
 */
export function timeoutError(
  value: string | string[] | undefined,
  maxDeadlineMs: number,
): ConnectError | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(",") : value;
  const m = /^(\d{1,8})([HMSmun])$/.exec(text);
  if (m === null) {
    return new ConnectError(
      `protocol error: invalid grpc timeout value: ${text}`,
      Code.InvalidArgument,
    );
  }
  const unit = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 }[
    m[2] as "H" | "M" | "S" | "m" | "u" | "n"
  ];
  const ms = unit * Number.parseInt(m[1] as string, 10);
  if (maxDeadlineMs > 0 && ms > maxDeadlineMs) {
    return new ConnectError(`timeout ${ms}ms must be <= ${maxDeadlineMs}`, Code.InvalidArgument);
  }
  return undefined;
}

/** A trailers-only gRPC answer, as grpc-js writes one. */
function respondStatus(stream: ServerHttp2Stream, err: ConnectError): void {
  if (stream.destroyed || stream.closed) return;
  stream.respond(
    {
      ":status": 200,
      "content-type": "application/grpc+proto",
      "grpc-status": String(err.code),
      "grpc-message": encodeURI(err.rawMessage),
    },
    { endStream: true },
  );
}
