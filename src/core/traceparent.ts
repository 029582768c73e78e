/**
 * The W3C Trace Context `traceparent` header
 * (https://www.w3.org/TR/trace-context/#traceparent-header), read by the
 * server and written by the clients. @opentelemetry/api ships only a no-op
 * propagator (the W3C one lives in the SDK's @opentelemetry/core), and the
 * server must honour a caller's trace id without any SDK installed (its
 * request log names it), so the 55-character format is handled here.
 */

/** A span context as the header carries it. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero: the caller's span. */
  readonly spanId: string;
  /** The trace flags byte (bit 0: sampled). */
  readonly flags: number;
}

const HEADER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * The header's span context, or undefined when it is absent or invalid (a
 * receiver then starts a new trace, as the spec says). Version 00 has
 * exactly four fields; later versions may append more, which are ignored.
 */
export function parseTraceParent(header: string | null | undefined): TraceParent | undefined {
  const m = header === null || header === undefined ? null : HEADER.exec(header.trim());
  if (m === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = m as unknown as string[];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return {
    traceId: traceId as string,
    spanId: spanId as string,
    flags: parseInt(flags as string, 16),
  };
}

/** The version-00 header for a span context. */
export function formatTraceParent(p: TraceParent): string {
  return `00-${p.traceId}-${p.spanId}-${(p.flags & 0xff).toString(16).padStart(2, "0")}`;
}
