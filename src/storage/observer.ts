import {
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  type Span,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

/**
 * What the engines report while they work, for an operator's metrics. The
 * storage layer knows no metrics library: the server maps these calls to
 * Prometheus (server/ops/metrics.ts), an embedded user may map them to
 * anything, and the default does nothing. Calls are synchronous and cheap;
 * an observer must not throw.
 */
export interface StorageObserver {
  /** An fdatasync / fsync returned after `seconds`. */
  synced(seconds: number): void;
  /** A writer waited `seconds` for a session's serialisation (JSONL: the cross-process lease). */
  lockWaited(seconds: number): void;
  /** One durable write (a group commit) of `appends` appends holding `entries` entries, `bytes` bytes. */
  committed(appends: number, entries: number, bytes: number): void;
  /** A session was looked up in the engine's cache of parsed sessions. */
  cacheLookup(hit: boolean): void;
  /** A PostgreSQL wake-up arrived `seconds` after the replica that committed sent it. */
  notified(lagSeconds: number): void;
}

/** Gauges an engine can answer at any time, read when metrics are scraped. */
export interface EngineStats {
  /** Parsed sessions held in memory. */
  readonly cachedSessions?: number;
  /** Database statements running / queued for a connection (PostgreSQL). */
  readonly pool?: { readonly inUse: number; readonly waiting: number; readonly size: number };
}

/** The observer that records nothing: the default of every engine. */
export const NO_OBSERVER: StorageObserver = {
  synced() {},
  lockWaited() {},
  committed() {},
  cacheLookup() {},
  notified() {},
};

/**
 * The OpenTelemetry tracer of the store and the engines. Without an SDK
 * registered by the embedding process it is the API's no-op tracer: a span
 * costs an object and nothing is recorded.
 */
export const tracer = trace.getTracer("sessiond");

/** What the global tracer provider delegates to while no SDK has registered one. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * True when an OpenTelemetry SDK has registered a tracer provider, so that
 * spans may record. Asked per call (an SDK may register after start), at
 * the cost of two property reads: without an SDK the callers make no span
 * and no context at all, where the API's no-op tracer still builds a span
 * object and a context (a copied Map) for each.
 */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

/** The span `inSpan` hands `fn` when nothing traces: records nothing, like the no-op tracer's. */
export const NON_RECORDING_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Runs `fn` in a span named `name` (a child of the active one), ending it
 * when `fn` settles and marking it failed when `fn` throws. With no SDK
 * registered nothing is made: `fn` runs as it is, with a span that records
 * nothing.
 */
export function inSpan<T>(name: string, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return fn(NON_RECORDING_SPAN);
  return tracer.startActiveSpan(name, async (span) => {
    if (!span.isRecording()) {
      span.end();
      return fn(span);
    }
    try {
      return await fn(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name });
      throw err;
    } finally {
      span.end();
    }
  });
}
