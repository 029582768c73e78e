/**
 * The loop of a watch of one session, driven directly over a memory engine
 * and a hub: which reads it makes, when it sends heartbeats, what it
 * refuses, and how it ends. Events are pulled one at a time, so each
 * assertion sees the loop exactly where the previous pull left it.
 */
import { describe, expect, it } from "vitest";
import { appendOf, expectCode, rootEntry, user } from "../../../test/support/fixtures.js";
import type {
  SessionKey,
  StorageEngine,
  StorageEvent,
  StorageListener,
} from "../../storage/engine.js";
import { MemoryEngine } from "../../storage/memory.js";
import { EventHub } from "./event-hub.js";
import { type EntriesLoop, type EntryWatchEvent, watchEntries } from "./watch-entries.js";

const KEY: SessionKey = { workspace: "ws", sessionId: "s" };
const LONG = 60_000; // a heartbeat interval no test waits for

/** A memory engine holding session `s` with `n` entries after its root; reads are recorded. */
async function sessionOf(n: number): Promise<{ engine: MemoryEngine; reads: [number, number][] }> {
  const engine = new MemoryEngine();
  await engine.create(KEY, [rootEntry("s")]);
  for (let i = 2; i <= n + 1; i++) await engine.append(KEY, appendOf([user(`u${i}`)]));
  const reads: [number, number][] = [];
  const read = engine.read.bind(engine);
  engine.read = (key, afterSeq, limit) => {
    reads.push([afterSeq, limit]);
    return read(key, afterSeq, limit);
  };
  return { engine, reads };
}

function loopOf(engine: StorageEngine, o: Partial<EntriesLoop> = {}): EntriesLoop {
  return {
    engine,
    hub: new EventHub(engine),
    key: KEY,
    afterSeq: 0,
    signal: new AbortController().signal,
    heartbeatMs: LONG,
    pageSize: 100,
    noSubscribeFirst: false,
    ...o,
  };
}

/** The next event, or a failure after 10 s rather than a hang. */
async function next(events: AsyncGenerator<EntryWatchEvent>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no event within 10 s")), 10_000);
  });
  try {
    const r = await Promise.race([events.next(), late]);
    if (r.done) return "done";
    const e = r.value;
    return e.type === "entry" ? `entry ${e.entry.seq}` : `heartbeat ${e.headSeq}`;
  } finally {
    clearTimeout(timer);
  }
}

async function pull(events: AsyncGenerator<EntryWatchEvent>, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await next(events));
  return out;
}

