import type { EventEmitter } from "node:events";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import type * as grpc from "@grpc/grpc-js";
import { type CallRecord, callRecordKey } from "../ops/call-log.js";
import { sendsPreEncodedKey } from "../wire/response-size.js";
import { MetadataHeaders } from "./metadata-headers.js";

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

/** Abort reasons made once: a DOMException per call costs more than the rest of begin(). */
const CLIENT_CANCELLED = new ConnectError("the client cancelled the call", Code.Canceled);
const CALL_DONE = new ConnectError("the call is over", Code.Canceled);
const TIMED_OUT = new ConnectError("the operation timed out", Code.DeadlineExceeded);

/**
 * The calls in progress, to abort them all when the server shuts down: one
 * listener on the shutdown signal for the server, not one per call (linking
 * each call's signal to it, as connect's createHandlerContext does, costs an
 * event listener added and removed per call).
 */
export class LiveCalls {
  private readonly calls = new Set<CallEnd>();

  constructor(private readonly shutdownSignal: AbortSignal) {
    shutdownSignal.addEventListener(
      "abort",
      () => {
        for (const c of this.calls) c.abort(shutdownSignal.reason);
        this.calls.clear();
      },
      { once: true },
    );
  }

  /** A call begins: aborted at shutdown until `end`, at once when the server is shutting down. */
  start(c: CallEnd): void {
    if (this.shutdownSignal.aborted) c.abort(this.shutdownSignal.reason);
    else this.calls.add(c);
  }

  end(c: CallEnd): void {
    this.calls.delete(c);
  }
}

/**
 * A handler context as connect's createHandlerContext makes it, for what
 * connect handlers and interceptors read (its fields, a signal that aborts on
 * client cancel, deadline or server shutdown), at a fraction of its cost per
 * call: at most one AbortController instead of three with four linked
 * listeners, made only when someone reads the signal (a warm GetSession
 * never does), and the request header read from the call's metadata
 * (MetadataHeaders) instead of copied.
 */
class CallContext implements HandlerContext {
  readonly requestMethod = "POST";
  readonly protocolName = "grpc";

  constructor(
    readonly service: DescService,
    readonly method: DescMethod,
    readonly url: string,
    private readonly end: CallEnd,
    /** A signal an interceptor passed on in its own request; else the call's own. */
    private readonly passedSignal: AbortSignal | undefined,
    readonly requestHeader: Headers,
    readonly values: ContextValues,
    private readonly deadlineAt: number | undefined,
    readonly responseHeader: Headers = new Headers({ "content-type": "application/grpc+proto" }),
    readonly responseTrailer: Headers = new Headers(),
  ) {}

  get signal(): AbortSignal {
    return this.passedSignal ?? this.end.signal;
  }

  readonly timeoutMs = (): number | undefined =>
    this.deadlineAt === undefined ? undefined : this.deadlineAt - Date.now();

  /** The same call as interceptors passed it on (connect's mergeRequest). */
  merged(req: AnyRequest): HandlerContext {
    // Passed on as it came (the usual case): this context already is that call.
    if (
      req instanceof CallRequest &&
      req.service === this.service &&
      req.header === this.requestHeader &&
      req.contextValues === this.values
    ) {
      return this;
    }
    return new CallContext(
      req.service,
      this.method,
      this.url,
      this.end,
      // Our own request (or a copy of it, which lacks the prototype's getter) keeps the lazy signal.
      req instanceof CallRequest ? undefined : (req.signal as AbortSignal | undefined),
      req.header,
      req.contextValues,
      this.deadlineAt,
      this.responseHeader,
      this.responseTrailer,
    );
  }
}

/**
 * An interceptor request (connect's UnaryRequest / StreamRequest) whose
 * signal is the call's, made when first read.
 */
class CallRequest implements AnyRequest {
  readonly service: DescService;
  readonly method: DescMethod;
  readonly requestMethod = "POST";
  readonly url: string;
  readonly header: Headers;
  readonly contextValues: ContextValues;

