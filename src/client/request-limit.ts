import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/** connect-node's refusal of a request over its writeMaxBytes, before sending it. */
const TRANSPORT_REFUSAL = /^message size (\d+) is larger than configured writeMaxBytes (\d+)$/;

/** A request the client refused to send: its size and the client's limit, in bytes. */
export interface RequestTooLarge {
  readonly bytes: number;
  readonly limit: number;
}

/**
 * The sizes of a request this client refused as over its `maxMessageBytes`,
 * or undefined for any other error: for a caller (the CLI) that names its
 * own setting in the message.
 */
export function requestTooLarge(err: unknown): RequestTooLarge | undefined {
  for (let e = err; e instanceof ConnectError; e = e.cause) {
    const m = TRANSPORT_REFUSAL.exec(e.rawMessage);
    if (e.code === Code.ResourceExhausted && m !== null) {
      return { bytes: Number(m[1]), limit: Number(m[2]) };
    }
  }
  return undefined;
}

/**
 * connect-node's refusal names its own option (writeMaxBytes), which a
 * caller of this client never set; the message says which of the caller's
 * settings to raise and what the server must allow as well. The transport's
 * error stays the cause.
 */
export function requestLimitInterceptor(): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      const refused = requestTooLarge(err);
      if (refused === undefined) throw err;
      throw new ConnectError(
        `request of ${refused.bytes} bytes is over the client's maxMessageBytes (${refused.limit}); the server must accept it too (its --max-message-bytes, and --max-entry-bytes for an entry that large)`,
        Code.ResourceExhausted,
        undefined,
        undefined,
        err,
      );
    }
  };
}
