import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { isUnexpected, toConnectError } from "./errors.js";

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

interface Fields {
  method: string;
  workspace?: string;
  session?: string;
}

function fieldsOf(method: string, message: unknown): Fields {
  const m = (message ?? {}) as { workspace?: unknown; session?: unknown };
  const fields: Fields = { method };
  if (typeof m.workspace === "string") fields.workspace = m.workspace || "default";
  if (typeof m.session === "string") fields.session = m.session.slice(0, 128);
  return fields;
}

/**
 * The outermost interceptor: every error leaves as a ConnectError with the
 * right code (domain errors mapped in errors.ts; anything else INTERNAL with
 * no details), and every call writes one JSON log line (method, workspace,
 * session, code, ms). Unexpected errors are logged with their stack on the
 * server side only.
 */
export function edgeInterceptor(log: (line: string) => void, inFlight: InFlight): Interceptor {
  const write = (fields: Fields, start: number, err?: unknown) => {
    const code = err === undefined ? "ok" : Code[toConnectError(err).code];
    const line: Record<string, unknown> = {
      time: new Date().toISOString(),
      ...fields,
      code,
      ms: Math.round((performance.now() - start) * 100) / 100,
    };
    if (err !== undefined && isUnexpected(err)) {
      line.error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    }
    log(JSON.stringify(line));
  };

  return (next) => async (req) => {
    const start = performance.now();
    const method = `${req.service.typeName}/${req.method.name}`;
    const fields = fieldsOf(method, req.stream ? undefined : req.message);
    if (!req.stream) inFlight.enter();
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (err) {
      write(fields, start, err);
      throw toConnectError(err);
    } finally {
      if (!req.stream) inFlight.leave();
    }
    if (!res.stream) {
      write(fields, start);
      return res;
    }
    const source = res.message;
    async function* guarded() {
      try {
        yield* source;
        write(fields, start);
      } catch (err) {
        write(fields, start, err);
        throw toConnectError(err);
      }
    }
    return { ...res, message: guarded() };
  };
}

/** The error streams end with when the server shuts down: clients resume elsewhere or later. */
export function shuttingDown(): ConnectError {
  return new ConnectError(
    "server is shutting down; retry (watchers: resume from your last seq)",
    Code.Unavailable,
  );
}
