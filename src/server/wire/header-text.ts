import type { IncomingHttpHeaders } from "node:http";

/**
 * A request header as the handlers read it, for the direct Append paths
 * (grpc/direct-append.ts, http/connect-append.ts) that read Node's header
 * object instead of connect's Headers: one string, several values joined
 * with ", " as Headers joins them.
 */
export function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

/** Node's request headers as a Headers for the tracing code (`get` only; made only when an SDK traces). */
export function headersOf(headers: IncomingHttpHeaders): Headers {
  return {
    get: (name: string) => headerText(headers[name.toLowerCase()]) ?? null,
  } as Headers;
}
