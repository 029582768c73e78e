/**
 * QuietClock: one timer for many watches. A member idle for a whole
 * interval is told once (never before the interval, at most 1/STEPS
 * after), a busy one never, and the timer runs only while it has members.
 * Driven by fake timers: no assertion depends on the box's speed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { QUIET_STEPS, type Quiet, QuietClock } from "./quiet-clock.js";

function member(idle = true): Quiet & { told: number } {
  return {
    quietTicks: 0,
    idle,
    told: 0,
    quietFor() {
      this.told++;
    },
  };
}

describe("QuietClock", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("tells an idle member after one whole interval, never before, and at most one step late", () => {
    const clock = new QuietClock(800);
    const m = member();
    clock.add(m);
    vi.advanceTimersByTime(800);
    expect(m.told).toBe(0);
    vi.advanceTimersByTime(800 / QUIET_STEPS);
    expect(m.told).toBe(1);
    // Counting starts again: the next one after another whole interval.
    vi.advanceTimersByTime(800);
    expect(m.told).toBe(1);
    vi.advanceTimersByTime(800 / QUIET_STEPS);
    expect(m.told).toBe(2);
    clock.stop();
  });

  it("never tells a member that is busy, and counts from zero once it waits again", () => {
    const clock = new QuietClock(800);
    const m = member(false);
    clock.add(m);
    vi.advanceTimersByTime(5000);
    expect(m.told).toBe(0);
    // A member resets its count when it starts waiting (as EntryFollower does).
    (m as { idle: boolean }).idle = true;
    m.quietTicks = 0;
    vi.advanceTimersByTime(800);
    expect(m.told).toBe(0);
    vi.advanceTimersByTime(100);
    expect(m.told).toBe(1);
    clock.stop();
  });

  it("runs a timer only while it has members", () => {
    const clock = new QuietClock(800);
    expect(vi.getTimerCount()).toBe(0);
    const a = member();
    const b = member();
    clock.add(a);
    clock.add(b);
    expect(vi.getTimerCount()).toBe(1);
    clock.delete(a);
    expect(vi.getTimerCount()).toBe(1);
    clock.delete(b);
    expect(vi.getTimerCount()).toBe(0);
    expect(clock.size).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(a.told + b.told).toBe(0);
  });
});
