import {
  type Context,
  context,
  createTraceState,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { parseTraceParent } from "../../core/traceparent.js";
import { tracingEnabled } from "../../store/index.js";

export { tracingEnabled };

/** The tracer of the transport; the store and the engines have theirs (storage/observer.ts). */
const tracer = trace.getTracer("sessiond");

/**
 * The caller's span context from a request's W3C `traceparent` /
 * `tracestate` headers (any of the three protocols carries them as HTTP/2
 * headers or gRPC metadata), as the parent of the RPC's span; the root
 * context when there is none.
 */
export function callerContext(header: Headers): Context {
  const parent = parseTraceParent(header.get("traceparent"));
  if (parent === undefined) return ROOT_CONTEXT;
  const state = header.get("tracestate");
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.flags & TraceFlags.SAMPLED,
    isRemote: true,
    ...(state ? { traceState: createTraceState(state) } : {}),
  });
}

/**
 * Starts the server span of one RPC under the caller's context. Its trace
 * id is the caller's when the request carried one (even with no SDK
 * installed, where the span records nothing), so the request log can name it.
 */
export function startRpcSpan(method: string, header: Headers): { span: Span; ctx: Context } {
  const parent = callerContext(header);
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { "rpc.system": "grpc", "rpc.method": method } },
    parent,
  );
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Ends an RPC's span with the gRPC status code the call ended with (0 = OK). */
export function endRpcSpan(span: Span, code: number): void {
  span.setAttribute("rpc.grpc.status_code", code);
  if (code !== 0) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Runs `fn` with `ctx` active: the store's spans nest under the RPC's. */
export function withContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/**
 * The trace id the request log names for a call whose `traceparent` header
 * is `header` while no SDK is registered (`tracingEnabled()` false): the
 * caller's, as the span `startRpcSpan` would make then carries it; none
 * without a valid header.
 */
export function callerTraceId(header: string | undefined): string | undefined {
  return parseTraceParent(header)?.traceId;
}