  constructor(
    private readonly ctx: CallContext,
    readonly stream: boolean,
    readonly message: unknown,
  ) {
    this.service = ctx.service;
    this.method = ctx.method;
    this.url = ctx.url;
    this.header = ctx.requestHeader;
    this.contextValues = ctx.values;
  }

  get signal(): AbortSignal {
    return this.ctx.signal;
  }
}

/**
 * The end of a call's context (its deadline timer, its place among the live
 * calls, its signal), as connect-node ends it when a call ends. Its own
 * small object, apart from the handler context: a long stream that only
 * needs to end its call (a pushed watch) keeps this alive, not the context,
 * its headers and the interceptors' request. The AbortController, and the
 * listener for the client's cancel, are made when the signal is first
 * read; until then an abort only keeps its reason (the first one, as
 * AbortController does) for the signal to start with, and a cancel is
 * what grpc-js's `cancelled` says then.
 */
export class CallEnd {
  timer: ReturnType<typeof setTimeout> | undefined;
  private controller: AbortController | undefined;
  private reason: unknown;
  private listening = false;

  constructor(
    private readonly call: AnyCall,
    private readonly live: LiveCalls,
  ) {
    live.start(this);
  }

  /** Aborts on client cancel, deadline, server shutdown, and when the call is over. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
      else if (this.call.cancelled) this.abort(CLIENT_CANCELLED);
      else {
        (this.call as EventEmitter).once("cancelled", this.onCancel);
        this.listening = true;
      }
    }
    return this.controller.signal;
  }

  /** Aborts the call's signal, now or when it is made; the first reason stays. */
  abort(reason: unknown): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  private readonly onCancel = () => this.abort(CLIENT_CANCELLED);

  /**
   * Called before the status is sent: grpc-js reports every finished call
   * as 'cancelled' afterwards.
   */
  finish(): void {
    if (this.listening) (this.call as EventEmitter).removeListener("cancelled", this.onCancel);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.live.end(this);
    this.abort(CALL_DONE);
  }
}

/**
 * What connect-node builds for a call before the interceptors run: the
 * handler context (its signal aborts on client cancel, deadline or server
 * shutdown) and the requests and responses the interceptors pass.
 */
export class Begun {
  readonly responseCommon: Omit<AnyResponse, "stream" | "message">;

  constructor(
    readonly ctx: CallContext,
    /** Ends the call's context (see CallEnd). */
    readonly end: CallEnd,
  ) {
    this.responseCommon = {
      service: ctx.service,
      method: ctx.method,
      header: ctx.responseHeader,
      trailer: ctx.responseTrailer,
    };
  }

  /** The request the interceptor chain starts with. */
  request(stream: boolean, message: unknown): AnyRequest {
    return new CallRequest(this.ctx, stream, message);
  }

  finish(): void {
    this.end.finish();
  }

  /** The handler context for a request as interceptors passed it on (connect's mergeRequest). */
  merge(req: AnyRequest): HandlerContext {
    return this.ctx.merged(req);
  }
}

/** Begins a call: its handler context and its end (see Begun). */
export function begin(
  call: AnyCall,
  spec: MethodImplSpec,
  live: LiveCalls,
  record: CallRecord | undefined,
): Begun {
  const header = new MetadataHeaders(call.metadata, "application/grpc+proto");
  const values = createContextValues();
  values.set(callRecordKey, record);
  values.set(sendsPreEncodedKey, true);
  const end = new CallEnd(call, live);
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  let deadlineAt: number | undefined;
  if (Number.isFinite(at)) {
    deadlineAt = at;
    const ms = at - Date.now();
    if (ms <= 0) end.abort(TIMED_OUT);
    else end.timer = setTimeout(timedOut, ms, end);
  }
  const ctx = new CallContext(
    spec.method.parent,
    spec.method,
    `http://${call.getHost()}${call.getPath()}`,
    end,
    undefined,
    header,
    values,
    deadlineAt,
  );
  return new Begun(ctx, end);
}

function timedOut(end: CallEnd): void {
  end.abort(TIMED_OUT);
}
