import { describe, expect, it } from "vitest";
import { user } from "../../../test/support/fixtures.js";
import { planAppend } from "../../core/append-plan.js";
import type { StorageEngine } from "../../storage/engine.js";
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
