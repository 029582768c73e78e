/**
 * EntryFollower: the watch of one session pushed to a sink. What the pull
 * side (watch-entries.test.ts, which drives the same follower one event at
 * a time) cannot show: a sink that takes everything gets the replay, the
 * heartbeat and live appends with nobody pulling; a sink that says stop
 * holds the watch (no send, no read) until it resumes; an abort ends an
 * idle watch at once and a busy one once caught up; close is silent.
 */
import { describe, expect, it } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { appendOf, rootEntry, ts, user } from "../../../test/support/fixtures.js";
import { planWithhold, withheldMarker } from "../../core/withheld.js";
import type { SessionKey, StorageListener } from "../../storage/engine.js";
import { MemoryEngine } from "../../storage/memory.js";
import { EntryFollower, type EntrySink } from "./entry-follower.js";
import { EventHub } from "./event-hub.js";

const KEY: SessionKey = { workspace: "ws", sessionId: "s" };
const LONG = 60_000;

/** Redacts the entries `ids` of the session (at its head then). */
function redactIn(engine: MemoryEngine, ids: string[]) {
  const marker = withheldMarker(WithheldReason.REDACTED, "ops", ts(1), "key");
  return engine.withhold(KEY, (log) => planWithhold((id) => log.get(id), "s", ids, marker));
}

/** A few turns of the event loop: the hub's reads and the follower's sends settle. */
const settle = () => new Promise((r) => setTimeout(r, 20));

async function sessionOf(n: number): Promise<{ engine: MemoryEngine; reads: number[] }> {
  const engine = new MemoryEngine();
  await engine.create(KEY, [rootEntry("s")]);
  for (let i = 2; i <= n + 1; i++) await engine.append(KEY, appendOf([user(`u${i}`)]));
  const reads: number[] = [];
  const read = engine.read.bind(engine);
  engine.read = (key, afterSeq, limit) => {
    reads.push(afterSeq);
    return read(key, afterSeq, limit);
  };
  return { engine, reads };
}

/** A sink that records what it got, accepts while `accept` is true, and resolves `until` conditions. */
class Recorder implements EntrySink {
  readonly got: string[] = [];
  accept = true;
  ended: unknown;
  private waiters: { n: number; done: () => void }[] = [];

  entry(entry: Entry): boolean {
    return this.note(`entry ${entry.seq}`);
  }
  heartbeat(headSeq: number): boolean {
    return this.note(`heartbeat ${headSeq}`);
  }
  /** Runs inside `withheld`, after it was recorded (a sink that closes its watch there). */
  onWithheld: (() => void) | undefined;
  withheld(entries: readonly Entry[], headSeq: number): boolean {
    const more = this.note(`withheld ${entries.map((e) => e.seq).join(",")} at ${headSeq}`);
    this.onWithheld?.();
    return more;
  }
  end(err: unknown): void {
    this.ended = err;
    this.note("end");
  }
  /** Resolves once `n` things were recorded in all. */
  until(n: number): Promise<void> {
    if (this.got.length >= n) return Promise.resolve();
    return new Promise((done) => this.waiters.push({ n, done }));
  }
  private note(what: string): boolean {
    this.got.push(what);
    for (const w of this.waiters.filter((w) => this.got.length >= w.n)) w.done();
    return this.accept;
  }
}

/**
 * Seqs 1..3 watched in pages of 2 by a sink that said stop at entry 1
 * (entry 2 held); then u2 redacted (at head 3: after entry 3, which the
 * next page holds) and u4 appended. The sink still refuses.
 */
async function pausedBeforeRedaction(): Promise<{ sink: Recorder; f: EntryFollower }> {
  const { engine } = await sessionOf(2);
  const sink = new Recorder();
  sink.accept = false;
  const { f } = follow(engine, sink, { pageSize: 2 });
  await sink.until(1);
  await redactIn(engine, ["u2"]);
  await engine.append(KEY, appendOf([user("u4")]));
  await settle();
  return { sink, f };
}

