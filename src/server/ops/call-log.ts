import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse, OutgoingHttpHeaders } from "node:http2";
import {
  Code,
  type ContextValues,
  createContextKey,
  createContextValues,
} from "@connectrpc/connect";
import { isUnexpected, sentNoRequest, toConnectError } from "../wire/errors.js";
import { type SentResponse, type SentStatus, sentStatus } from "../wire/sent-status.js";
import { isoNow, type Logger } from "./logger.js";

/** What the edge interceptor learns about a call; connect-node refuses some before it runs. */
export interface CallRecord {
  method?: string;
  workspace?: string;
  session?: string;
  /** The handler returned, or its stream ended, without an error. */
  succeeded?: boolean;
  /** What the handler (or reading the request) threw. */
  error?: unknown;
  /** The call's trace id: the caller's (traceparent) or its own span's. */
  traceId?: string;
}

/**
 * Told about every finished call, for metrics: `method` is a method the
 * server serves ("service/Method"), or undefined for a request refused
 * before any handler (unknown path, undecodable); `code` as in the log line.
 */
export type CallObserver = (method: string | undefined, code: string, seconds: number) => void;

/** Hands the edge interceptor the record of the request it runs for (undefined outside CallLog). */
export const callRecordKey = createContextKey<CallRecord | undefined>(undefined, {
  description: "sessiond call record",
});

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

/**
 * One JSON log line per request (method, workspace, session, code, ms,
 * trace id; never a message's content or a token), written when its
 * response is done, with the code the client received as
 * sent on the wire (a call with no request message is the client's
 * cancel: `sentNoRequest` in errors.ts). Requests connect-node refuses before any interceptor
 * (over the size limit, undecodable, unknown path) are logged too, named by
 * their path. Unexpected errors are logged with their stack on the server
 * side only.
 */
export class CallLog {
  private readonly records = new WeakMap<Request, CallRecord>();

  constructor(
    private readonly logger: Logger,
    private readonly observe: CallObserver | undefined,
  ) {}

  /** connect-node's `contextValues` option: carries the request's record to the interceptors. */
  readonly contextValues = (req: Request): ContextValues => {
    const values = createContextValues();
    values.set(callRecordKey, this.records.get(req));
    return values;
  };

  /** The record of a request `wrap` is serving (for a handler that stands in for connect-node's). */
  recordOf(req: Request): CallRecord | undefined {
    return this.records.get(req);
  }

  /** Wraps connect-node's request handler. */
  wrap(handler: (req: Request, res: Response) => void): (req: Request, res: Response) => void {
    return (req, res) => {
      const start = performance.now();
      const record: CallRecord = {};
      this.records.set(req, record);
      let logged = false;
      const done = (sent: SentResponse | undefined) => {
        if (logged) return;
        logged = true;
        const end = performance.now();
        this.later(() => {
          const status = sent && sentStatus(String(req.headers["content-type"] ?? ""), sent);
          this.finish(lineOf(req.url, record, status, start, end), record);
        });
      };
      tapResponse(res, done);
      // A response that never ends: the client left (or reset the stream) first.
      res.once("close", () => done(undefined));
      handler(req, res);
    };
  }

  /**
   * The log of a native gRPC call served on a raw HTTP/2 stream (by
   * grpc-js, not through connect-node's compat layer): its caller reports
   * the status as sent (the headers of a trailers-only answer, or the
   * trailers) and the stream's close (grpc/stream-tap.ts). The line
   * carries `"via": "grpc-js"` so it shows which server answered.
   */
  stream(path: string | undefined): StreamCallLog {
    return new StreamCallLog(this, path);
  }

  /**
   * Runs `write` (the line of a call that just ended) once the JS of this
   * turn of the event loop is done, or at exit. Why: a call ends when its
   * last bytes are handed to HTTP/2 (trailers, or the end of a Connect
   * response), which writes them to the socket only after that JS returns;
   * making the line and telling the metrics first delayed every answer
   * (~30 µs of a native gRPC Append, timed inside the server).
   */
  later(write: (() => void) | DeferredLine): void {
    deferred.push(write);
    if (deferred.length > 1) return;
    if (!exitHooked) {
      exitHooked = true;
      process.once("exit", writeDeferred);
    }
    setImmediate(writeDeferred);
  }

  /** Writes a finished call's line (and tells the observer). */
  finish(line: Record<string, unknown>, record: CallRecord): void {
    this.observe?.(record.method, line.code as string, (line.ms as number) / 1000);
    this.logger.writeOwned(line.error === undefined ? "info" : "error", line);
  }
}

/**
 * The log of one native gRPC stream: the record the edge interceptor fills
 * in, and the status as sent, written once when the call ends. One object
 * with methods, not closures: a watch stream keeps it while it is open.
 */
