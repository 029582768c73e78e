import type { Interceptor } from "@connectrpc/connect";
import { context, isSpanContextValid, trace } from "@opentelemetry/api";
import { formatTraceParent } from "../core/traceparent.js";

/**
 * Sends the caller's active OpenTelemetry span context as a W3C
 * `traceparent` (and its `tracestate`), so the server's spans join the
 * caller's trace. Without an SDK in the calling process there is never an
 * active span and nothing is sent. A `traceparent` the caller set itself
 * is kept.
 */
export function traceInterceptor(): Interceptor {
  return (next) => (req) => {
    const span = trace.getSpanContext(context.active());
    if (span !== undefined && isSpanContextValid(span) && !req.header.has("traceparent")) {
      req.header.set("traceparent", formatTraceParent({ ...span, flags: span.traceFlags }));
      const state = span.traceState?.serialize();
      if (state) req.header.set("tracestate", state);
    }
    return next(req);
  };
}
