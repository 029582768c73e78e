/**
 * Reads the user waits for (the entry or the state a click asked for) go
 * before the tree's background pages: the tree loader asks for its next
 * page only when none is in flight, so neither the server nor the page's
 * main thread is busy with a page of the tree when the answer comes.
 */
export class ReadPriority {
  private pending = 0;
  private readonly waiters: (() => void)[] = [];

  /** Runs a read the user waits for; background reads hold back until it ends. */
  async first<T>(read: () => Promise<T>): Promise<T> {
    this.pending++;
    try {
      return await read();
    } finally {
      this.pending--;
      if (this.pending === 0) for (const done of this.waiters.splice(0)) done();
    }
  }

  /** Resolves when no read the user waits for is in flight. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((done) => this.waiters.push(done));
  }
}
