/**
 * SessionFeed on its own, fed by hand: numbering, the coalescing of
 * consecutive appends of one session, eviction beyond the capacity, and
 * which cursors can be resumed exactly.
 */
import { describe, expect, it } from "vitest";
import { expectCode } from "../../../test/support/fixtures.js";
import type {
  StorageEngine,
  StorageEvent,
  StorageEventType,
  StorageListener,
} from "../../storage/engine.js";
import { SessionFeed } from "./session-feed.js";

/** An engine that only takes subscriptions; `emit` plays an event to them. */
function eventSource(): {
  engine: StorageEngine;
  emit: (e: StorageEvent) => void;
  count: () => number;
} {
  const listeners = new Set<StorageListener>();
  const engine = {
    subscribe(l: StorageListener) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  } as unknown as StorageEngine;
  return {
    engine,
    emit: (e) => {
      for (const l of listeners) l(e);
    },
    count: () => listeners.size,
  };
}

const ev = (
  type: StorageEventType,
  sessionId: string,
  workspace = "ws",
  headSeq = 1,
): StorageEvent => ({
  type,
  workspace,
  sessionId,
  headSeq,
});

/** The feed's events of a workspace after n, as "n type id". */
const shown = (feed: SessionFeed, workspace = "ws", after = 0) =>
  feed.after(workspace, after).map(({ n, event }) => `${n} ${event.type} ${event.sessionId}`);

