import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

export interface RetryOptions {
  /** Attempts in total, including the first (default 5). */
  maxAttempts?: number;
  /** First backoff, doubled each attempt with jitter (default 50 ms). */
  baseDelayMs?: number;
  /** Longest backoff (default 2 s). */
  maxDelayMs?: number;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

/**
 * Retries unary calls that failed with UNAVAILABLE (server restarting,
 * shutting down, connection refused) with exponential backoff and jitter.
 * Safe because idsInterceptor has fixed every id before the first attempt.
 * Streams are not retried here: watchEntriesResumable resumes them by seq.
 */
export function retryInterceptor(opts: RetryOptions = {}): Interceptor {
  const maxAttempts = opts.maxAttempts ?? 5;
  const base = opts.baseDelayMs ?? 50;
  const max = opts.maxDelayMs ?? 2000;
  return (next) => async (req) => {
    if (req.stream) return next(req);
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(req);
      } catch (err) {
        const ce = ConnectError.from(err);
        if (ce.code !== Code.Unavailable || attempt >= maxAttempts || req.signal.aborted) throw err;
        const delay = Math.min(max, base * 2 ** (attempt - 1));
        await sleep(delay / 2 + Math.random() * (delay / 2), req.signal);
      }
    }
  };
}
