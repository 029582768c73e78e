import http, { type IncomingMessage } from "node:http";
import http2, { type Http2ServerRequest } from "node:http2";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { discardUnreadRest, UNREAD_REST_LIMITS, type UnreadRestLimits } from "./unread-rest.js";

type Request = IncomingMessage | Http2ServerRequest;
type Answer = (req: Request, res: http.ServerResponse | http2.Http2ServerResponse) => void;

const BODY = Buffer.alloc(1024 * 1024, 0x78);

/** Reads the first chunk of the body and answers, as connect-node refuses an oversize message. */
const refuseAfterFirstChunk: Answer = (req, res) => {
  void (async () => {
    for await (const _ of req) break;
    res.end("refused");
  })();
};

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** Each request's end (the rest read), by arrival. */
type Ends = Promise<void>[];

async function listen(
  kind: "h1" | "h2",
  answer: Answer,
  limits: UnreadRestLimits = UNREAD_REST_LIMITS,
): Promise<{ port: number; ends: Ends }> {
  const ends: Ends = [];
  const handler = discardUnreadRest((req, res) => {
    ends.push(new Promise((resolve) => req.once("end", resolve)));
    answer(req, res);
  }, limits);
  const server = kind === "h2" ? http2.createServer(handler) : http.createServer(handler);
  // As sessiond's own (--idle-timeout-ms): Node's 5 s would close a stalled connection too.
  if (server instanceof http.Server) server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const sockets = new Set<net.Socket>();
  server.on("connection", (s: net.Socket) => sockets.add(s));
  closers.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { port: (server.address() as net.AddressInfo).port, ends };
}

/** An HTTP/2 POST of `body`, ended or left open; its answer and the stream's reset code. */
async function post2(
  port: number,
  body: Buffer,
  end: boolean,
): Promise<{ answer: string; rstCode: number | undefined }> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  closers.push(() => session.destroy());
  const stream = session.request({ ":method": "POST", ":path": "/" });
  if (end) stream.end(body);
  else stream.write(body);
  let answer = "";
  stream.on("data", (d: Buffer) => {
    answer += d.toString();
  });
  stream.on("error", () => {});
  await new Promise((resolve) => stream.once("close", resolve));
  return { answer, rstCode: stream.rstCode };
}

describe("the unread rest of a request over HTTP/2", () => {
  it("is read to its end when the handler stopped reading, and the stream closes without a reset", async () => {
    const { port, ends } = await listen("h2", refuseAfterFirstChunk);
    const r = await post2(port, BODY, true);
    expect(r).toEqual({ answer: "refused", rstCode: http2.constants.NGHTTP2_NO_ERROR });
    await ends[0];
  });

  it("past maxBytes, the stream of an answered request is reset NO_ERROR", async () => {
    const { port } = await listen("h2", refuseAfterFirstChunk, {
      maxBytes: 64 * 1024,
      graceMs: 60_000,
    });
    // Never ended: only the server's reset closes the stream.
    const r = await post2(port, BODY, false);
    expect(r).toEqual({ answer: "refused", rstCode: http2.constants.NGHTTP2_NO_ERROR });
  });

  it("an upload that stalls after the answer is reset NO_ERROR after graceMs", async () => {
    const { port } = await listen("h2", refuseAfterFirstChunk, {
      maxBytes: BODY.length,
      graceMs: 20,
    });
    const r = await post2(port, Buffer.from("x"), false);
    expect(r).toEqual({ answer: "refused", rstCode: http2.constants.NGHTTP2_NO_ERROR });
  });
});

/** Writes an HTTP/1.1 POST promising BODY's length and sending `sent` of it; what came back once the server closed. */
async function stalledPost1(port: number, sent: number): Promise<string> {
  const socket = net.connect(port, "127.0.0.1");
  closers.push(() => socket.destroy());
  socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY.length}\r\n\r\n`);
  socket.write(BODY.subarray(0, sent));
  let got = "";
  socket.on("data", (d: Buffer) => {
    got += d.toString("latin1");
  });
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("close", resolve));
  return got;
}

const ANSWERED_1 = /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n(7\r\n)?refused/;

/** An HTTP/1.1 request on `agent`: its answer and whether it reused a connection. */
function request1(
  port: number,
  agent: http.Agent,
  body: Buffer | undefined,
): Promise<{ answer: string; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { port, host: "127.0.0.1", method: body ? "POST" : "GET", path: "/", agent },
      (res) => {
        let answer = "";
        res.on("data", (d: Buffer) => {
          answer += d.toString();
        });
        res.on("end", () => resolve({ answer, reused: req.reusedSocket }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("the unread rest of a request over HTTP/1.1", () => {
  it("is read to its end, and the connection takes the next request", async () => {
    const { port, ends } = await listen("h1", refuseAfterFirstChunk);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    closers.push(() => agent.destroy());
    expect(await request1(port, agent, BODY)).toEqual({ answer: "refused", reused: false });
    await ends[0];
    expect(await request1(port, agent, undefined)).toEqual({ answer: "refused", reused: true });
  });

  it("a connection whose upload stalls after the answer is closed after graceMs", async () => {
    const { port } = await listen("h1", refuseAfterFirstChunk, {
      maxBytes: BODY.length,
      graceMs: 20,
    });
    expect(await stalledPost1(port, 3)).toMatch(ANSWERED_1);
  });
});
