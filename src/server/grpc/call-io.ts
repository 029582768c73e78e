import { create, type DescMessage, isMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type * as grpc from "@grpc/grpc-js";
import { OneMessage } from "../wire/one-message.js";
import {
  isPushSource,
  type PushControl,
  type PushSink,
  type PushSource,
} from "../wire/push-stream.js";
import type { AnyResponse, Begun, CallEnd } from "./call-context.js";
import { Undecodable } from "./definition.js";
import { parseError, statusOf } from "./wire-status.js";

/**
 * Messages in and out of a grpc-js call, as connect-node hands them to and
 * takes them from a handler: the single input of a server stream, request
 * streams, normalised responses, and writing a response stream with
 * backpressure.
 */

export type Writer =
  | grpc.ServerWritableStream<unknown, unknown>
  | grpc.ServerDuplexStream<unknown, unknown>;

/**
 * Writes a streaming response: each message as the client can take it
 * (write() returning false waits for 'drain'), then the status. An error
 * becomes its gRPC code and raw message; nothing else reaches the client.
 */
export async function pump(call: Writer, c: Begun, response: Promise<AnyResponse>): Promise<void> {
  const ctx = c.ctx;
  const schema = ctx.method.output;
  try {
    const res = await response;
    if (res.stream && isPushSource(res.message)) {
      new CallWriter(call, c.end, schema).start(res.message);
      return;
    }
    const messages = res.stream ? res.message : [res.message];
    // Normalised here rather than by a generator around the handler's: each
    // generator in the chain costs every message on every stream.
    for await (const message of messages as AsyncIterable<unknown>) {
      if (call.cancelled || call.destroyed) break;
      if (!call.write(normalize(schema, message))) await drained(call, ctx.signal);
    }
    c.finish();
    if (!call.cancelled && !call.destroyed) call.end();
  } catch (err) {
    c.finish();
    if (!call.cancelled && !call.destroyed) call.emit("error", statusOf(err));
  }
}

/**
 * Writes a pushed response stream (see push-stream.ts) to a grpc-js call:
 * each message as it comes, a pause when write() returns false until
 * 'drain' (or the call's close or abort), then the error's status. What it
 * holds while the stream waits is the call, its end and the control.
 */
class CallWriter implements PushSink<unknown> {
  private control: PushControl | undefined;
  private done = false;

  constructor(
    private readonly call: Writer,
    private readonly ending: CallEnd,
    private readonly schema: DescMessage,
  ) {}

  start(source: PushSource<unknown>): void {
    this.control = source.push(this);
  }

  message(message: unknown): boolean {
    const call = this.call;
    if (call.cancelled || call.destroyed) {
      this.stop();
      return false;
    }
    if (call.write(normalize(this.schema, message))) return true;
    drained(call, this.ending.signal).then(this.resume);
    return false;
  }

  end(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.ending.finish();
    const call = this.call;
    if (!call.cancelled && !call.destroyed) call.emit("error", statusOf(err));
  }

  private readonly resume = (): void => {
    if (this.done) return;
    const call = this.call;
    if (call.cancelled || call.destroyed) this.stop();
    else this.control?.resume();
  };

  /** The client is gone: nothing more to send, and no status to send it. */
  private stop(): void {
    if (this.done) return;
    this.done = true;
    this.control?.close();
    this.ending.finish();
  }
}

function drained(call: Writer, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      call.off("drain", done);
      call.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    call.on("drain", done);
    call.on("close", done);
    signal.addEventListener("abort", done);
  });
}

/**
 * The request stream of a client-streaming or bidi call. Not `for await` over
 * the call itself: at the end of the input that destroys the Duplex, and a
 * destroyed call can no longer send its responses' status.
 */
export async function* readable(call: import("node:stream").Readable): AsyncGenerator<unknown> {
  for await (const message of call.iterator({ destroyOnReturn: false })) {
    if (message instanceof Undecodable) throw parseError(message);
    yield message;
  }
}

/** connect's ensureSingle: the one input of a server-streaming call. */
export async function single(input: AsyncIterable<unknown>): Promise<unknown> {
  if (input instanceof OneMessage) return input.value;
  const it = input[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done === true) {
    throw new ConnectError(
      "protocol error: missing input message for server-streaming method",
      Code.Unimplemented,
    );
  }
  const second = await it.next();
  if (second.done !== true) {
    throw new ConnectError(
      "protocol error: received extra input message for server-streaming method",
      Code.Unimplemented,
    );
  }
  return first.value;
}

/** connect's normalize: handlers may return init objects; the wire wants messages. */
export function normalize(schema: DescMessage, value: unknown): unknown {
  return isMessage(value, schema) ? value : create(schema, value as never);
}
