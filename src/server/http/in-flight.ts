/** Counts unary calls in flight, so shutdown can wait for appends to finish. */
export class InFlight {
  private count = 0;
  private idle: Array<() => void> = [];

  enter(): void {
    this.count++;
  }

  leave(): void {
    this.count--;
    if (this.count === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Resolves when no call is in flight (or after `timeoutMs`). */
  drained(timeoutMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
