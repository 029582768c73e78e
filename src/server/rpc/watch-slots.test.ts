import { describe, expect, it } from "vitest";
import { WatchSlots } from "./watch-slots.js";

describe("WatchSlots as metrics see it", () => {
  it("ranks the most watched sessions without naming them, largest first", () => {
    const slots = new WatchSlots(100, 10);
    const counts = { a: 3, b: 7, c: 1, d: 5, e: 2, f: 4 };
    for (const [key, n] of Object.entries(counts)) for (let i = 0; i < n; i++) slots.acquire(key);
    expect(slots.top(3)).toEqual([7, 5, 4]);
    expect(slots.top(10)).toEqual([7, 5, 4, 3, 2, 1]);
    expect(slots.top(0)).toEqual([]);
  });

  it("counts WatchSessions streams (no session) apart, in the total too", () => {
    const slots = new WatchSlots(100, 10);
    const release = slots.acquire(undefined);
    slots.acquire("a");
    expect([slots.open, slots.unkeyed, ...slots.top(5)]).toEqual([2, 1, 1]);
    release();
    release();
    expect([slots.open, slots.unkeyed]).toEqual([1, 0]);
  });

  it("forgets a session once its last watcher leaves", () => {
    const slots = new WatchSlots(100, 10);
    const release = slots.acquire("a");
    release();
    expect(slots.top(5)).toEqual([]);
  });
});
