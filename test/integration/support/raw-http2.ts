/**
 * Requests below every client library: one raw HTTP/2 exchange read to its
 * end (headers, trailers, body), and the gRPC / gRPC-Web / Connect
 * streaming envelopes of a body, for tests that send what no client would.
 * (An envelope is made by `envelope` of test/reliability/lib/hostile-wire.ts.)
 */
import type http2 from "node:http2";

export interface Exchange {
  readonly headers: http2.IncomingHttpHeaders;
  readonly trailers: http2.IncomingHttpHeaders;
  readonly body: Buffer;
  readonly stream: http2.ClientHttp2Stream;
}

/**
 * One POST on an existing HTTP/2 session, read to its end. `send`, when
 * given, sends the body itself (in pieces, late) instead of `body` at once.
 */
export function exchange(
  session: http2.ClientHttp2Session,
  path: string,
  contentType: string,
  body: Buffer,
  extra: http2.OutgoingHttpHeaders = {},
  send?: (stream: http2.ClientHttp2Stream) => void,
): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": contentType,
      te: "trailers",
      ...extra,
    });
    let headers: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      headers = h;
    });
    stream.on("trailers", (t) => {
      trailers = t;
    });
    stream.on("data", (d: Buffer) => chunks.push(d));
    stream.on("error", reject);
    stream.on("end", () => resolve({ headers, trailers, body: Buffer.concat(chunks), stream }));
    if (send === undefined) stream.end(body);
    else send(stream);
  });
}

/** The envelopes of a body: [flags, payload][]. */
export function envelopes(body: Buffer): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  for (let i = 0; i + 5 <= body.length; ) {
    const n = body.readUInt32BE(i + 1);
    out.push([body[i] as number, body.subarray(i + 5, i + 5 + n)]);
    i += 5 + n;
  }
  return out;
}
