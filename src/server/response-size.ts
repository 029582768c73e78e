import {
  create,
  type DescMessage,
  fromBinary,
  type Message,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

/** Content types whose messages are protobuf binary; anything else is treated as JSON. */
const BINARY =
  /^application\/(grpc|grpc\+proto|grpc-web|grpc-web\+proto|proto|connect\+proto)(;|$)/i;

/**
 * Sizes each response in the codec the client asked for and refuses one
 * over `maxBytes` (RESOURCE_EXHAUSTED, naming the flag), at the edge where
 * the call is logged. connect-node checks its `writeMaxBytes` only when it
 * serialises, after every interceptor, with a message that names its own
 * setting. For binary codecs the encoding made for sizing is handed on as
 * the message's raw fields (protobuf-es writes `$unknown` fields verbatim,
 * in order), so connect-node's serialisation is a copy, not a second
 * encoding; JSON is encoded twice.
 */
export function responseLimit(
  schema: DescMessage,
  contentType: string | null,
  maxBytes: number,
): <T extends Message>(message: T) => T {
  if (contentType !== null && BINARY.test(contentType)) {
    return (message) => {
      const bytes = toBinary(schema, message);
      check(bytes.length, maxBytes);
      const encoded = create(schema) as typeof message;
      // With no fields of its own, Empty keeps every field as an unknown one.
      encoded.$unknown = fromBinary(EmptySchema, bytes).$unknown;
      return encoded;
    };
  }
  return (message) => {
    check(Buffer.byteLength(toJsonString(schema, message)), maxBytes);
    return message;
  };
}

function check(size: number, maxBytes: number): void {
  if (size > maxBytes) {
    throw new ConnectError(
      `response of ${size} bytes exceeds the server's max message size ${maxBytes} (--max-message-bytes)`,
      Code.ResourceExhausted,
    );
  }
}
