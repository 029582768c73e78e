import type { OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import type * as grpc from "@grpc/grpc-js";
import { restated, toConnectError } from "../wire/errors.js";
import type { Undecodable } from "./definition.js";

/**
 * What a gRPC client sees when a call fails, kept as connect-node answers
 * it where grpc-js would answer otherwise (bad deadlines, undecodable or cut
 * short requests), and nothing but a code and a message.
 */

/**
 * A status grpc-js is about to send, in sessiond's terms. Applied where
 * grpc-js writes the status (stream-tap.ts):
 * - grpc-js answers a request whose last envelope is cut short (the client
 *   half-closed mid-message) as if no message came: UNIMPLEMENTED "Received
 *   no request message ...". It is a malformed request, INVALID_ARGUMENT
 *   "protocol error: incomplete envelope" as on connect-node, whenever the
 *   client did send bytes (`received`);
 * - its own refusals (a request over the max message size) are restated as
 *   errors.ts restates connect-es's (`restated`).
 */
export function restatedStatus(fields: OutgoingHttpHeaders, received: number): OutgoingHttpHeaders {
  const code = Number(fields["grpc-status"]);
  const message = String(fields["grpc-message"] ?? "");
  if (received > 0 && code === Code.Unimplemented && message.startsWith(NO_REQUEST_MESSAGE)) {
    return {
      ...fields,
      "grpc-status": String(Code.InvalidArgument),
      "grpc-message": encodeURI("protocol error: incomplete envelope"),
    };
  }
  if (code !== Code.ResourceExhausted) return fields;
  const error = restated(code, decoded(message));
  return error === undefined
    ? fields
    : { ...fields, "grpc-status": String(error.code), "grpc-message": encodeURI(error.rawMessage) };
}

/** grpc-js's message for a call with no request message, as it encodes it (encodeURI). */
const NO_REQUEST_MESSAGE = encodeURI("Received no request message");

function decoded(message: string): string {
  try {
    return decodeURI(message);
  } catch {
    return message;
  }
}

export const parseError = (bad: Undecodable) =>
  new ConnectError(`parse binary: ${bad.reason}`, Code.InvalidArgument);

/** The status a client sees for an error: its gRPC code and raw message, nothing else. */
export function statusOf(err: unknown): grpc.ServerErrorResponse {
  const e = toConnectError(err);
  // A status object, not an Error: grpc-js reads code and details from it.
  return {
    code: e.code as number as grpc.status,
    details: e.rawMessage,
  } as grpc.ServerErrorResponse;
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

/**
 * The deadline grpc-js sets for a `grpc-timeout` header the front let in
 * (timeoutError): ms as grpc-js computes them (truncated to an int32, so a
 * timeout of years wraps as it does there); undefined without one.
 */
export function deadlineMs(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /(\d{1,8})\s*([HMSmun])/.exec(Array.isArray(value) ? (value[0] ?? "") : value);
  if (m === null) return undefined;
  return (Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]) | 0;
}

const UNIT_MS = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** A trailers-only gRPC answer, as grpc-js writes one. */
export function respondStatus(stream: ServerHttp2Stream, err: ConnectError): void {
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
