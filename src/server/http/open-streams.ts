import type http2 from "node:http2";

const counts = new WeakMap<http2.ServerHttp2Session, { open: number }>();

/**
 * The number of open streams of a session, counted ONCE per session for
 * everyone who asks (the idle timeout and the keepalive): Node exposes no
 * such count, and a counter of their own each would add a listener and a
 * closure to every call's stream.
 */
export function openStreams(session: http2.ServerHttp2Session): { readonly open: number } {
  let c = counts.get(session);
  if (c === undefined) {
    const counter = { open: 0 };
    const closed = () => counter.open--;
    session.on("stream", (stream: http2.ServerHttp2Stream) => {
      counter.open++;
      stream.once("close", closed);
    });
    counts.set(session, counter);
    c = counter;
  }
  return c;
}
