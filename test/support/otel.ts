import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  trace,
} from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/**
 * The active context kept in AsyncLocalStorage, as an application's SDK
 * setup registers it (@opentelemetry/context-async-hooks, which the project
 * does not depend on, is this class): without a context manager the API
 * has no active span across awaits, and spans would not nest.
 */
class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => this.with(ctx, () => fn(...args))) as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** The spans finished since the last `reset()`, recorded in memory by a real SDK. */
export interface SpanRecorder {
  spans(): ReadableSpan[];
  reset(): void;
  /** Unregisters the SDK: the API is a no-op again. */
  stop(): Promise<void>;
}

/** Registers an OpenTelemetry SDK for this process that keeps every span in memory. */
export function recordSpans(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  context.setGlobalContextManager(new AsyncLocalContextManager());
  trace.setGlobalTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    async stop() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