export class StreamCallLog implements DeferredLine {
  /** What the edge interceptor learns about the call. */
  readonly record: CallRecord = {};
  private readonly start = performance.now();
  private end = 0;
  private headers: OutgoingHttpHeaders | undefined;
  private trailers: OutgoingHttpHeaders | undefined;
  /** The status as sent, when the one who sent it says so (`answered`). */
  private status: SentStatus | undefined;
  private logged = false;

  constructor(
    private readonly log: CallLog,
    private readonly path: string | undefined,
  ) {}

  /** The response headers went out (`end`: with the status, trailers-only). */
  responded(headers: OutgoingHttpHeaders | undefined, end: boolean): void {
    this.headers = headers;
    if (end) this.done(undefined);
  }

  /**
   * The call is over: the trailers it sent, or undefined (a trailers-only
   * answer, or closed with no status sent: the client left first).
   */
  done(trailers: OutgoingHttpHeaders | undefined): void {
    if (this.logged) return;
    this.logged = true;
    this.end = performance.now();
    this.trailers = trailers;
    this.log.later(this);
  }

  /**
   * The call is over with `status`, sent by a caller that knows it (the
   * front's own Append, grpc/direct-append.ts): the line needs no reading
   * of the headers or trailers.
   */
  answered(status: SentStatus): void {
    if (this.logged) return;
    this.status = status;
    this.done(undefined);
  }

  writeLine(): void {
    const headers = this.headers;
    const sent =
      this.status ??
      (headers === undefined
        ? undefined
        : sentStatus("application/grpc", {
            httpStatus: Number(headers[":status"] ?? 200),
            headers,
            trailers: this.trailers ?? {},
            last: undefined,
          }));
    const line = lineOf(this.path, this.record, sent, this.start, this.end);
    line.via = "grpc-js";
    this.log.finish(line, this.record);
  }
}

/** A line written once the turn's JS is done (CallLog.later). */
export interface DeferredLine {
  writeLine(): void;
}

/**
 * Calls `done` with what the response sent when connect-node ends it. Its
 * end, not the stream's close: the stream of an answered oversize upload
 * stays open until the client stops sending.
 */
function tapResponse(res: Response, done: (sent: SentResponse) => void): void {
  const methods = res as unknown as Record<string, (...args: unknown[]) => unknown>;
  let last: Uint8Array | undefined;
  const trailers: Record<string, unknown> = {};
  const tap = (name: string, before: (args: unknown[]) => void) => {
    const original = methods[name]?.bind(res);
    if (original === undefined) return;
    methods[name] = (...args) => {
      before(args);
      return original(...args);
    };
  };
  tap("write", (args) => {
    if (args[0] instanceof Uint8Array) last = args[0];
  });
  tap("addTrailers", (args) => Object.assign(trailers, args[0]));
  tap("end", (args) => {
    if (args[0] instanceof Uint8Array) last = args[0];
    done({
      httpStatus: res.statusCode,
      headers: "stream" in res ? res.stream?.sentHeaders : undefined,
      trailers,
      last,
    });
  });
}

/** Lines of ended calls waiting to be written (CallLog.later), for every CallLog. */
const deferred: ((() => void) | DeferredLine)[] = [];
let exitHooked = false;

function writeDeferred(): void {
  for (const write of deferred.splice(0)) {
    if (typeof write === "function") write();
    else write.writeLine();
  }
}

function lineOf(
  url: string | undefined,
  record: CallRecord,
  sent: SentStatus | undefined,
  start: number,
  end: number,
): Record<string, unknown> {
  const line: Record<string, unknown> = {
    time: isoNow(),
    method: record.method ?? (url ?? "").split("?")[0]?.slice(1, 200),
  };
  if (record.workspace !== undefined) line.workspace = record.workspace;
  if (record.session !== undefined) line.session = record.session;
  if (record.traceId !== undefined) line.trace = record.traceId;
  if (sent !== undefined && "http" in sent) {
    line.code = `HTTP ${sent.http}`;
    line.ms = msBetween(start, end);
    return line;
  }
  // Without a status on the wire the client left before the answer: its own
  // cancel; so did a client that sent no request (sentNoRequest).
  const code =
    sent !== undefined && sentNoRequest(sent.code, sent.message)
      ? Code.Canceled
      : (sent?.code ??
        (record.error !== undefined
          ? toConnectError(record.error).code
          : record.succeeded
            ? 0
            : Code.Canceled));
  line.code = code === 0 ? "ok" : Code[code];
  line.ms = msBetween(start, end);
  if (record.error !== undefined && isUnexpected(record.error)) {
    const err = record.error;
    line.error = err instanceof Error ? (err.stack ?? err.message) : String(err);
  } else if (code === Code.Internal || code === Code.Unknown) {
    line.error = sent?.message;
  }
  return line;
}

const msBetween = (start: number, end: number) => Math.round((end - start) * 100) / 100;
