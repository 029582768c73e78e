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
import { unparseable } from "./errors.js";

/**
 * A request message that does not parse is bad input: INVALID_ARGUMENT, as
 * the grpc-js path answers it (see `unparseable` in errors.ts). connect-es
 * 2.1 answers it INTERNAL "parse binary: ...", and for a unary method it
 * does so before any interceptor runs, so neither the edge nor errors.ts
 * ever sees the error: the answer is already encoded. (A streaming method
 * reads its request inside the interceptor chain, where errors.ts maps
 * it.) No option of connect-es reaches its parse, so this wrapper of the
 * router's unary handlers corrects the code of such a finished answer, in
 * each wire format connect-node speaks:
 * - Connect unary: HTTP 500 with a JSON error body → HTTP 400, code
 *   "invalid_argument";
 * - gRPC-Web: the trailer frame at the end of the body, `grpc-status: 13`
 *   → 3 (the body is the only place; its frames are passed through one by
 *   one, and only a trailer frame is parsed);
 * - gRPC (`--grpc-server connect`): the trailers, complete by the time the
 *   handler resolves for a call that failed before its first message.
 * Only connect's own "parse binary: " message is touched: an INTERNAL of
 * ours keeps its code. The helpers used (error JSON, trailer frames) are
 * connect's private exports; @connectrpc/connect is pinned to an exact
 * version in package.json, and the server test of each protocol fails if
 * their shape changes.
 */
export function answerUnparseableAsInvalidArgument(router: ConnectRouter): void {
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

const INTERNAL = String(Code.Internal);
/** How connect writes that status into a gRPC-Web trailer frame (trailerSerialize). */
const INTERNAL_STATUS = `grpc-status: ${INTERNAL}\r\n`;

function corrected(
  res: UniversalServerResponse,
): UniversalServerResponse | Promise<UniversalServerResponse> {
  const type = res.header?.get("content-type") ?? "";
  if (type.startsWith("application/grpc-web")) {
    return isBytes(res.body) ? { ...res, body: trailerFramesCorrected(res.body) } : res;
  }
  if (type.startsWith("application/grpc")) {
    const trailer = res.trailer;
    if (
      trailer?.get("grpc-status") === INTERNAL &&
      unparseable(Code.Internal, grpcMessage(trailer))
    ) {
      trailer.set("grpc-status", String(Code.InvalidArgument));
    }
    return res;
  }
  if (res.status === codeToHttpStatus(Code.Internal) && type === "application/json") {
    return connectErrorCorrected(res);
  }
  return res;
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
  if (!unparseable(error.code, error.rawMessage)) {
    return { ...res, body: createAsyncIterable([bytes]) };
  }
  const body = errorToJsonBytes(new ConnectError(error.rawMessage, Code.InvalidArgument), {});
  const header = new Headers(res.header);
  header.set("content-length", String(body.byteLength));
  return {
    ...res,
    status: codeToHttpStatus(Code.InvalidArgument),
    header,
    body: createAsyncIterable([body]),
  };
}

/** gRPC-Web: each chunk is one whole frame (connect joins envelopes). */
async function* trailerFramesCorrected(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  for await (const frame of body) {
    // Only an uncompressed trailer frame (flag exactly 0x80) saying INTERNAL is
    // parsed: a byte search, not a parse, for every other call's trailers.
    if (
      frame[0] !== trailerFlag ||
      !Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).includes(INTERNAL_STATUS, 5)
    ) {
      yield frame;
      continue;
    }
    const trailer = trailerParse(frame.subarray(5));
    if (
      trailer.get("grpc-status") !== INTERNAL ||
      !unparseable(Code.Internal, grpcMessage(trailer))
    ) {
      yield frame;
      continue;
    }
    trailer.set("grpc-status", String(Code.InvalidArgument));
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