function follow(
  engine: MemoryEngine,
  sink: EntrySink,
  o: { pageSize?: number; signal?: AbortSignal; hub?: EventHub } = {},
) {
  const hub = o.hub ?? new EventHub(engine);
  const f = new EntryFollower(
    {
      engine,
      hub,
      key: KEY,
      afterSeq: 0,
      signal: o.signal ?? new AbortController().signal,
      heartbeatMs: LONG,
      pageSize: o.pageSize ?? 100,
      noSubscribeFirst: false,
    },
    sink,
  );
  f.start();
  return { f, hub };
}

describe("EntryFollower", () => {
  it("pushes the replay, the heartbeat and live appends to a sink that takes them, with nobody pulling", async () => {
    const { engine } = await sessionOf(1);
    const sink = new Recorder();
    const { f } = follow(engine, sink);
    await sink.until(3);
    expect(sink.got).toEqual(["entry 1", "entry 2", "heartbeat 2"]);
    await engine.append(KEY, appendOf([user("u3"), user("u4")]));
    await sink.until(5);
    expect(sink.got.slice(3)).toEqual(["entry 3", "entry 4"]);
    f.close();
  });

  it("holds where the sink said stop, reading nothing, and goes on from the next entry on resume", async () => {
    const { engine, reads } = await sessionOf(4); // seqs 1..5
    const sink = new Recorder();
    sink.accept = false;
    const { f } = follow(engine, sink, { pageSize: 2 });
    await sink.until(1);
    await new Promise((r) => setImmediate(r));
    expect(sink.got).toEqual(["entry 1"]);
    expect(reads).toEqual([0]);
    sink.accept = true;
    f.resume();
    await sink.until(6);
    expect(sink.got).toEqual([
      "entry 1",
      "entry 2",
      "entry 3",
      "entry 4",
      "entry 5",
      "heartbeat 5",
    ]);
    expect(reads).toEqual([0, 2, 4]);
    f.close();
  });

  it("sends a redaction after the entries up to its head and before later ones, idle or paused", async () => {
    const { engine } = await sessionOf(2); // seqs 1..3
    const sink = new Recorder();
    const { f } = follow(engine, sink);
    await sink.until(4);
    expect(sink.got).toEqual(["entry 1", "entry 2", "entry 3", "heartbeat 3"]);
    const marker = withheldMarker(WithheldReason.REDACTED, "ops", ts(1), "key");
    const redact = (ids: string[]) =>
      engine.withhold(KEY, (log) => planWithhold((id) => log.get(id), "s", ids, marker));
    // Idle: sent at once.
    await redact(["u2"]);
    await sink.until(5);
    expect(sink.got[4]).toBe("withheld 2 at 3");
    // Paused on a page: the redaction (at head 4) waits for entry 4 and goes before entry 5.
    sink.accept = false;
    await engine.append(KEY, appendOf([user("u4")]));
    await sink.until(6);
    expect(sink.got[5]).toBe("entry 4");
    await redact(["u4"]);
    await engine.append(KEY, appendOf([user("u5")]));
    await new Promise((r) => setImmediate(r));
    sink.accept = true;
    f.resume();
    await sink.until(8);
    expect(sink.got.slice(6, 8)).toEqual(["withheld 4 at 4", "entry 5"]);
    f.close();
  });

  it("sends a redaction pending while it reads on after its head is passed mid-page, before the next entry", async () => {
    const { sink, f } = await pausedBeforeRedaction();
    expect(sink.got).toEqual(["entry 1"]);
    sink.accept = true;
    f.resume();
    await sink.until(6);
    expect(sink.got).toEqual([
      "entry 1",
      "entry 2",
      "entry 3",
      "withheld 2 at 3",
      "entry 4",
      "heartbeat 4",
    ]);
    f.close();
  });

  it("sends a redaction at the end of its replay before the heartbeat", async () => {
    const { engine } = await sessionOf(2); // seqs 1..3
    const sink = new Recorder();
    sink.accept = false;
    const { f } = follow(engine, sink);
    await sink.until(1);
    await redactIn(engine, ["u2"]); // at head 3, the replay's last entry
    await settle();
    sink.accept = true;
    f.resume();
    await sink.until(5);
    expect(sink.got).toEqual(["entry 1", "entry 2", "entry 3", "withheld 2 at 3", "heartbeat 3"]);
    f.close();
  });

  it("holds at a redaction the sink refused: later entries wait for resume", async () => {
    const { engine } = await sessionOf(2);
    const sink = new Recorder();
    const { f } = follow(engine, sink);
    await sink.until(4); // entries 1..3, heartbeat 3: idle
    sink.accept = false;
    await redactIn(engine, ["u2"]);
    await sink.until(5);
    await engine.append(KEY, appendOf([user("u4")]));
    await settle();
    expect(sink.got.slice(4)).toEqual(["withheld 2 at 3"]);
    sink.accept = true;
    f.resume();
    await sink.until(6);
    expect(sink.got.slice(4)).toEqual(["withheld 2 at 3", "entry 4"]);
    f.close();
  });

  it("a sink that closes the watch while taking a redaction gets no more of the page", async () => {
    const { sink, f } = await pausedBeforeRedaction();
    sink.onWithheld = () => f.close();
    sink.accept = true;
    f.resume();
    await sink.until(4);
    await settle();
    expect(sink.got).toEqual(["entry 1", "entry 2", "entry 3", "withheld 2 at 3"]);
    expect(sink.ended).toBeUndefined();
  });

  it("told of a redaction past what it sent while idle (its wake-up not in yet), reads on to it from the log", async () => {
    const { engine } = await sessionOf(2); // seqs 1..3
    // A hub that does not hear appends past head 4: the append of seq 5 wakes
    // nobody, and the tail (which has 1..4) does not hold it.
    const deaf = new Proxy(engine, {
      get(target, p) {
        if (p === "subscribe") {
          return (listener: StorageListener) =>
            target.subscribe((e) => {
              if (e.type !== "appended" || e.headSeq < 5) listener(e);
            });
        }
        const v = Reflect.get(target, p) as unknown;
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const sink = new Recorder();
    const { f } = follow(engine, sink, { hub: new EventHub(deaf) });
    await sink.until(4);
    await engine.append(KEY, appendOf([user("u4")]));
    await sink.until(5);
    await engine.append(KEY, appendOf([user("u5")]));
    await settle();
    expect(sink.got).toEqual(["entry 1", "entry 2", "entry 3", "heartbeat 3", "entry 4"]);
    await redactIn(engine, ["u2"]); // at head 5
    // Bounded: a follower that misses entry 5 waits for a wake-up that never comes.
    await Promise.race([sink.until(7), new Promise((r) => setTimeout(r, 2_000))]);
    expect(sink.got.slice(5)).toEqual(["entry 5", "withheld 2 at 5"]);
    f.close();
  });

  it("a sink that throws at a redaction in the middle of a page gets no more of it", async () => {
    const { sink, f } = await pausedBeforeRedaction();
    const boom = new Error("sink broke");
    sink.onWithheld = () => {
      throw boom;
    };
    sink.accept = true;
    f.resume();
    await sink.until(5);
    await settle();
    expect(sink.got).toEqual(["entry 1", "entry 2", "entry 3", "withheld 2 at 3", "end"]);
    expect(sink.ended).toBe(boom);
  });

  it("ends its watch with the error when its sink throws at a redaction", async () => {
    const { engine } = await sessionOf(2);
    const sink = new Recorder();
    const { f } = follow(engine, sink);
    await sink.until(4);
    const boom = new Error("sink broke");
    sink.onWithheld = () => {
      throw boom;
    };
    await redactIn(engine, ["u2"]);
    await sink.until(6);
    expect(sink.got.slice(4)).toEqual(["withheld 2 at 3", "end"]);
    expect(sink.ended).toBe(boom);
    f.close();
  });

  it("ends an idle watch at once on abort, with the reason", async () => {
    const { engine } = await sessionOf(0);
    const sink = new Recorder();
    const ac = new AbortController();
    follow(engine, sink, { signal: ac.signal });
    await sink.until(2);
    ac.abort(new Error("shutting down"));
    expect(sink.got).toEqual(["entry 1", "heartbeat 1", "end"]);
    expect(sink.ended).toEqual(new Error("shutting down"));
  });

  it("ends a paused watch only once it has sent its page and is caught up", async () => {
    const { engine } = await sessionOf(2); // seqs 1..3
    const sink = new Recorder();
    sink.accept = false;
    const { f } = follow(engine, sink);
    await sink.until(1);
    f.abort(new Error("stop"));
    expect(sink.got).toEqual(["entry 1"]);
    sink.accept = true;
    f.resume();
    expect(sink.got).toEqual(["entry 1", "entry 2", "entry 3", "heartbeat 3", "end"]);
  });

  it("ends with NOT_FOUND when the session is deleted while watched", async () => {
    const { engine } = await sessionOf(0);
    const sink = new Recorder();
    follow(engine, sink);
    await sink.until(2);
    await engine.delete(KEY);
    await sink.until(3);
    expect((sink.ended as { code?: string }).code).toBe("NOT_FOUND");
  });

  it("after close tells the sink nothing more and leaves the session's tail", async () => {
    const { engine } = await sessionOf(0);
    const sink = new Recorder();
    const { f, hub } = follow(engine, sink);
    await sink.until(2);
    const probe = hub.watch(KEY, () => {});
    f.close();
    f.abort(new Error("too late"));
    await engine.append(KEY, appendOf([user("u2")]));
    await new Promise((r) => setImmediate(r));
    expect(sink.got).toEqual(["entry 1", "heartbeat 1"]);
    probe.stop(); // the last watcher now: the tail goes
    expect(hub.watch(KEY, () => {}).tail).not.toBe(probe.tail);
  });
  it("acts on a wake-up that came while it read: the append goes out once caught up, with no heartbeat between", async () => {
    const { engine } = await sessionOf(0);
    // The follower's first read waits until an append has woken it.
    const read = engine.read.bind(engine);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let first = true;
    engine.read = async (key, afterSeq, limit) => {
      if (first) {
        first = false;
        const page = await read(key, afterSeq, limit);
        await gate;
        return page;
      }
      return read(key, afterSeq, limit);
    };
    const sink = new Recorder();
    const { f, hub } = follow(engine, sink);
    const woken = new Promise<void>((r) => hub.watch(KEY, r));
    await engine.append(KEY, appendOf([user("u2")]));
    await woken; // the tail holds seq 2 and the follower was told, while reading
    release();
    await sink.until(3);
    await new Promise((r) => setImmediate(r));
    // The replay read saw seq 1 only; seq 2 comes from the tail, and nothing after it.
    expect(sink.got).toEqual(["entry 1", "heartbeat 1", "entry 2"]);
    expect(f.idle).toBe(true);
    f.close();
  });

  it("holds at a heartbeat the sink refused until resume; resume when not paused, or after close, sends nothing", async () => {
    const { engine } = await sessionOf(0);
    const sink = new Recorder();
    const { f } = follow(engine, sink);
    await sink.until(2);
    sink.accept = false;
    await engine.append(KEY, appendOf([user("u2")]));
    await sink.until(3);
    expect(f.idle).toBe(false); // paused at entry 2
    sink.accept = true;
    f.resume();
    expect(f.idle).toBe(true);
    f.resume(); // not paused: nothing to do
    f.close();
    f.resume();
    await new Promise((r) => setImmediate(r));
    expect(sink.got).toEqual(["entry 1", "heartbeat 1", "entry 2"]);
  });
  it("a second abort does not replace the first one's reason", async () => {
    const { engine } = await sessionOf(1);
    const sink = new Recorder();
    sink.accept = false;
    const { f } = follow(engine, sink);
    await sink.until(1);
    f.abort(new Error("first"));
    f.abort(new Error("second"));
    sink.accept = true;
    f.resume();
    expect(sink.ended).toEqual(new Error("first"));
  });

  it("closed while a read is in flight, it sends nothing of that read, whether it succeeds or fails", async () => {
    for (const outcome of ["resolve", "reject"] as const) {
      for (const which of [1, 2]) {
        const { engine } = await sessionOf(2);
        const read = engine.read.bind(engine);
        let release: () => void = () => {};
        const gate = new Promise<void>((r) => {
          release = r;
        });
        let n = 0;
        engine.read = async (key, afterSeq, limit) => {
          n++;
          if (n !== which) return read(key, afterSeq, limit);
          const page = await read(key, afterSeq, limit);
          await gate;
          if (outcome === "reject") throw new Error("read failed");
          return page;
        };
        const sink = new Recorder();
        // pageSize 1: the first read (in start) and the second (the next page) can both be held.
        const { f } = follow(engine, sink, { pageSize: 1 });
        while (n < which) await new Promise((r) => setImmediate(r));
        const before = [...sink.got];
        f.close();
        release();
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        expect(sink.got).toEqual(before);
      }
    }
  });

  it("a sink that closes the watch while taking an entry gets no more of the page", async () => {
    const { engine } = await sessionOf(3);
    const sink = new Recorder();
    let f: EntryFollower | undefined;
    const recordEntry = sink.entry.bind(sink);
    sink.entry = (entry) => {
      recordEntry(entry);
      f?.close();
      return true;
    };
    f = follow(engine, sink).f;
    await sink.until(1);
    await new Promise((r) => setImmediate(r));
    expect(sink.got).toEqual(["entry 1"]);
  });

  it("a heartbeat the sink refuses holds the watch: a later append waits for resume", async () => {
    const { engine } = await sessionOf(0);
    const sink = new Recorder();
    const recordHeartbeat = sink.heartbeat.bind(sink);
    sink.heartbeat = (headSeq) => {
      recordHeartbeat(headSeq);
      return false;
    };
    const { f } = follow(engine, sink);
    await sink.until(2);
    await engine.append(KEY, appendOf([user("u2")]));
    await new Promise((r) => setImmediate(r));
    expect(sink.got).toEqual(["entry 1", "heartbeat 1"]);
    expect(f.idle).toBe(false);
    f.resume();
    await sink.until(3);
    expect(sink.got).toEqual(["entry 1", "heartbeat 1", "entry 2"]);
    f.close();
  });

  it("ends its watch with the error when its sink throws at a heartbeat", async () => {
    const { engine } = await sessionOf(0);
    const sink = new Recorder();
    sink.heartbeat = () => {
      throw new Error("heartbeat write failed");
    };
    follow(engine, sink);
    await sink.until(2);
    expect(sink.got).toEqual(["entry 1", "end"]);
    expect(sink.ended).toEqual(new Error("heartbeat write failed"));
    // Ended: an append reaches it no more.
    await engine.append(KEY, appendOf([user("u2")]));
    await new Promise((r) => setImmediate(r));
    expect(sink.got).toEqual(["entry 1", "end"]);
  });

  it("ends only its own watch when its sink throws: the session's other watchers still get the entry", async () => {
    const { engine } = await sessionOf(0);
    const hub = new EventHub(engine);
    const broken = new Recorder();
    const fine = new Recorder();
    follow(engine, broken, { hub });
    const { f } = follow(engine, fine, { hub });
    await Promise.all([broken.until(2), fine.until(2)]);
    broken.entry = () => {
      throw new Error("write failed");
    };
    await engine.append(KEY, appendOf([user("u2")]));
    await fine.until(3);
    expect(fine.got).toEqual(["entry 1", "heartbeat 1", "entry 2"]);
    expect(broken.ended).toEqual(new Error("write failed"));
    f.close();
  });
});
