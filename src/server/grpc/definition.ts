import { type DescMessage, type DescService, fromBinary, toBinary } from "@bufbuild/protobuf";
import type * as grpc from "@grpc/grpc-js";
import { preEncoded } from "../wire/response-size.js";

/**
 * A grpc-js service definition for a protobuf-es service descriptor: paths
 * `/${typeName}/${method}` and protobuf-es binary (de)serializers, so the
 * descriptors the Connect handlers use are the only generated code.
 */
export function grpcServiceDefinition(service: DescService): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const m of service.methods) {
    definition[m.localName] = {
      path: `/${service.typeName}/${m.name}`,
      requestStream: m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming",
      responseStream: m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming",
      requestSerialize: serializer(m.input),
      requestDeserialize: deserializer(m.input),
      responseSerialize: serializer(m.output),
      responseDeserialize: deserializer(m.output),
      originalName: m.localName,
    };
  }
  return definition;
}

/** A response the edge already encoded (response-size.ts) is sent as those bytes. */
function serializer(schema: DescMessage) {
  return (value: unknown) => {
    const bytes = preEncoded(value) ?? toBinary(schema, value as never);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

/**
 * A request message that does not parse. grpc-js answers a throwing
 * deserializer with INTERNAL "Error deserializing request"; handing the
 * failure to the handler lets it answer INVALID_ARGUMENT, as for any bad input.
 */
export class Undecodable {
  constructor(readonly reason: string) {}
}

function deserializer(schema: DescMessage) {
  return (bytes: Buffer) => {
    try {
      return fromBinary(schema, bytes);
    } catch (err) {
      return new Undecodable(err instanceof Error ? err.message : String(err));
    }
  };
}