describe("SessionFeed", () => {
  it("numbers events from 1 and reports the newest number as head (0 before any)", () => {
    const { engine, emit } = eventSource();
    const feed = new SessionFeed(engine);
    expect(feed.head).toBe(0);
    emit(ev("created", "a"));
    emit(ev("created", "b"));
    expect(feed.head).toBe(2);
    expect(shown(feed)).toEqual(["1 created a", "2 created b"]);
    expect(shown(feed, "ws", 1)).toEqual(["2 created b"]);
  });

  it("coalesces consecutive appends of one session into the newest, renumbered", () => {
    const { engine, emit } = eventSource();
    const feed = new SessionFeed(engine);
    emit(ev("appended", "a", "ws", 2));
    emit(ev("appended", "a", "ws", 3));
    emit(ev("appended", "a", "ws", 4));
    expect(shown(feed)).toEqual(["3 appended a"]);
    expect(feed.after("ws", 0)[0]?.event.headSeq).toBe(4);
    expect(feed.head).toBe(3);
  });

  it("keeps apart appends of other sessions, of another workspace, and events of other kinds", () => {
    const { engine, emit } = eventSource();
    const feed = new SessionFeed(engine);
    emit(ev("created", "a"));
    emit(ev("appended", "a")); // after a created: kept
    emit(ev("appended", "b")); // another session: kept
    emit(ev("appended", "b", "other")); // same id, another workspace: kept
    emit(ev("appended", "b")); // follows the other workspace's: kept
    emit(ev("deleted", "b")); // a delete after an append: kept
    emit(ev("appended", "b")); // an append after a delete: kept
    expect(shown(feed)).toEqual([
      "1 created a",
      "2 appended a",
      "3 appended b",
      "5 appended b",
      "6 deleted b",
      "7 appended b",
    ]);
    expect(shown(feed, "other")).toEqual(["4 appended b"]);
  });

  it("keeps only the newest `capacity` events", () => {
    const { engine, emit } = eventSource();
    const feed = new SessionFeed(engine, 2);
    emit(ev("created", "a"));
    emit(ev("created", "b"));
    expect(shown(feed)).toEqual(["1 created a", "2 created b"]);
    emit(ev("created", "c"));
    expect(shown(feed)).toEqual(["2 created b", "3 created c"]);
  });

  it("resumes a cursor of its own epoch from the newest kept event's predecessor up to the head", () => {
    const { engine, emit } = eventSource();
    const feed = new SessionFeed(engine, 2);
    for (const id of ["a", "b", "c", "d"]) emit(ev("created", id)); // keeps 3 and 4
    expect(feed.resumePoint(feed.cursor(4))).toBe(4); // the head
    expect(feed.resumePoint(feed.cursor(3))).toBe(3);
    expect(feed.resumePoint(feed.cursor(2))).toBe(2); // n + 1 is the oldest kept: nothing missed
    expect(feed.resumePoint(feed.cursor(1))).toBeUndefined(); // event 2 is gone
    expect(feed.resumePoint(feed.cursor(0))).toBeUndefined();
    expect(feed.resumePoint(feed.cursor(5))).toBeUndefined(); // beyond the head
  });

  it("resumes the cursor of an empty feed at 0, and refuses one beyond its head", () => {
    const { engine } = eventSource();
    const feed = new SessionFeed(engine);
    expect(feed.resumePoint(feed.cursor(0))).toBe(0);
    expect(feed.resumePoint(feed.cursor(1))).toBeUndefined();
  });

  it("cannot resume a cursor of another feed's epoch, even with a number it has", () => {
    const { engine, emit } = eventSource();
    const feed = new SessionFeed(engine);
    const other = new SessionFeed(engine);
    expect(feed.epoch).toMatch(/^[0-9a-f]{8}$/);
    expect(other.epoch).not.toBe(feed.epoch);
    emit(ev("created", "a"));
    expect(feed.cursor(1)).toBe(`${feed.epoch}.1`);
    expect(feed.resumePoint(other.cursor(1))).toBeUndefined();
    expect(feed.resumePoint(other.cursor(0))).toBeUndefined();
  });

  it("reads cursor numbers of many digits", () => {
    const { engine, emit } = eventSource();
    const feed = new SessionFeed(engine);
    for (let i = 0; i < 12; i++) emit(ev("created", `s${i}`));
    expect(feed.resumePoint(feed.cursor(12))).toBe(12);
    expect(feed.resumePoint(`${feed.epoch}.999999999999999`)).toBeUndefined();
  });

  it("refuses a malformed cursor with INVALID_ARGUMENT", async () => {
    const { engine } = eventSource();
    const feed = new SessionFeed(engine);
    const good = feed.cursor(0);
    for (const bad of [
      "",
      "x",
      `x${good}`,
      `${good}x`,
      `${good} `,
      `${feed.epoch}.`,
      `${feed.epoch}.-1`,
      `${feed.epoch}.1234567890123456`, // 16 digits
      `${feed.epoch.slice(1)}.0`,
      `${feed.epoch.toUpperCase().replace(/[0-9]/g, "A")}.0`,
    ]) {
      await expectCode((async () => feed.resumePoint(bad))(), "INVALID_ARGUMENT", "after_cursor");
    }
  });

  it("calls its listeners after each event until they unsubscribe or it closes", () => {
    const { engine, emit, count } = eventSource();
    const feed = new SessionFeed(engine);
    const calls: string[] = [];
    const offA = feed.onEvent(() => calls.push(`a${feed.head}`));
    feed.onEvent(() => calls.push(`b${feed.head}`));
    emit(ev("created", "x"));
    expect(calls).toEqual(["a1", "b1"]);
    offA();
    emit(ev("created", "y"));
    expect(calls).toEqual(["a1", "b1", "b2"]);
    feed.close();
    expect(count()).toBe(0);
    emit(ev("created", "z"));
    expect(calls).toEqual(["a1", "b1", "b2"]);
    expect(feed.head).toBe(2);
  });

  it("close drops the listeners even when the engine still emits", () => {
    const listeners = new Set<StorageListener>();
    const engine = {
      subscribe(l: StorageListener) {
        listeners.add(l);
        return () => {}; // an engine that keeps calling
      },
    } as unknown as StorageEngine;
    const feed = new SessionFeed(engine);
    const calls: number[] = [];
    feed.onEvent(() => calls.push(feed.head));
    feed.close();
    for (const l of listeners) l(ev("created", "a"));
    expect(calls).toEqual([]);
  });
});
