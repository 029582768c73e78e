import type { DescMethod, Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { isSpanContextValid, type Span } from "@opentelemetry/api";
import type { InFlight } from "./http/in-flight.js";
import { type CallRecord, callRecordKey } from "./ops/call-log.js";
import { endRpcSpan, startRpcSpan, withContext } from "./ops/trace-context.js";
import { toConnectError } from "./wire/errors.js";
import { OneMessage } from "./wire/one-message.js";
import {
  isPushSource,
  type PushControl,
  type PushSink,
  type PushSource,
} from "./wire/push-stream.js";
import { responseLimit, sendsPreEncodedKey } from "./wire/response-size.js";

/** The log fields of a request message: its workspace and session, when it has them. */
function describe(record: CallRecord, method: string, message: unknown): void {
  const m = (message ?? {}) as { workspace?: unknown; session?: unknown };
  record.method = method;
  if (typeof m.workspace === "string") record.workspace = m.workspace || "default";
  if (typeof m.session === "string") record.session = m.session.slice(0, 128);
}

/**
 * The single input of a server-streaming call, read ahead so that its
 * fields can be logged, and the input again for the handler (which still
 * checks that no second message follows).
 */
async function readFirst<T>(
  input: AsyncIterable<T>,
): Promise<{ first: T | undefined; input: AsyncIterable<T> }> {
  const it = input[Symbol.asyncIterator]();
  const head = await it.next();
  async function* again(): AsyncGenerator<T> {
    if (head.done) return;
    yield head.value;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  }
  return { first: head.done ? undefined : head.value, input: again() };
}

/**
 * The outermost interceptor: every error leaves as a ConnectError with the
 * right code (domain errors mapped in errors.ts; anything else INTERNAL with
 * no details), every response is held to the max message size, what the
 * call was and how it ended is recorded for its log line (call-log.ts), and
 * the call runs in its OpenTelemetry span, a child of the caller's
 * `traceparent` (trace-context.ts), so the store's spans nest under it.
 */
export function edgeInterceptor(inFlight: InFlight, maxMessageBytes: number): Interceptor {
  return (next) => async (req) => {
    const record = req.contextValues.get(callRecordKey) ?? {};
    const method = methodName(req.method);
    const limit = responseLimit(
      req.method.output,
      req.header.get("content-type"),
      maxMessageBytes,
      req.contextValues.get(sendsPreEncodedKey),
    );
    const unary = !req.stream;
    if (unary) inFlight.enter();
    const { span, ctx } = startRpcSpan(method, req.header);
    const traced = span.spanContext();
    if (isSpanContextValid(traced)) record.traceId = traced.traceId;
    try {
      let call = req;
      if (!req.stream) describe(record, method, req.message);
      else if (req.message instanceof OneMessage) describe(record, method, req.message.value);
      else if (req.method.methodKind === "server_streaming") {
        const { first, input } = await readFirst(req.message);
        describe(record, method, first);
        call = { ...req, message: input };
      } else describe(record, method, undefined);
      const res = await withContext(ctx, () => next(call));
      if (!res.stream) {
        const message = limit(res.message);
        record.succeeded = true;
        endRpcSpan(span, 0);
        return { ...res, message };
      }
      // Apart from this call's scope: a long stream keeps only what it uses.
      const message = isPushSource(res.message)
        ? guardedPush(res.message, limit, record, span)
        : guarded(res.message, limit, record, span);
      return { ...res, message };
    } catch (err) {
      record.error = err;
      const error = toConnectError(err);
      endRpcSpan(span, error.code);
      throw error;
    } finally {
      if (unary) inFlight.leave();
    }
  };
}

/** "service/Method" of each method, made once rather than per call. */
const methodNames = new WeakMap<DescMethod, string>();

function methodName(method: DescMethod): string {
  let name = methodNames.get(method);
  if (name === undefined) {
    name = `${method.parent.typeName}/${method.name}`;
    methodNames.set(method, name);
  }
  return name;
}

/** The error streams end with when the server shuts down: clients resume elsewhere or later. */
export function shuttingDown(): ConnectError {
  return new ConnectError(
    "server is shutting down; retry (watchers: resume from your last seq)",
    Code.Unavailable,
  );
}

type Limit = <T extends Message>(message: T) => T;

/** A response stream held to the size limit; how it ended goes to its record and span. */
async function* guarded(
  source: AsyncIterable<Message>,
  limit: Limit,
  record: CallRecord,
  span: Span,
) {
  let code = Code.Canceled as number;
  try {
    for await (const message of source) yield limit(message);
    record.succeeded = true;
    code = 0;
  } catch (err) {
    record.error = err;
    const error = toConnectError(err);
    code = error.code;
    throw error;
  } finally {
    endRpcSpan(span, code);
  }
}

/** `guarded` for a stream that may be pushed: iterated it is `guarded`, pushed the same rules. */
function guardedPush(
  source: PushSource<Message>,
  limit: Limit,
  record: CallRecord,
  span: Span,
): PushSource<Message> {
  return {
    [Symbol.asyncIterator]: () => guarded(source, limit, record, span),
    push: (sink) => new EdgeSink(sink, limit, record, span).start(source),
  };
}

/** Between a pushed stream and its writer: the size limit, error mapping, record and span. */
class EdgeSink implements PushSink<Message>, PushControl {
  private inner: PushControl | undefined;
  private ended = false;

  constructor(
    private readonly sink: PushSink<Message>,
    private readonly limit: Limit,
    private readonly record: CallRecord,
    private readonly span: Span,
  ) {}

  start(source: PushSource<Message>): PushControl {
    this.inner = source.push(this);
    return this;
  }

  message(message: Message): boolean {
    let limited: Message;
    try {
      limited = this.limit(message);
    } catch (err) {
      this.inner?.close();
      this.end(err);
      return false;
    }
    return this.sink.message(limited);
  }

  end(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.record.error = err;
    const error = toConnectError(err);
    endRpcSpan(this.span, error.code);
    this.sink.end(error);
  }

  resume(): void {
    this.inner?.resume();
  }

  close(): void {
    this.inner?.close();
    if (this.ended) return;
    this.ended = true;
    endRpcSpan(this.span, Code.Canceled);
  }
}
