/**
 * Wakeup: a sticky "look again" flag. A notification is never lost, a
 * burst costs one wake-up, and a wait ends at the first of notification,
 * timeout and abort, leaving nothing behind.
 */
import { describe, expect, it } from "vitest";
import { settle } from "../../../test/support/fixtures.js";
import { Wakeup } from "./wakeup.js";

const LONG = 60_000; // a timeout no test waits for
const live = () => new AbortController().signal;

describe("Wakeup", () => {
  it("a notification before the wait is kept, and a burst of them is consumed by one wait", async () => {
    const w = new Wakeup();
    w.notify();
    w.notify();
    expect(await w.wait(LONG, live())).toBe("notified");
    expect(await w.wait(5, live())).toBe("timeout");
  });

  it("a notification during the wait ends it, and is consumed by it", async () => {
    const w = new Wakeup();
    const waiting = w.wait(LONG, live());
    w.notify();
    expect(await waiting).toBe("notified");
    expect(await w.wait(5, live())).toBe("timeout");
  });

  it("a wait with nothing to see ends with its timeout, and a later notification is kept for the next one", async () => {
    const w = new Wakeup();
    const started = Date.now();
    expect(await w.wait(30, live())).toBe("timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    w.notify();
    expect(await w.wait(LONG, live())).toBe("notified");
  });

  it("an abort ends the wait, before or during it, even with a notification pending", async () => {
    const w = new Wakeup();
    const ac = new AbortController();
    const waiting = w.wait(LONG, ac.signal);
    ac.abort();
    expect(await waiting).toBe("aborted");
    w.notify();
    expect(await w.wait(LONG, ac.signal)).toBe("aborted");
  });

  it("a notification that arrives after a timeout is not lost", async () => {
    const w = new Wakeup();
    expect(await w.wait(5, live())).toBe("timeout");
    w.notify();
    w.notify();
    expect(await w.wait(LONG, live())).toBe("notified");
    expect(await w.wait(5, live())).toBe("timeout");
  });
});

describe("Wakeup after a finished wait", () => {
  const stuck = (ms: number) => new Promise((r) => setTimeout(() => r("stuck"), ms));

  it("the finished wait's timer does not disturb the next wait", async () => {
    const w = new Wakeup();
    const first = w.wait(20, live());
    w.notify();
    expect(await first).toBe("notified");
    const second = w.wait(LONG, live());
    await settle(80); // the first wait's timeout has long passed
    w.notify();
    expect(await Promise.race([second, stuck(5000)])).toBe("notified");
  });

  it("an abort of the finished wait's signal does not disturb the next wait", async () => {
    const w = new Wakeup();
    const old = new AbortController();
    const first = w.wait(LONG, old.signal);
    w.notify();
    expect(await first).toBe("notified");
    const second = w.wait(LONG, live());
    old.abort();
    w.notify();
    expect(await Promise.race([second, stuck(5000)])).toBe("notified");
  });
});
