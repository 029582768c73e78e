import { Code } from "@connectrpc/connect";

/**
 * What a client received: an RPC status (code 0 for OK, else a Code), or,
 * for a request refused before it was an RPC (unknown path, wrong HTTP
 * method or content type), only an HTTP error status.
 */
export type SentStatus =
  | { readonly code: 0 | Code; readonly message: string }
  | { readonly http: number };

/** What a response sent, as far as its status goes. */
export interface SentResponse {
  readonly httpStatus: number;
  /** The HTTP/2 response headers (a trailers-only gRPC answer carries its status there). */
  readonly headers: Readonly<Record<string, unknown>> | undefined;
  /** The trailers (gRPC's status). */
  readonly trailers: Readonly<Record<string, unknown>>;
  /** The body's last chunk: a stream's trailer or end-of-stream frame, a Connect unary body. */
  readonly last: Uint8Array | undefined;
}

/**
 * The status a response carried to the client: gRPC's grpc-status trailer
 * (or header), gRPC-Web's trailer frame, Connect's end-of-stream message or
 * unary error body, else an HTTP error status. connect-node answers some
 * requests before any interceptor runs (a request over the size limit, an
 * undecodable body, an unknown path) and encodes every response after them,
 * so this is the one place that knows what every client got. Undefined when
 * no status was sent (the client left first) or it cannot be read (a
 * compressed frame).
 */
export function sentStatus(contentType: string, sent: SentResponse): SentStatus | undefined {
  const ct = contentType.toLowerCase();
  let status: SentStatus | undefined;
  if (ct.startsWith("application/grpc-web")) status = sent.last && grpcWebTrailer(sent.last);
  else if (ct.startsWith("application/grpc")) status = grpcStatus(sent);
  else if (ct.startsWith("application/connect+")) status = sent.last && connectEndStream(sent.last);
  else if (sent.httpStatus === 200) status = { code: 0, message: "" };
  else status = sent.last && connectError(sent.last);
  return status ?? httpStatus(sent.httpStatus);
}

function grpcStatus(sent: SentResponse): SentStatus | undefined {
  for (const fields of [sent.trailers, sent.headers]) {
    const code = fields?.["grpc-status"];
    if (code !== undefined) return status(Number(code), percentDecoded(fields?.["grpc-message"]));
  }
  return undefined;
}

const TRAILER_FRAME = 0x80;
const END_STREAM_FRAME = 0x02;

/** The payload of a whole, uncompressed envelope with exactly these flags. */
function envelope(chunk: Uint8Array, flags: number): Buffer | undefined {
  const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (b.length < 5 || b[0] !== flags || b.readUInt32BE(1) !== b.length - 5) return undefined;
  return b.subarray(5);
}

function grpcWebTrailer(chunk: Uint8Array): SentStatus | undefined {
  const data = envelope(chunk, TRAILER_FRAME);
  if (data === undefined) return undefined;
  const fields = new Map<string, string>();
  for (const line of data.toString("utf8").split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0) fields.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  const code = fields.get("grpc-status");
  return code === undefined
    ? undefined
    : status(Number(code), percentDecoded(fields.get("grpc-message")));
}

function connectEndStream(chunk: Uint8Array): SentStatus | undefined {
  const data = envelope(chunk, END_STREAM_FRAME);
  if (data === undefined) return undefined;
  const end = parseJson(data) as { error?: unknown } | undefined;
  if (end === undefined) return undefined;
  return end.error === undefined ? { code: 0, message: "" } : connectErrorOf(end.error);
}

function connectError(body: Uint8Array): SentStatus | undefined {
  return connectErrorOf(parseJson(Buffer.from(body.buffer, body.byteOffset, body.byteLength)));
}

function connectErrorOf(json: unknown): SentStatus | undefined {
  const { code, message } = (json ?? {}) as { code?: unknown; message?: unknown };
  const c = typeof code === "string" ? CODE_BY_NAME.get(code) : undefined;
  return c === undefined
    ? undefined
    : { code: c, message: typeof message === "string" ? message : "" };
}

/** Connect's code names ("resource_exhausted"). */
const CODE_BY_NAME = new Map<string, Code>(
  Object.values(Code)
    .filter((c): c is Code => typeof c === "number")
    .map((c) => [Code[c].replace(/[A-Z]/g, (l, i: number) => (i ? "_" : "") + l.toLowerCase()), c]),
);

function httpStatus(httpCode: number): SentStatus | undefined {
  return httpCode === 200 ? undefined : { http: httpCode };
}

function status(code: number, message: string): SentStatus | undefined {
  if (code === 0) return { code: 0, message: "" };
  return Code[code] === undefined ? undefined : { code: code as Code, message };
}

function percentDecoded(value: unknown): string {
  const s = Array.isArray(value) ? value.join(",") : String(value ?? "");
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function parseJson(data: Buffer): unknown {
  try {
    return JSON.parse(data.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}
