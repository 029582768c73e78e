import type { IncomingMessage, ServerResponse } from "node:http";
import http2, { type Http2ServerRequest, type Http2ServerResponse } from "node:http2";

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;
type Handler = (req: Request, res: Response) => void;

/** How much of a request's unread rest is read and dropped, and how long after the answer. */
export interface UnreadRestLimits {
  readonly maxBytes: number;
  readonly graceMs: number;
}

/**
 * The unread rest of a refused upload (a 5 MB request is refused at its
 * length prefix): enough for any message a client would send to a server
 * with the default limit, and read at loopback or LAN speed well within
 * the grace period.
 */
export const UNREAD_REST_LIMITS: UnreadRestLimits = {
  maxBytes: 64 * 1024 * 1024,
  graceMs: 10_000,
};

/**
 * Reads and drops what is left of a request once connect-node stops
 * reading it. connect-node answers a request over its readMaxBytes (or one
 * that does not parse) before reading the rest, and returns the body's
 * iterator, which by Node's default destroys the request: the stream
 * (HTTP/2) or connection (HTTP/1.1) is left half read, and the client's
 * upload waits for flow-control window that never comes. Its unsent rest
 * stays queued in the client: Node's HTTP/2 client counts it against the
 * connection and refuses new streams after a few such requests
 * (ENHANCE_YOUR_CALM); an HTTP/1.1 connection hangs. So the request is
 * kept, and its rest read and dropped as it comes (nothing is buffered):
 * the upload ends and the stream closes cleanly. Bounded: past `maxBytes`,
 * or `graceMs` after the answer, the stream is reset (NO_ERROR once
 * answered, as RFC 9113 8.1 has a server stop an upload it needs no more;
 * CANCEL before) or the HTTP/1.1 connection closed. A body never read at
 * all (refused by its content-length) Node handles itself: HTTP/2 resets
 * the stream NO_ERROR with the answer, HTTP/1.1 drops the body.
 */
export function discardUnreadRest(
  handler: Handler,
  limits: UnreadRestLimits = UNREAD_REST_LIMITS,
): Handler {
  return (req, res) => {
    const rest = new UnreadRest(req, res, limits);
    Object.defineProperty(req, Symbol.asyncIterator, {
      configurable: true,
      value: () => rest.body(),
    });
    handler(req, res);
  };
}

class UnreadRest {
  private discarding = false;
  private done = false;
  private answered = false;
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly req: Request,
    res: Response,
    private readonly limits: UnreadRestLimits,
  ) {
    whenAnswered(res, () => {
      this.answered = true;
      if (this.discarding) this.startGrace();
    });
  }

  /** The body's iterator: like Node's own, but returning it early keeps the request and drops its rest. */
  body(): AsyncIterableIterator<Buffer> {
    const inner = this.req.iterator({ destroyOnReturn: false });
    const it: AsyncIterableIterator<Buffer> = {
      next: () => inner.next(),
      return: async (value?: unknown) => {
        const r = await inner.return?.(value);
        this.discard();
        return r ?? { done: true, value: undefined };
      },
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }

  private discard(): void {
    const req = this.req;
    if (this.discarding || req.readableEnded || req.destroyed) return;
    this.discarding = true;
    req.on("data", this.dropped);
    // A reset or a lost connection ends the rest like its end does.
    req.on("error", this.stop);
    req.once("end", this.stop);
    req.once("close", this.stop);
    req.resume();
    if (this.answered) this.startGrace();
  }

  private startGrace(): void {
    if (this.done) return;
    this.timer = setTimeout(this.cut, this.limits.graceMs);
    // Shutdown closes what is left: this timer need not hold the process.
    this.timer.unref();
  }

  private readonly dropped = (chunk: Buffer) => {
    this.bytes += chunk.byteLength;
    if (this.bytes > this.limits.maxBytes) this.cut();
  };

  private readonly stop = () => {
    this.done = true;
    clearTimeout(this.timer);
    this.req.off("data", this.dropped);
    this.req.off("end", this.stop);
    this.req.off("close", this.stop);
  };

  /** Gives up on the rest: the stream reset, or the HTTP/1.1 connection closed. */
  private readonly cut = () => {
    if (this.done) return;
    this.stop();
    const req = this.req;
    if ("stream" in req) {
      if (!req.stream.closed) {
        const code = this.answered
          ? http2.constants.NGHTTP2_NO_ERROR
          : http2.constants.NGHTTP2_CANCEL;
        req.stream.close(code);
      }
    } else req.socket.destroy();
  };
}

/** Calls `answered` once the whole response has been written (HTTP/2: its stream's writable side). */
function whenAnswered(res: Response, answered: () => void): void {
  const writable = "stream" in res ? res.stream : res;
  if (writable.writableFinished) answered();
  else writable.once("finish", answered);
}
