import { describe, expect, it } from "vitest";
import { WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { ts, user, withSeq } from "../../../test/support/fixtures.js";
import { planAppend } from "../../core/append-plan.js";
import { planWithhold, withheldMarker } from "../../core/withheld.js";
import type {
  EntryPage,
  StorageEngine,
  StorageEvent,
  StorageListener,
} from "../../storage/engine.js";
import { MemoryEngine } from "../../storage/memory.js";
import { SessionStore } from "../session-store.js";
import { EventHub } from "./event-hub.js";

/** A memory engine that counts reads, to see how many the hub makes. */
function countingEngine(): { engine: StorageEngine; reads: () => number } {
  const engine = new MemoryEngine();
  let reads = 0;
  const read = engine.read.bind(engine);
  engine.read = (...args) => {
    reads++;
    return read(...args);
  };
  return { engine, reads: () => reads };
}

const flush = () => new Promise((r) => setTimeout(r, 5));

describe("EventHub", () => {
  it("reads a session once per append for all of its watchers and wakes each of them", async () => {
    const { engine, reads } = countingEngine();
    const store = new SessionStore(engine);
    const { session } = await store.create({ sessionId: "s1" });
    const key = { workspace: session.workspace, sessionId: session.id };
    const hub = new EventHub(engine);
    const woken: number[] = [];
    const watches = Array.from({ length: 100 }, (_, i) => hub.watch(key, () => woken.push(i)));
    const before = reads();
    await engine.append(key, (log) => planAppend(log, { entries: [user("u1", "hi")] }));
    await flush();
    expect(reads() - before).toBe(1);
    expect(new Set(woken).size).toBe(100);
    const tail = watches[0]?.tail;
    expect(tail?.slice(1, 10)?.entries.map((e) => e.id)).toEqual(["u1"]);
    for (const w of watches) w.stop();
    hub.close();
  });

  it("tells a redaction to the watchers that listen for one, and no more once they stop", async () => {
    const engine = new MemoryEngine();
    const store = new SessionStore(engine);
    const { session } = await store.create({ sessionId: "s1" });
    const key = { workspace: session.workspace, sessionId: session.id };
    await engine.append(key, (log) =>
      planAppend(log, { entries: [user("u1", "hi"), user("u2", "ho")] }),
    );
    const hub = new EventHub(engine);
    const told: number[] = [];
    const plain = hub.watch(key, () => {}); // listens for wake-ups only
    const listening = hub.watch(
      key,
      () => {},
      (n) => told.push(n.headSeq),
    );
    const marker = withheldMarker(WithheldReason.REDACTED, "ops", ts(1), "key");
    const redact = (id: string) =>
      engine.withhold(key, (log) => planWithhold((i) => log.get(i), key.sessionId, [id], marker));
    await redact("u1");
    await flush();
    expect(told).toEqual([3]);
    listening.stop();
    await redact("u2"); // another entry: redacting u1 again changes nothing
    await flush();
    expect(told).toEqual([3]);
    plain.stop();
    hub.close();
  });

  it("gives no slice for a cursor older than the tail, so the watcher reads the engine", async () => {
    const { engine } = countingEngine();
    const store = new SessionStore(engine);
    await store.create({ sessionId: "s2" });
    const key = { workspace: "default", sessionId: "s2" };
    const hub = new EventHub(engine, 4);
    const w = hub.watch(key, () => {});
    const s = await store.open("default", "s2");
    for (let i = 0; i < 10; i++) await s.append(user(`u${i}`, "x"));
    await flush();
    expect(w.tail.slice(0, 100)).toBeUndefined();
    expect(w.tail.slice(9, 100)?.entries.map((e) => e.id)).toEqual(["u8", "u9"]);
    expect(w.tail.slice(11, 100)?.entries).toEqual([]);
    w.stop();
    hub.close();
  });
});

/** An engine that records reads of a one-entry log and plays events by hand. */
function scriptedEngine(): {
  engine: StorageEngine;
  emit: (e: StorageEvent) => void;
  listeners: () => number;
} {
  const listeners = new Set<StorageListener>();
  const engine = {
    subscribe(l: StorageListener) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    read: async (): Promise<EntryPage> => ({ entries: [withSeq(user("e1"), 1)], headSeq: 1 }),
  } as unknown as StorageEngine;
  return {
    engine,
    emit: (e) => {
      for (const l of listeners) l(e);
    },
    listeners: () => listeners.size,
  };
}

const appendedTo = (workspace: string, sessionId: string): StorageEvent => ({
  type: "appended",
  workspace,
  sessionId,
  headSeq: 1,
});

describe("EventHub watchers", () => {
  it("shares one tail per session, and keeps sessions of other ids and workspaces apart", async () => {
    const { engine, emit } = scriptedEngine();
    const hub = new EventHub(engine);
    const woken: string[] = [];
    const a1 = hub.watch({ workspace: "a", sessionId: "s1" }, () => woken.push("a/s1 first"));
    const a1b = hub.watch({ workspace: "a", sessionId: "s1" }, () => woken.push("a/s1 second"));
    const a2 = hub.watch({ workspace: "a", sessionId: "s2" }, () => woken.push("a/s2"));
    const b1 = hub.watch({ workspace: "b", sessionId: "s1" }, () => woken.push("b/s1"));
    expect(a1b.tail).toBe(a1.tail);
    expect(a2.tail).not.toBe(a1.tail);
    expect(b1.tail).not.toBe(a1.tail);
    expect(b1.tail).not.toBe(a2.tail);
    emit(appendedTo("a", "s2"));
    await flush();
    expect(woken).toEqual(["a/s2"]);
    emit(appendedTo("a", "s1"));
    await flush();
    expect(woken).toEqual(["a/s2", "a/s1 first", "a/s1 second"]);
    hub.close();
  });

  it("ignores the events of sessions nobody watches", () => {
    const { engine, emit } = scriptedEngine();
    const hub = new EventHub(engine);
    expect(() => emit(appendedTo("a", "unwatched"))).not.toThrow();
    hub.close();
  });

  it("wakes a stopped watcher no more, and drops the tail only with its last watcher", async () => {
    const { engine, emit } = scriptedEngine();
    const hub = new EventHub(engine);
    const key = { workspace: "a", sessionId: "s" };
    const woken: string[] = [];
    const first = hub.watch(key, () => woken.push("first"));
    const second = hub.watch(key, () => woken.push("second"));
    first.stop();
    expect(hub.watch(key, () => {}).tail).toBe(second.tail); // still shared
    emit(appendedTo("a", "s"));
    await flush();
    expect(woken).toEqual(["second"]);
    expect(second.tail.slice(0, 10)?.entries.map((e) => e.id)).toEqual(["e1"]);
  });

  it("gives a new tail once every watcher stopped, which a repeated stop leaves alone", async () => {
    const { engine, emit } = scriptedEngine();
    const hub = new EventHub(engine);
    const key = { workspace: "a", sessionId: "s" };
    const only = hub.watch(key, () => {});
    emit(appendedTo("a", "s"));
    await flush();
    only.stop();
    const woken: string[] = [];
    const next = hub.watch(key, () => woken.push("next"));
    expect(next.tail).not.toBe(only.tail);
    expect(next.tail.slice(0, 10)).toBeUndefined(); // starts empty
    only.stop(); // again: not the tail of `next`
    expect(hub.watch(key, () => {}).tail).toBe(next.tail);
    emit(appendedTo("a", "s"));
    await flush();
    expect(woken).toEqual(["next"]);
  });

  it("after close wakes nobody and leaves the engine's subscription", async () => {
    const { engine, emit, listeners } = scriptedEngine();
    const hub = new EventHub(engine);
    expect(listeners()).toBe(1);
    const key = { workspace: "a", sessionId: "s" };
    const woken: string[] = [];
    const before = hub.watch(key, () => woken.push("before"));
    hub.close();
    expect(listeners()).toBe(0);
    const after = hub.watch(key, () => woken.push("after"));
    expect(after.tail).not.toBe(before.tail); // close dropped the tails
    emit(appendedTo("a", "s"));
    await flush();
    expect(woken).toEqual([]);
  });
});
