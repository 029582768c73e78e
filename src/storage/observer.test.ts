import { describe, expect, it } from "vitest";
import { recordSpans } from "../../test/support/otel.js";
import { inSpan, tracingEnabled } from "./observer.js";

/**
 * Without an SDK the store and the engines make no span and no context at
 * all (inSpan runs its function as it is); with one registered, even after
 * start, every span is made and recorded.
 */
describe("tracing on and off", () => {
  it("follows an SDK registered and unregistered while the process runs", async () => {
    expect(tracingEnabled()).toBe(false);
    const seen: boolean[] = [];
    await inSpan("off", async (span) => {
      seen.push(span.isRecording());
    });
    const recorder = recordSpans();
    try {
      expect(tracingEnabled()).toBe(true);
      await inSpan("on", async (span) => {
        seen.push(span.isRecording());
      });
      expect(recorder.spans().map((s) => s.name)).toEqual(["on"]);
    } finally {
      await recorder.stop();
    }
    expect(tracingEnabled()).toBe(false);
    expect(seen).toEqual([false, true]);
  });
});