describe("watchEntries", () => {
  it("keeps a heartbeat the consumer has not pulled yet: an append after it comes next, not instead", async () => {
    const { engine } = await sessionOf(0);
    const loop = loopOf(engine);
    const events = watchEntries(loop);
    expect(await pull(events, 1)).toEqual(["entry 1"]);
    // The heartbeat is sent while nobody pulls; an append lands before the next pull.
    await new Promise((r) => setImmediate(r));
    const woken = new Promise<void>((r) => loop.hub.watch(KEY, r));
    await engine.append(KEY, appendOf([user("u2")]));
    await woken;
    await new Promise((r) => setImmediate(r));
    expect(await pull(events, 2)).toEqual(["heartbeat 1", "entry 2"]);
    await events.return(undefined);
  });

  it("a delete while the consumer is not pulling is thrown at its next pull, with NOT_FOUND", async () => {
    const { engine } = await sessionOf(0);
    const events = watchEntries(loopOf(engine));
    expect(await pull(events, 2)).toEqual(["entry 1", "heartbeat 1"]);
    // Not pulling: the paused watch hears of the delete when it is next pulled.
    await engine.delete(KEY);
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    await expectCode(events.next(), "NOT_FOUND");
  });

  it("replays after afterSeq page by page, and sends the head in a heartbeat once caught up", async () => {
    const { engine, reads } = await sessionOf(6); // seqs 1..7
    const events = watchEntries(loopOf(engine, { afterSeq: 1, pageSize: 3 }));
    expect(await pull(events, 7)).toEqual([
      "entry 2",
      "entry 3",
      "entry 4",
      "entry 5",
      "entry 6",
      "entry 7",
      "heartbeat 7",
    ]);
    expect(reads).toEqual([
      [1, 3],
      [4, 3],
      [7, 3],
    ]);
    await events.return(undefined);
  });

  it("sends a heartbeat right after a short replay, and at once for a cursor at the head", async () => {
    const { engine, reads } = await sessionOf(1); // seqs 1..2
    const replay = watchEntries(loopOf(engine, { pageSize: 3 }));
    expect(await pull(replay, 3)).toEqual(["entry 1", "entry 2", "heartbeat 2"]);
    await replay.return(undefined);
    reads.length = 0;
    const atHead = watchEntries(loopOf(engine, { afterSeq: 2, pageSize: 3 }));
    expect(await pull(atHead, 1)).toEqual(["heartbeat 2"]);
    expect(reads).toEqual([[2, 3]]);
    await atHead.return(undefined);
  });

  it("takes appends from the hub's tail after a wake-up, with no read of its own and no heartbeat", async () => {
    const { engine, reads } = await sessionOf(1);
    const hub = new EventHub(engine);
    const events = watchEntries(loopOf(engine, { hub, afterSeq: 2, heartbeatMs: 200 }));
    expect(await pull(events, 1)).toEqual(["heartbeat 2"]);
    reads.length = 0;
    const woke = pull(events, 2);
    await engine.append(KEY, appendOf([user("u3"), user("u4")]));
    expect(await woke).toEqual(["entry 3", "entry 4"]);
    expect(reads).toEqual([[0, 256]]); // the hub's one read for its tail (from head - capacity)
    // Then quiet: the next event is the interval's heartbeat, after a read of the log.
    expect(await pull(events, 1)).toEqual(["heartbeat 4"]);
    expect(reads).toEqual([
      [0, 256],
      [4, 100],
    ]);
    await events.return(undefined);
  });

  it("after a quiet interval re-reads the log and finds appends no event told of", async () => {
    const { engine, reads } = await sessionOf(0);
    const silent = new MemoryEngine(); // the hub hears nothing: appends as if by another process
    const events = watchEntries(loopOf(engine, { hub: new EventHub(silent), heartbeatMs: 30 }));
    expect(await pull(events, 2)).toEqual(["entry 1", "heartbeat 1"]);
    await engine.append(KEY, appendOf([user("u2")]));
    expect(await pull(events, 2)).toEqual(["entry 2", "heartbeat 2"]);
    expect(reads.every(([, limit]) => limit === 100)).toBe(true);
    expect(reads.slice(0, 2)).toEqual([
      [0, 100],
      [1, 100],
    ]);
  });

  it("refuses an afterSeq that is negative, fractional or unsafe, and one beyond the head", async () => {
    const { engine } = await sessionOf(1);
    for (const afterSeq of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      await expectCode(
        next(watchEntries(loopOf(engine, { afterSeq }))),
        "INVALID_ARGUMENT",
        "after_seq",
        "out of range",
      );
    }
    await expectCode(
      next(watchEntries(loopOf(engine, { afterSeq: 3 }))),
      "INVALID_ARGUMENT",
      "after_seq 3 is beyond the head seq 2",
      '"s"',
    );
  });

  it("ends with NOT_FOUND for a session that does not exist or is deleted while watched", async () => {
    const { engine } = await sessionOf(0);
    await expectCode(
      next(watchEntries(loopOf(engine, { key: { workspace: "ws", sessionId: "nope" } }))),
      "NOT_FOUND",
    );
    const events = watchEntries(loopOf(engine));
    expect(await pull(events, 2)).toEqual(["entry 1", "heartbeat 1"]);
    const ending = next(events);
    await engine.delete(KEY);
    await expectCode(ending, "NOT_FOUND");
  });

  it("ends with NOT_FOUND when the session is deleted and created again between two reads (head below the cursor)", async () => {
    const { engine } = await sessionOf(3); // seqs 1..4
    const silent = new MemoryEngine(); // no event: as if another process did both
    const events = watchEntries(loopOf(engine, { hub: new EventHub(silent), heartbeatMs: 30 }));
    expect(await pull(events, 5)).toEqual([
      "entry 1",
      "entry 2",
      "entry 3",
      "entry 4",
      "heartbeat 4",
    ]);
    await engine.delete(KEY);
    await engine.create(KEY, [rootEntry("s")]);
    await engine.append(KEY, appendOf([user("again")])); // head 2, below the 4 sent
    await expectCode(
      next(events),
      "NOT_FOUND",
      '"s"',
      "deleted and created again",
      "head seq 2, 4 sent",
    );
  });

  it("a shared tail that is behind the watcher is no sign of a re-created session: it waits and reads the log", async () => {
    const { engine } = await sessionOf(3); // the log: seqs 1..4
    // The hub's tail refreshes from a log that is behind (as after a read of
    // the watcher's own that went past the tail's last refresh).
    const behind = new MemoryEngine();
    await behind.create(KEY, [rootEntry("s")]);
    const events = watchEntries(loopOf(engine, { hub: new EventHub(behind), heartbeatMs: 30 }));
    expect(await pull(events, 5)).toEqual([
      "entry 1",
      "entry 2",
      "entry 3",
      "entry 4",
      "heartbeat 4",
    ]);
    const pending = next(events);
    await behind.append(KEY, appendOf([user("u2")])); // wakes the watcher: the tail's head is 2
    expect(await pending).toBe("heartbeat 4");
    await events.return(undefined);
  });

  it("ends by throwing the signal's reason, aborted before or while waiting", async () => {
    const { engine } = await sessionOf(0);
    const before = new AbortController();
    before.abort(new Error("stop now"));
    const a = watchEntries(loopOf(engine, { signal: before.signal }));
    expect(await pull(a, 2)).toEqual(["entry 1", "heartbeat 1"]);
    await expect(next(a)).rejects.toThrow("stop now");

    const during = new AbortController();
    const b = watchEntries(loopOf(engine, { signal: during.signal }));
    expect(await pull(b, 2)).toEqual(["entry 1", "heartbeat 1"]);
    const ending = next(b);
    during.abort(new Error("stop later"));
    await expect(ending).rejects.toThrow("stop later");
  });

  it("leaves the hub when it ends, so the session's tail goes with its last watcher", async () => {
    const { engine } = await sessionOf(0);
    const hub = new EventHub(engine);
    const events = watchEntries(loopOf(engine, { hub }));
    expect(await pull(events, 2)).toEqual(["entry 1", "heartbeat 1"]);
    const probe = hub.watch(KEY, () => {});
    await events.return(undefined);
    probe.stop(); // the last watcher now
    expect(hub.watch(KEY, () => {}).tail).not.toBe(probe.tail);
  });

  it("with noSubscribeFirst replays before subscribing and never re-reads at heartbeats (the negative control)", async () => {
    const { engine, reads } = await sessionOf(1);
    const events = watchEntries(loopOf(engine, { noSubscribeFirst: true, heartbeatMs: 20 }));
    expect(await pull(events, 3)).toEqual(["entry 1", "entry 2", "heartbeat 2"]);
    expect(reads).toEqual([[0, 100]]);
    const silent = new MemoryEngine();
    const late = watchEntries(
      loopOf(engine, { hub: new EventHub(silent), noSubscribeFirst: true, heartbeatMs: 20 }),
    );
    expect(await pull(late, 3)).toEqual(["entry 1", "entry 2", "heartbeat 2"]);
    await engine.append(KEY, appendOf([user("u3")])); // unheard: only a re-read would see it
    reads.length = 0;
    expect(await pull(late, 3)).toEqual(["heartbeat 2", "heartbeat 2", "heartbeat 2"]);
    expect(reads).toEqual([]);
    await events.return(undefined);
    await late.return(undefined);
  });

  it("with noSubscribeFirst still follows the appends it hears of, and ends on its signal", async () => {
    const { engine } = await sessionOf(1);
    const ac = new AbortController();
    const events = watchEntries(
      loopOf(engine, { noSubscribeFirst: true, heartbeatMs: LONG, signal: ac.signal }),
    );
    expect(await pull(events, 3)).toEqual(["entry 1", "entry 2", "heartbeat 2"]);
    const heard = next(events);
    await engine.append(KEY, appendOf([user("u3")]));
    expect(await heard).toBe("entry 3");
    const ending = next(events);
    ac.abort(new Error("late stop"));
    await expect(ending).rejects.toThrow("late stop");
  });

  it("reads the log on its first pass even when the shared tail could serve it, so it sees appends no event told of", async () => {
    const { engine, reads } = await sessionOf(1); // seqs 1..2
    // The hub hears only the events played to it by hand.
    let hear: StorageListener = () => {};
    const heard = {
      subscribe: (l: StorageListener) => {
        hear = l;
        return () => {};
      },
      read: engine.read,
    } as unknown as StorageEngine;
    const hub = new EventHub(heard);
    const probe = hub.watch(KEY, () => {});
    const filled = new Promise<void>((resolve) => hub.watch(KEY, resolve));
    hear({ type: "appended", ...KEY, headSeq: 2 } satisfies StorageEvent);
    await filled; // the tail holds seqs 1..2
    expect(probe.tail.slice(0, 10)?.entries.length).toBe(2);
    await engine.append(KEY, appendOf([user("u3")])); // as by another process: unheard
    reads.length = 0;
    const events = watchEntries(loopOf(engine, { hub }));
    expect(await pull(events, 4)).toEqual(["entry 1", "entry 2", "entry 3", "heartbeat 3"]);
    expect(reads).toEqual([[0, 100]]);
    await events.return(undefined);
  });

  it("after a full page from the tail, reads the rest from the log", async () => {
    const { engine, reads } = await sessionOf(0);
    const events = watchEntries(loopOf(engine, { pageSize: 2 }));
    expect(await pull(events, 2)).toEqual(["entry 1", "heartbeat 1"]);
    reads.length = 0;
    const woke = pull(events, 3);
    await engine.append(KEY, appendOf([user("u2"), user("u3"), user("u4")]));
    expect(await woke).toEqual(["entry 2", "entry 3", "entry 4"]);
    expect(reads).toEqual([
      [0, 256], // the hub's tail
      [3, 2], // after the tail's full page of 2
    ]);
    await events.return(undefined);
  });
});
