import type { EventEmitter } from "node:events";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import type * as grpc from "@grpc/grpc-js";
import { type CallRecord, callRecordKey } from "../call-log.js";

/**
 * A grpc-js call as connect's interceptors and handlers see it: the request
 * and response shapes of the interceptor chain, and the handler context
 * connect-node would build (its signal aborts on client cancel, deadline or
 * server shutdown).
 */

export type AnyCall =
  | grpc.ServerUnaryCall<unknown, unknown>
  | grpc.ServerReadableStream<unknown, unknown>
  | grpc.ServerWritableStream<unknown, unknown>
  | grpc.ServerDuplexStream<unknown, unknown>;

/** connect's UnaryRequest / StreamRequest, untyped (one adapter serves every method). */
export interface AnyRequest {
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
export interface AnyResponse {
  readonly stream: boolean;
  readonly service: DescService;
  readonly method: DescMethod;
  readonly header: Headers;
  readonly trailer: Headers;
  readonly message: unknown;
}

export type AnyFn = (req: AnyRequest) => Promise<AnyResponse>;

/** connect's applyInterceptors: the first interceptor is the outermost. */
export function chain(interceptors: readonly Interceptor[], fn: AnyFn): AnyFn {
  let next = fn as unknown as ReturnType<Interceptor>;
  for (let i = interceptors.length - 1; i >= 0; i--) next = (interceptors[i] as Interceptor)(next);
  return next as unknown as AnyFn;
}

type Context = ReturnType<typeof createHandlerContext>;

/** Abort reasons made once: a DOMException per call costs more than the rest of begin(). */
const CLIENT_CANCELLED = new ConnectError("the client cancelled the call", Code.Canceled);
const CALL_DONE = new ConnectError("the call is over", Code.Canceled);

export interface Begun {
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
export function begin(
  call: AnyCall,
  spec: MethodImplSpec,
  shutdownSignal: AbortSignal,
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
    shutdownSignal,
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
