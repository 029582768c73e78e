import type { IncomingHttpHeaders } from "node:http";
import { isSpanContextValid, type Span } from "@opentelemetry/api";
import type { AppendRequest } from "../../../gen/sessiond/v1/session_service_pb.js";
import type { AppendOutcome } from "../../core/codec/append-response-binary.js";
import { headersOf, headerText } from "../wire/header-text.js";
import type { CallRecord } from "./call-log.js";
import { callerTraceId, startRpcSpan, tracingEnabled, withContext } from "./trace-context.js";

/** The method both direct Append paths serve, as logs and metrics name it. */
export const APPEND_METHOD = "sessiond.v1.SessionService/Append";

/** The store's append with the checks of its handler (rpc/session-service.ts appendCall). */
export type AppendWith = (
  authorization: string | undefined,
  req: AppendRequest,
) => Promise<AppendOutcome>;

/**
 * What the edge interceptor (edge.ts) does for a unary Append before its
 * handler runs, for the direct Append paths that skip the interceptors
 * (grpc/direct-append.ts, http/connect-append.ts): the request log's
 * record (method, workspace, session, trace id), the call counted in
 * flight, its span when an SDK traces (else the caller's trace id from
 * `traceparent`); then the append itself, in the span's context. The
 * caller counts the call out of flight when `answer` settles and ends
 * `span` (when there is one) with the status it sends.
 */
export function startAppend(
  append: AppendWith,
  inFlight: { enter(): void },
  record: CallRecord,
  headers: IncomingHttpHeaders,
  req: AppendRequest,
): { answer: Promise<AppendOutcome>; span: Span | undefined } {
  record.method = APPEND_METHOD;
  record.workspace = req.workspace || "default";
  record.session = req.session.slice(0, 128);
  inFlight.enter();
  const authorization = headerText(headers.authorization);
  if (!tracingEnabled()) {
    const traceId = callerTraceId(headerText(headers.traceparent));
    if (traceId !== undefined) record.traceId = traceId;
    return { answer: append(authorization, req), span: undefined };
  }
  const { span, ctx } = startRpcSpan(APPEND_METHOD, headersOf(headers));
  const id = span.spanContext();
  if (isSpanContextValid(id)) record.traceId = id.traceId;
  return { answer: withContext(ctx, () => append(authorization, req)), span };
}
