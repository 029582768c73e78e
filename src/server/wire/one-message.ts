/**
 * The one request message of a server-streaming call, as connect's
 * interceptors and handlers take it (an async iterable) but also in plain
 * sight: the edge logs its fields and the handler takes it without reading
 * an iterator. The grpc-js front has the decoded request in hand; passing
 * it through an iterator would cost each stream three async generators and
 * their promises (the front's, the edge's read-ahead, the handler's).
 * Iterated, it yields the message once, like any other input.
 */
export class OneMessage<T> implements AsyncIterable<T> {
  constructor(readonly value: T) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    yield this.value;
  }
}
