/**
 * Watching as an embedded user does it: Session.watch and
 * SessionStore.watchSessions on every engine, with no server in between.
 * The same guarantees as the RPCs (which only translate these events):
 * replay after the cursor, then every durable append once, in order;
 * resuming with the last cursor seen misses nothing and repeats nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { expectCode, user } from "../../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../../test/support/store-engines.js";
import type { EngineFixture } from "../../../test/support/store-model.js";
import { openStore } from "../../index.js";
import { MemoryEngine } from "../../storage/memory.js";
import { SessionStore } from "../session-store.js";
import type { EntryWatchEvent, SessionWatchEvent } from "./index.js";

/** Takes events from `events` until `done` says so; fails after 10 s rather than hang. */
async function take<T>(events: AsyncGenerator<T>, done: (seen: T[]) => boolean): Promise<T[]> {
  const seen: T[] = [];
  const timeout = setTimeout(() => events.throw(new Error("watch took too long")), 10_000);
  try {
    for await (const event of events) {
      seen.push(event);
      if (done(seen)) break;
    }
  } finally {
    clearTimeout(timeout);
  }
  return seen;
}

const entriesOf = (events: EntryWatchEvent[]): Entry[] =>
  events.flatMap((e) => (e.type === "entry" ? [e.entry] : []));
const countEntries = (n: number) => (seen: EntryWatchEvent[]) => entriesOf(seen).length >= n;
const seqs = (entries: Entry[]) => entries.map((e) => Number(e.seq));
const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe.each(STORE_ENGINE_FACTORIES)("embedded watch on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;

  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine);
  });
  afterEach(() => fixture.dispose());

  it("Session.watch replays after the cursor, follows appends made while watching, and resumes with no gap and no repeat", async () => {
    await store.create({ sessionId: "w" });
    const session = await store.open(undefined, "w");
    await session.append([user("u1", "one"), user("u2", "two")]); // seq 2, 3

    // Appends race the watch from its first moment: one per tick while it replays.
    const writer = (async () => {
      for (let i = 3; i <= 20; i++) {
        await session.append(user(`u${i}`, `m${i}`));
      }
    })();
    const first = entriesOf(await take(session.watch({ afterSeq: 1 }), countEntries(10)));
    expect(seqs(first)).toEqual(range(2, 11));
    await writer;

    // Resume with the seq of the last entry seen: the rest, once each.
    const last = Number(first.at(-1)?.seq);
    const rest = entriesOf(await take(session.watch({ afterSeq: last }), countEntries(21 - last)));
    expect(seqs(rest)).toEqual(range(last + 1, 21));
    expect(rest.map((e) => e.id)).toEqual(range(last, 20).map((i) => `u${i}`));
  });

  it("Session.watch sees an append that lands between its replay and going live, with no later append to wake it", async () => {
    await store.create({ sessionId: "gap" });
    const session = await store.open(undefined, "gap");
    // The first read of the log (the replay) lets an append land before it returns.
    const engine = fixture.engine;
    const read = engine.read.bind(engine);
    let injected = false;
    engine.read = async (...args) => {
      const page = await read(...args);
      if (!injected) {
        injected = true;
        await session.append(user("late", "landed during the replay"));
      }
      return page;
    };
    const events = await take(
      session.watch({ heartbeatMs: 20 }),
      (seen) => entriesOf(seen).length >= 2 || seen.length >= 30,
    );
    expect(entriesOf(events).map((e) => Number(e.seq))).toEqual([1, 2]);
    expect(entriesOf(events)[1]?.id).toBe("late");
  });

  it("Session.watch sends heartbeats with the head seq while nothing is appended", async () => {
    await store.create({ sessionId: "hb" });
    const session = await store.open(undefined, "hb");
    await session.append(user("u1", "one"));
    const events = await take(
      session.watch({ afterSeq: 2, heartbeatMs: 20 }),
      (seen) => seen.length >= 2,
    );
    expect(events).toEqual([
      { type: "heartbeat", headSeq: 2 },
      { type: "heartbeat", headSeq: 2 },
    ]);
  });

  it("Session.watch ends with NOT_FOUND when the watched session is deleted, and refuses a cursor past the head", async () => {
    await store.create({ sessionId: "gone" });
    const session = await store.open(undefined, "gone");
    const watching = take(session.watch(), () => false);
    // It may end (NOT_FOUND) while delete is still awaited: handled here, checked below.
    watching.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    await store.delete(undefined, "gone");
    await expectCode(watching, "NOT_FOUND");

    await store.create({ sessionId: "short" });
    const short = await store.open(undefined, "short");
    await expectCode(
      take(short.watch({ afterSeq: 5 }), () => true),
      "INVALID_ARGUMENT",
    );
  });

  it("watchSessions reports created, updated and deleted after the cursor, and resumes after the last cursor seen", async () => {
    const changes = (seen: SessionWatchEvent[]) =>
      seen.flatMap((e) => (e.type === "heartbeat" ? [] : [`${e.type} ${e.sessionId}`]));
    const ac = new AbortController();
    const watching = take(
      store.watchSessions({ signal: ac.signal }),
      (seen) => changes(seen).length >= 3,
    );
    await new Promise((r) => setTimeout(r, 50));
    await store.create({ sessionId: "a" });
    await (await store.open(undefined, "a")).append(user("u1", "hi"));
    await store.create({ sessionId: "b" });
    const seen = await watching;
    expect(changes(seen)).toEqual(["created a", "updated a", "created b"]);

    const cursor = seen.filter((e) => e.type !== "heartbeat").at(-1)?.cursor ?? "";
    await store.delete(undefined, "a");
    const after = await take(store.watchSessions({ cursor }), (s) => changes(s).length >= 1);
    expect(changes(after)).toEqual(["deleted a"]);
  });
});

