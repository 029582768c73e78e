/**
 * The edge interceptor on a server stream that may be pushed (push-stream.ts):
 * pushed, its messages are held to the max message size and its errors
 * leave mapped to gRPC codes and recorded for the log line, as when the same
 * stream is iterated; a message over the limit ends the stream and closes
 * its source.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  SessionService,
  type WatchEntriesResponse,
  WatchEntriesResponseSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";
import { notFound } from "../core/errors.js";
import { edgeInterceptor } from "./edge.js";
import { InFlight } from "./http/in-flight.js";
import { type CallRecord, callRecordKey } from "./ops/call-log.js";
import { OneMessage } from "./wire/one-message.js";
import type { PushControl, PushSink, PushSource } from "./wire/push-stream.js";

const method = SessionService.method.watchEntries;
const small = create(WatchEntriesResponseSchema, {
  event: { case: "heartbeat", value: { headSeq: 1n } },
});
const big = create(WatchEntriesResponseSchema, {
  event: { case: "entry", value: { id: "x".repeat(500) } },
});

/** A push source that sends `messages` then, if given, fails with `err`; it notes its close. */
function source(messages: WatchEntriesResponse[], err?: unknown) {
  const state = { closed: false };
  const src: PushSource<WatchEntriesResponse> = {
    async *[Symbol.asyncIterator]() {
      yield* messages;
      if (err !== undefined) throw err;
    },
    push(sink) {
      queueMicrotask(() => {
        for (const m of messages) {
          if (state.closed) return;
          sink.message(m);
        }
        if (err !== undefined && !state.closed) sink.end(err);
      });
      return {
        resume() {},
        close() {
          state.closed = true;
        },
      } satisfies PushControl;
    },
  };
  return { src, state };
}

/** Runs the edge around a handler that returns `src`; returns the stream the transport gets. */
async function throughEdge(
  src: PushSource<WatchEntriesResponse>,
  record: CallRecord,
  request: AsyncIterable<unknown> = (async function* () {
    yield { session: "s", workspace: "" };
  })(),
) {
  const values = createContextValues();
  values.set(callRecordKey, record);
  const edge = edgeInterceptor(new InFlight(), 200);
  const next = edge(
    async (req) =>
      ({
        stream: true,
        service: req.service,
        method: req.method,
        header: new Headers(),
        trailer: new Headers(),
        message: src,
      }) as never,
  );
  const res = await next({
    stream: true,
    service: SessionService,
    method,
    requestMethod: "POST",
    url: "http://localhost/sessiond.v1.SessionService/WatchEntries",
    signal: new AbortController().signal,
    header: new Headers({ "content-type": "application/grpc" }),
    contextValues: values,
    message: request,
  } as never);
  return res.message as unknown as PushSource<WatchEntriesResponse>;
}

function pushAll(stream: PushSource<WatchEntriesResponse>) {
  const got: unknown[] = [];
  let done: (err: unknown) => void = () => {};
  const ended = new Promise<unknown>((resolve) => {
    done = resolve;
  });
  const sink: PushSink<WatchEntriesResponse> = {
    message(m) {
      got.push(m);
      return true;
    },
    end: done,
  };
  stream.push(sink);
  return { got, ended };
}

describe("edgeInterceptor, pushed streams", () => {
  it("passes messages under the limit and ends with the source's error mapped to its gRPC code", async () => {
    const record: CallRecord = {};
    const { src } = source([small, small], notFound("session gone"));
    const { got, ended } = pushAll(await throughEdge(src, record));
    const err = await ended;
    expect(got).toHaveLength(2);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect(record.error).toBeDefined();
    expect(record.method).toBe("sessiond.v1.SessionService/WatchEntries");
    expect(record.session).toBe("s");
  });

  it("logs the fields of a request handed over as a OneMessage, as of one read from an iterator", async () => {
    const record: CallRecord = {};
    const { src } = source([small]);
    await throughEdge(src, record, new OneMessage({ session: "one", workspace: "ws" }));
    expect(record).toMatchObject({ session: "one", workspace: "ws" });
  });

  it("ends a stream whose message is over the max size with RESOURCE_EXHAUSTED and closes its source", async () => {
    const { src, state } = source([small, big, small]);
    const { got, ended } = pushAll(await throughEdge(src, {}));
    const err = (await ended) as ConnectError;
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toContain("--max-message-bytes");
    expect(got).toHaveLength(1);
    expect(state.closed).toBe(true);
  });

  it("iterated, the same stream ends with the same error", async () => {
    const { src } = source([small, big]);
    const stream = await throughEdge(src, {});
    const got: unknown[] = [];
    await expect(
      (async () => {
        for await (const m of stream) got.push(m);
      })(),
    ).rejects.toMatchObject({ code: Code.ResourceExhausted });
    expect(got).toHaveLength(1);
  });
});
