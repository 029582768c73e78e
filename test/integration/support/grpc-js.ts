import {
  create,
  type DescMessage,
  type DescService,
  fromBinary,
  toBinary,
} from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";

/**
 * A plain @grpc/grpc-js client for a protobuf-es service descriptor: the
 * generic client constructor with protobuf-es binary serializers, as any
 * third-party gRPC client would call the server (no Connect code involved).
 */
export function grpcJsClient(service: DescService, address: string): grpc.Client & GenericMethods {
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
  const Ctor = grpc.makeGenericClientConstructor(definition, service.name);
  return new Ctor(address, grpc.credentials.createInsecure()) as grpc.Client & GenericMethods;
}

// biome-ignore lint/suspicious/noExplicitAny: generic client methods are untyped by design
type GenericMethods = Record<string, any>;

function serializer(schema: DescMessage) {
  // Accept plain init objects as well as messages.
  return (value: object) => Buffer.from(toBinary(schema, create(schema, value as never)));
}

function deserializer(schema: DescMessage) {
  return (bytes: Buffer) => fromBinary(schema, bytes);
}

/** Calls a unary method of a generic client; rejects with the grpc-js ServiceError. */
export function unary<T = unknown>(
  client: grpc.Client & GenericMethods,
  method: string,
  request: object,
  timeoutMs = 15_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const fn = client[method];
    if (typeof fn !== "function") {
      reject(new Error(`no method ${method}`));
      return;
    }
    fn.call(
      client,
      request,
      new grpc.Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res)),
    );
  });
}

/** Opens a server stream of a generic client. */
export function serverStream(
  client: grpc.Client & GenericMethods,
  method: string,
  request: object,
): grpc.ClientReadableStream<unknown> {
  const fn = client[method];
  if (typeof fn !== "function") throw new Error(`no method ${method}`);
  return fn.call(client, request) as grpc.ClientReadableStream<unknown>;
}
