import { ConnectError } from "@connectrpc/connect";

/**
 * A server stream drained in the background into `items`, so a test can
 * wait for a condition with a deadline instead of blocking on `next()`.
 */
export interface Collected<T> {
  readonly items: T[];
  /** Resolves when the stream ends: undefined for a clean end, else the error. */
  readonly ended: Promise<ConnectError | undefined>;
  /** The end, once known (undefined while open or after a clean end). */
  error(): ConnectError | undefined;
  isEnded(): boolean;
  /** Waits until `pred(items)` holds; fails after `timeoutMs` or when the stream ends first. */
  waitFor(pred: (items: readonly T[]) => boolean, timeoutMs: number, what: string): Promise<void>;
  /** Waits for the end of the stream (fails after `timeoutMs`). */
  waitEnd(timeoutMs: number): Promise<ConnectError | undefined>;
}

export function collect<T>(stream: AsyncIterable<T>): Collected<T> {
  const items: T[] = [];
  const listeners = new Set<() => void>();
  let ended = false;
  let endError: ConnectError | undefined;
  const notify = () => {
    for (const l of [...listeners]) l();
  };
  const endedPromise = (async () => {
    try {
      for await (const item of stream) {
        items.push(item);
        notify();
      }
    } catch (err) {
      endError = ConnectError.from(err);
    }
    ended = true;
    notify();
    return endError;
  })();

  const waitFor = (pred: (items: readonly T[]) => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pred(items)) {
          done();
          resolve();
        } else if (ended) {
          done();
          reject(
            new Error(
              `stream ended (${endError ? `${endError.code}: ${endError.rawMessage}` : "cleanly"}) before: ${what} (${items.length} items)`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(`timed out after ${timeoutMs} ms waiting for: ${what} (${items.length} items)`),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });

  return {
    items,
    ended: endedPromise,
    error: () => endError,
    isEnded: () => ended,
    waitFor,
    async waitEnd(timeoutMs) {
      await waitFor(() => false, timeoutMs, "the end of the stream").catch((err: Error) => {
        if (!ended) throw err;
      });
      return endError;
    },
  };
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it returns true (or throws after `timeoutMs`). */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(20);
  }
}
