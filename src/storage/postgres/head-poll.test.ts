import { afterEach, describe, expect, it, vi } from "vitest";
import type { StorageEvent } from "../engine.js";
import type { PgContext } from "./context.js";
import { HeadPoll, HURRIED_MS } from "./head-poll.js";
import { cacheKey } from "./session-cache.js";

/**
 * HeadPoll's pace, on a fake database (fake timers): the poll's query is
 * counted and answers the head `head`. Its PostgreSQL behaviour is in
 * notify.test.ts.
 */
function polled(intervalMs: number) {
  const state = { queries: 0, head: 1 };
  const ctx = {
    cache: { get: () => ({}) },
    db: (_what: string, run: () => Promise<unknown>) => run(),
    sql: () => {
      state.queries++;
      return Promise.resolve([{ workspace: "w", session_id: "s", head_seq: state.head }]);
    },
  } as unknown as PgContext;
  const events: StorageEvent[] = [];
  const poll = new HeadPoll(ctx, (e) => events.push(e), intervalMs);
  poll.loaded(cacheKey({ workspace: "w", sessionId: "s" }), 1);
  return { poll, state, events };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("HeadPoll's pace", () => {
  it("polls every interval; hurried, every HURRIED_MS for one interval more, then at its pace again", async () => {
    vi.useFakeTimers();
    const { poll, state } = polled(1000);
    poll.start();
    await vi.advanceTimersByTimeAsync(3000);
    expect(state.queries).toBe(3);

    state.queries = 0;
    poll.hurry();
    await vi.advanceTimersByTimeAsync(1000);
    // Ten hurried polls and the one at the interval (a poll already running is not run twice).
    expect(state.queries).toBeGreaterThanOrEqual(10);
    expect(state.queries).toBeLessThanOrEqual(11);

    await vi.advanceTimersByTimeAsync(HURRIED_MS * 2);
    state.queries = 0;
    await vi.advanceTimersByTimeAsync(3000);
    expect(state.queries).toBe(3);
    poll.stop();
  });

  it("a hurried poll tells of a head that moved; hurrying again restarts the window; stop ends it", async () => {
    vi.useFakeTimers();
    const { poll, state, events } = polled(60_000);
    poll.start();
    poll.hurry();
    state.head = 2;
    await vi.advanceTimersByTimeAsync(HURRIED_MS);
    expect(events).toEqual([{ type: "appended", workspace: "w", sessionId: "s", headSeq: 2 }]);

    await vi.advanceTimersByTimeAsync(50_000);
    poll.hurry(); // again, 50 s in: hurried until 110 s
    await vi.advanceTimersByTimeAsync(50_000); // 100 s: still hurried (the first window ended at 60 s)
    state.queries = 0;
    await vi.advanceTimersByTimeAsync(1000);
    expect(state.queries).toBeGreaterThanOrEqual(9);

    poll.stop();
    state.queries = 0;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(state.queries).toBe(0);
  });

  it("does not hurry a poll that is off (interval 0) or not started", async () => {
    vi.useFakeTimers();
    for (const [interval, start] of [
      [0, true],
      [1000, false],
    ] as const) {
      const { poll, state } = polled(interval);
      if (start) poll.start();
      poll.hurry();
      await vi.advanceTimersByTimeAsync(5000);
      expect(state.queries).toBe(0);
      poll.stop();
    }
  });
});
