import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  createAsyncIterable,
  type UniversalHandler,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  errorFromJsonBytes,
  errorToJsonBytes,
} from "@connectrpc/connect/protocol-connect";
import { trailerFlag, trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import { restated } from "./errors.js";

/**
 * connect-es's own refusals of a unary request, restated in sessiond's
 * terms (`restated` in errors.ts): a request message that does not parse
 * is INVALID_ARGUMENT, not INTERNAL; one over the max message size names
 * `--max-message-bytes`, not `readMaxBytes`. For a unary method connect-es
 * refuses before any interceptor runs, so neither the edge nor errors.ts
 * ever sees the error: the answer is already encoded. No option of
 * connect-es reaches these refusals, so this wrapper of the router's unary
 * handlers restates such a finished answer, in each wire format
 * connect-node speaks:
 * - Connect unary: the HTTP status and the JSON error body;
 * - gRPC-Web: the trailer frame at the end of the body (the body is the
 *   only place; its frames are passed through one by one, and only a
 *   trailer frame with one of these statuses is parsed);
 * - gRPC (`--grpc-server connect`): the trailers, complete by the time the
 *   handler resolves for a call that failed before its first message.
 * Only connect's own messages are touched: an INTERNAL or
 * RESOURCE_EXHAUSTED of ours stays. The helpers used (error JSON, trailer
 * frames) are connect's private exports; @connectrpc/connect is pinned to
 * an exact version in package.json, and the server test of each protocol
 * fails if their shape changes.
 */
export function restateConnectRefusals(router: ConnectRouter): void {
  const handlers = router.handlers;
  for (let i = 0; i < handlers.length; i++) {
    const h = handlers[i] as UniversalHandler;
    if (h.method.methodKind !== "unary") continue;
    handlers[i] = Object.assign(
      (req: Parameters<UniversalHandler>[0]) => h(req).then(corrected),
      h,
    ) as UniversalHandler;
  }
}

/** The codes of the refusals `restated` knows. */
const RESTATED = [Code.Internal, Code.ResourceExhausted];
/** How connect writes those statuses into a gRPC-Web trailer frame (trailerSerialize). */
const RESTATED_STATUSES = RESTATED.map((code) => `grpc-status: ${code}\r\n`);
const RESTATED_HTTP = new Set(RESTATED.map(codeToHttpStatus));

function corrected(
  res: UniversalServerResponse,
): UniversalServerResponse | Promise<UniversalServerResponse> {
  const type = res.header?.get("content-type") ?? "";
  if (type.startsWith("application/grpc-web")) {
    return isBytes(res.body) ? { ...res, body: trailerFramesCorrected(res.body) } : res;
  }
  if (type.startsWith("application/grpc")) {
    if (res.trailer !== undefined) correctTrailer(res.trailer);
    return res;
  }
  if (RESTATED_HTTP.has(res.status) && type === "application/json") {
    return connectErrorCorrected(res);
  }
  return res;
}

/** Restates a gRPC status in `trailer` in place; true when it did. */
function correctTrailer(trailer: Headers): boolean {
  const code = Number(trailer.get("grpc-status"));
  const error = RESTATED.includes(code) ? restated(code, grpcMessage(trailer)) : undefined;
  if (error === undefined) return false;
  trailer.set("grpc-status", String(error.code));
  trailer.set("grpc-message", encodeURIComponent(error.rawMessage));
  return true;
}

/** Connect unary: the error is the whole (uncompressed, small) JSON body. */
async function connectErrorCorrected(
  res: UniversalServerResponse,
): Promise<UniversalServerResponse> {
  if (!isBytes(res.body) || res.header?.has("content-encoding")) return res;
  const chunks: Uint8Array[] = [];
  for await (const c of res.body) chunks.push(c);
  const bytes = Buffer.concat(chunks);
  let error: ConnectError;
  try {
    error = errorFromJsonBytes(bytes, undefined, new ConnectError("", Code.Unknown));
  } catch {
    error = new ConnectError("", Code.Unknown);
  }
  const restatedError = restated(error.code, error.rawMessage);
  if (restatedError === undefined) return { ...res, body: createAsyncIterable([bytes]) };
  const body = errorToJsonBytes(restatedError, {});
  const header = new Headers(res.header);
  header.set("content-length", String(body.byteLength));
  return {
    ...res,
    status: codeToHttpStatus(restatedError.code),
    header,
    body: createAsyncIterable([body]),
  };
}

/** gRPC-Web: each chunk is one whole frame (connect joins envelopes). */
async function* trailerFramesCorrected(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  for await (const frame of body) {
    // Only an uncompressed trailer frame (flag exactly 0x80) with one of those
    // statuses is parsed: a byte search, not a parse, for every other call's trailers.
    const bytes = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
    if (frame[0] !== trailerFlag || !RESTATED_STATUSES.some((s) => bytes.includes(s, 5))) {
      yield frame;
      continue;
    }
    const trailer = trailerParse(frame.subarray(5));
    if (!correctTrailer(trailer)) {
      yield frame;
      continue;
    }
    const data = trailerSerialize(trailer);
    const out = new Uint8Array(5 + data.byteLength);
    out[0] = trailerFlag;
    new DataView(out.buffer).setUint32(1, data.byteLength);
    out.set(data, 5);
    yield out;
  }
}

function grpcMessage(trailer: Headers): string {
  try {
    return decodeURIComponent(trailer.get("grpc-message") ?? "");
  } catch {
    return "";
  }
}

function isBytes(body: UniversalServerResponse["body"]): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}