describe("embedded watch through openStore", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-watch-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a JSONL store opened by openStore watches a session and stops on its signal", async () => {
    const store = openStore({ dataDir: dir });
    try {
      const { session: meta } = await store.create({ title: "watched" });
      const session = await store.open(undefined, meta.id);
      const ac = new AbortController();
      const seen: string[] = [];
      const watching = (async () => {
        for await (const event of session.watch({ signal: ac.signal })) {
          if (event.type === "entry") seen.push(event.entry.id);
          if (seen.length === 2) ac.abort(new Error("enough"));
        }
      })();
      await session.append(user("hello", "hi"));
      await expect(watching).rejects.toThrow("enough");
      expect(seen).toEqual([meta.leafId, "hello"]);
    } finally {
      await store.close();
    }
  });
});

describe("StoreWatch options and close", () => {
  /** A memory engine counting its reads and live subscriptions. */
  function countedEngine() {
    const engine = new MemoryEngine();
    let reads = 0;
    let subscriptions = 0;
    const read = engine.read.bind(engine);
    engine.read = (...args) => {
      reads++;
      return read(...args);
    };
    const subscribe = engine.subscribe.bind(engine);
    engine.subscribe = (listener) => {
      subscriptions++;
      const off = subscribe(listener);
      return () => {
        subscriptions--;
        off();
      };
    };
    return { engine, reads: () => reads, subscriptions: () => subscriptions };
  }

  it("Session.watch on a store with the noSubscribeFirst control replays once and never re-reads at heartbeats", async () => {
    const { engine, reads } = countedEngine();
    const control = new SessionStore(engine, { debug: { noSubscribeFirst: true } });
    await control.create({ sessionId: "late" });
    const session = await control.open(undefined, "late");
    const before = reads();
    const events = await take(session.watch({ heartbeatMs: 10 }), (seen) => seen.length >= 4);
    expect(events.slice(1)).toEqual([
      { type: "heartbeat", headSeq: 1 },
      { type: "heartbeat", headSeq: 1 },
      { type: "heartbeat", headSeq: 1 },
    ]);
    expect(reads() - before).toBe(1);
    // Without it, each quiet interval reads the log again.
    const again = reads();
    const store = new SessionStore(engine);
    const sameSession = await store.open(undefined, "late");
    await take(sameSession.watch({ heartbeatMs: 10 }), (seen) => seen.length >= 4);
    expect(reads() - again).toBe(3);
  });

  it("watchSessions describes each change with the session's metadata", async () => {
    const store = new SessionStore(new MemoryEngine());
    const watching = take(store.watchSessions({ heartbeatMs: 10 }), (seen) =>
      seen.some((e) => e.type === "created"),
    );
    await new Promise((r) => setTimeout(r, 30));
    await store.create({ sessionId: "described", title: "with a title" });
    const created = (await watching).find((e) => e.type === "created");
    expect(created?.type === "created" && created.session.id).toBe("described");
    expect(created?.type === "created" && created.session.title).toBe("with a title");
  });

  it("watchSessions ends on its signal and beats at the interval it is given", async () => {
    const store = new SessionStore(new MemoryEngine());
    const ac = new AbortController();
    const started = Date.now();
    const beats = await take(
      store.watchSessions({ signal: ac.signal, heartbeatMs: 10 }),
      (seen) => seen.length >= 3,
    );
    // Far below the 5 s default, however loaded the machine.
    expect(Date.now() - started).toBeLessThan(4000);
    expect(beats.every((e) => e.type === "heartbeat")).toBe(true);
    const events = store.watchSessions({ signal: ac.signal });
    expect((await events.next()).value?.type).toBe("heartbeat");
    const ending = events.next();
    ac.abort(new Error("enough"));
    await expect(ending).rejects.toThrow("enough");
  });

  it("close drops the engine subscriptions of both kinds of watch", async () => {
    const { engine, subscriptions } = countedEngine();
    const store = new SessionStore(engine);
    await store.create({ sessionId: "c" });
    const session = await store.open(undefined, "c");
    await take(session.watch(), (seen) => seen.length >= 2);
    await take(store.watchSessions(), (seen) => seen.length >= 1);
    expect(subscriptions()).toBe(2);
    await store.close();
    expect(subscriptions()).toBe(0);
  });
});
