/**
 * A sticky wake-up flag for watch loops. Notifications only say "look
 * again": the loop re-reads the log, so a burst of notifications costs one
 * read, and a notification that arrives while the loop is busy is not lost
 * (the flag stays set until the next wait consumes it).
 */
export class Wakeup {
  private pending = false;
  private wake: (() => void) | undefined;

  notify(): void {
    this.pending = true;
    this.wake?.();
  }

  /** Waits for a notification, the timeout or the abort signal, whichever comes first. */
  wait(timeoutMs: number, signal: AbortSignal): Promise<"notified" | "timeout" | "aborted"> {
    if (signal.aborted) return Promise.resolve("aborted");
    if (this.pending) {
      this.pending = false;
      return Promise.resolve("notified");
    }
    return new Promise((resolve) => {
      const done = (result: "notified" | "timeout" | "aborted") => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.wake = undefined;
        this.pending = false;
        resolve(result);
      };
      const onAbort = () => done("aborted");
      const timer = setTimeout(() => done("timeout"), timeoutMs);
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: `done` removes the listener whatever ends the wait, so `once` changes nothing
      signal.addEventListener("abort", onAbort, { once: true });
      this.wake = () => done("notified");
    });
  }
}
