import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordSpans, type SpanRecorder } from "../../test/support/otel.js";
import { say } from "../../test/support/search-fixtures.js";
import { MemoryEngine } from "../storage/memory.js";
import { SessionStore } from "./session-store.js";

/** The store's own span of an Append, as an OpenTelemetry SDK records it. */

let recorder: SpanRecorder;
beforeAll(() => {
  recorder = recordSpans();
});
afterAll(() => recorder.stop());

describe("store spans", () => {
  it("an Append is one store.append span carrying the number of entries", async () => {
    const store = new SessionStore(new MemoryEngine());
    const session = await store.open(undefined, (await store.create()).session.id);
    recorder.reset();
    await session.append([say("one"), say("two")]);
    const spans = recorder.spans().filter((s) => s.name === "store.append");
    expect(spans).toHaveLength(1);
    expect(spans[0]?.attributes["sessiond.entries"]).toBe(2);
  });
});
