/**
 * Native gRPC clients for the bench: @grpc/grpc-js generic clients built from
 * the protobuf-es service descriptors (toBinary / fromBinary, no second code
 * generator), as any third-party gRPC caller would call the server. Each
 * client is its own HTTP/2 connection (a local subchannel pool: grpc-js
 * otherwise shares one connection between channels to the same address).
 *
 * `grpcJsSessiond` / `grpcJsEcho` expose the subset of the Connect clients'
 * shape that the rpc-* scripts use (promises and async iterables), so the
 * very same scripts measure either stack.
 */
import {
  create,
  type DescMessage,
  type DescService,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { EchoService } from "../../gen/bench/v1/echo_pb.js";
import { AppendRequestSchema, SessionService } from "../../gen/sessiond/v1/session_service_pb.js";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { newEntryId } from "../../src/core/ids.js";

type Generic = grpc.Client & Record<string, unknown>;

/** protobuf-es binary (de)serializers for grpc-js (requests may be init objects). */
export function serializer(schema: DescMessage): (value: object) => Buffer {
  return (value) => {
    const bytes = toBinary(schema, create(schema, value as never));
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

export function deserializer(schema: DescMessage): (bytes: Buffer) => object {
  return (bytes) => fromBinary(schema, bytes);
}

/** A grpc-js service definition of a protobuf-es service descriptor (client and server). */
export function serviceDefinition(service: DescService): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const m of service.methods) {
    definition[m.localName] = {
      path: `/${service.typeName}/${m.name}`,
      requestStream: m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming",
      responseStream: m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming",
      requestSerialize: serializer(m.input),
      requestDeserialize: deserializer(m.input),
      responseSerialize: serializer(m.output),
      responseDeserialize: deserializer(m.output),
    };
  }
  return definition;
}

/** host:port of an http:// URL. */
function target(url: string): string {
  return new URL(url).host;
}

function client(service: DescService, url: string): Generic {
  const Ctor = grpc.makeGenericClientConstructor(serviceDefinition(service), service.name);
  return new Ctor(target(url), grpc.credentials.createInsecure(), {
    "grpc.use_local_subchannel_pool": 1,
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
  }) as Generic;
}

type Unary<I extends DescMessage, O extends DescMessage> = (
  req: MessageInitShape<I>,
) => Promise<MessageShape<O>>;
type Stream<I extends DescMessage, O extends DescMessage> = (
  req: MessageInitShape<I>,
  opts?: { signal?: AbortSignal },
) => AsyncIterable<MessageShape<O>>;

function unary<I extends DescMessage, O extends DescMessage>(
  c: Generic,
  method: string,
): Unary<I, O> {
  const fn = c[method];
  if (typeof fn !== "function") throw new Error(`no method ${method}`);
  return (req) =>
    new Promise((resolve, reject) => {
      fn.call(c, req, (err: grpc.ServiceError | null, res: MessageShape<O>) =>
        err ? reject(err) : resolve(res),
      );
    });
}

function stream<I extends DescMessage, O extends DescMessage>(
  c: Generic,
  method: string,
): Stream<I, O> {
  const fn = c[method];
  if (typeof fn !== "function") throw new Error(`no method ${method}`);
  return (req, opts) => {
    const call = fn.call(c, req) as grpc.ClientReadableStream<MessageShape<O>>;
    const signal = opts?.signal;
    if (signal) {
      if (signal.aborted) call.cancel();
      else signal.addEventListener("abort", () => call.cancel(), { once: true });
    }
    return call as AsyncIterable<MessageShape<O>>;
  };
}

/** sessiond's two services over one grpc-js connection. */
export function grpcJsSessiond(url: string) {
  const store = client(StoreService, url);
  // The second service shares the first one's channel (one connection).
  const SessionCtor = grpc.makeGenericClientConstructor(
    serviceDefinition(SessionService),
    SessionService.name,
  );
  const session = new SessionCtor(target(url), grpc.credentials.createInsecure(), {
    channelOverride: store.getChannel(),
  }) as Generic;
  type S = typeof SessionService.method;
  type T = typeof StoreService.method;
  const append = unary<S["append"]["input"], S["append"]["output"]>(session, "append");
  return {
    store: {
      createSession: unary<T["createSession"]["input"], T["createSession"]["output"]>(
        store,
        "createSession",
      ),
      getSession: unary<T["getSession"]["input"], T["getSession"]["output"]>(store, "getSession"),
    },
    session: {
      // Ids are assigned here, like the TS client does (a retried Append stays idempotent).
      append: (req: MessageInitShape<S["append"]["input"]>) => {
        const r = create(AppendRequestSchema, req);
        for (const e of r.entries) if (e.id === "") e.id = newEntryId();
        return append(r);
      },
      getEntries: unary<S["getEntries"]["input"], S["getEntries"]["output"]>(session, "getEntries"),
      watchEntries: stream<S["watchEntries"]["input"], S["watchEntries"]["output"]>(
        session,
        "watchEntries",
      ),
    },
  };
}

/** The echo service over one grpc-js connection. */
export function grpcJsEcho(url: string) {
  const c = client(EchoService, url);
  type E = typeof EchoService.method;
  return {
    echo: unary<E["echo"]["input"], E["echo"]["output"]>(c, "echo"),
    subscribe: stream<E["subscribe"]["input"], E["subscribe"]["output"]>(c, "subscribe"),
    publish: unary<E["publish"]["input"], E["publish"]["output"]>(c, "publish"),
  };
}
