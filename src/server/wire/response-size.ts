import {
  create,
  type DescMessage,
  fromBinary,
  type Message,
  toJsonString,
} from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createContextKey } from "@connectrpc/connect";
import { encodeResponse } from "../../core/codec/response-binary.js";

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
 * encoding; JSON is encoded twice. A call whose serialiser reads the
 * encoding itself (`sendsPreEncoded`: the grpc-js path) gets an empty
 * message that carries it (`preEncoded`), with no parse and no copy.
 */
export function responseLimit(
  schema: DescMessage,
  contentType: string | null,
  maxBytes: number,
  sendsPreEncoded = false,
): <T extends Message>(message: T) => T {
  if (sendsPreEncoded || (contentType !== null && BINARY.test(contentType))) {
    const memo = sendsPreEncoded ? carriers : unknownCarriers;
    return (message) => {
      const known = memo.get(message);
      if (known !== undefined) return known as typeof message;
      const bytes = encodeResponse(schema, message);
      check(bytes.length, maxBytes);
      const encoded = create(schema) as typeof message & Carrier;
      if (sendsPreEncoded) encoded[ENCODED] = bytes;
      // With no fields of its own, Empty keeps every field as an unknown one.
      else encoded.$unknown = fromBinary(EmptySchema, bytes).$unknown;
      memo.set(message, encoded);
      return encoded;
    };
  }
  return (message) => {
    check(Buffer.byteLength(toJsonString(schema, message)), maxBytes);
    return message;
  };
}

/**
 * The encoding of each response object while it lives, per carrier kind. A
 * response sent on many streams (one WatchEntries response per entry for all
 * its watchers: watch-entries.ts) is encoded once. Responses are never
 * changed after a handler returns them, so the object is the key.
 */
const carriers = new WeakMap<object, Message>();
const unknownCarriers = new WeakMap<object, Message>();

function check(size: number, maxBytes: number): void {
  if (size > maxBytes) throw responseTooLarge(size, maxBytes);
}

/** The refusal of a response of `size` bytes over `maxBytes`. */
export function responseTooLarge(size: number, maxBytes: number): ConnectError {
  return new ConnectError(
    `response of ${size} bytes exceeds the server's max message size ${maxBytes} (--max-message-bytes)`,
    Code.ResourceExhausted,
  );
}

/** Set on calls whose response serialiser takes `preEncoded` bytes (the grpc-js front's). */
export const sendsPreEncodedKey = createContextKey(false, {
  description: "responses may carry their encoding (preEncoded)",
});

const ENCODED = Symbol("sessiond.encoded");
interface Carrier {
  [ENCODED]?: Uint8Array;
}

/** The binary encoding `responseLimit` made of a response, when it carries one. */
export function preEncoded(message: unknown): Uint8Array | undefined {
  return typeof message === "object" && message !== null
    ? (message as Carrier)[ENCODED]
    : undefined;
}
