/**
 * The loop of a watch of a workspace's sessions, driven directly over a
 * memory engine and a feed: resuming, the snapshot of a cursor the feed
 * cannot resume, heartbeats with the newest cursor, sessions that vanish
 * before they are described, and how it ends. Events are pulled one at a
 * time, so each assertion sees the loop exactly where the last pull left it.
 */
import { describe, expect, it } from "vitest";
import type { SessionMeta } from "../../../gen/sessiond/v1/session_pb.js";
import { appendOf, expectCode, rootEntry, user } from "../../../test/support/fixtures.js";
import { notFound } from "../../core/errors.js";
import { MemoryEngine } from "../../storage/memory.js";
import { SessionFeed } from "./session-feed.js";
import { type SessionsLoop, type SessionWatchEvent, watchSessions } from "./watch-sessions.js";

const LONG = 60_000; // a heartbeat interval no test waits for

const keyOf = (sessionId: string, workspace = "ws") => ({ workspace, sessionId });

/** A stand-in for SessionStore.get: the id and head seq, NOT_FOUND when gone. */
function metaOf(engine: MemoryEngine) {
  return async (workspace: string, sessionId: string): Promise<SessionMeta> => {
    const log = await engine.load(keyOf(sessionId, workspace));
    return { id: sessionId, headSeq: BigInt(log.headSeq) } as SessionMeta;
  };
}

function loopOf(
  engine: MemoryEngine,
  feed: SessionFeed,
  o: Partial<SessionsLoop> = {},
): SessionsLoop {
  return {
    engine,
    feed,
    meta: metaOf(engine),
    workspace: "ws",
    cursor: "",
    signal: new AbortController().signal,
    heartbeatMs: LONG,
    ...o,
  };
}

/** An event as "type id@headSeq #n" (#n: the number in its cursor). */
function shown(feed: SessionFeed, e: SessionWatchEvent): string {
  const [epoch, n] = e.cursor.split(".");
  const mark = epoch === feed.epoch ? `#${n}` : `#${e.cursor}`;
  if (e.type === "heartbeat") return `heartbeat ${mark}`;
  if (e.type === "deleted") return `deleted ${e.sessionId} ${mark}`;
  return `${e.type} ${e.sessionId}@${e.session.headSeq} ${mark}`;
}

/** The next event, or a failure after 10 s rather than a hang. */
async function next(feed: SessionFeed, events: AsyncGenerator<SessionWatchEvent>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no event within 10 s")), 10_000);
  });
  try {
    const r = await Promise.race([events.next(), late]);
    return r.done ? "done" : shown(feed, r.value);
  } finally {
    clearTimeout(timer);
  }
}

async function pull(feed: SessionFeed, events: AsyncGenerator<SessionWatchEvent>, n: number) {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await next(feed, events));
  return out;
}

async function setup() {
  const engine = new MemoryEngine();
  const feed = new SessionFeed(engine, 4);
  const create = (id: string, workspace = "ws") =>
    engine.create(keyOf(id, workspace), [rootEntry(id)]);
  let made = 0;
  const append = (id: string, workspace = "ws") =>
    engine.append(keyOf(id, workspace), appendOf([user(`u${++made}`)]));
  return { engine, feed, create, append };
}

describe("watchSessions", () => {
  it("without a cursor starts at the head: a heartbeat, then live changes of its workspace only", async () => {
    const { engine, feed, create, append } = await setup();
    await create("old");
    const events = watchSessions(loopOf(engine, feed));
    expect(await pull(feed, events, 1)).toEqual(["heartbeat #1"]);
    await create("other", "elsewhere");
    await create("a");
    await append("a");
    await append("a"); // coalesced with the one before
    await engine.delete(keyOf("old"));
    // The metadata is the session's when the change is sent: a holds 3 entries by then.
    expect(await pull(feed, events, 3)).toEqual([
      "created a@3 #3",
      "updated a@3 #5",
      "deleted old #6",
    ]);
    const live = next(feed, events);
    await create("b");
    expect(await live).toBe("created b@1 #7");
    await events.return(undefined);
  });

  it("resumes after a cursor of its feed at once, with no wait for a wake-up", async () => {
    const { engine, feed, create, append } = await setup();
    await create("a"); // 1
    await create("b"); // 2
    await append("a"); // 3
    const events = watchSessions(loopOf(engine, feed, { cursor: feed.cursor(1) }));
    expect(await pull(feed, events, 3)).toEqual([
      "heartbeat #1",
      "created b@1 #2",
      "updated a@2 #3",
    ]);
    await events.return(undefined);
  });

  it("sends a snapshot of every session for a cursor it cannot resume, then goes on from its head", async () => {
    const { engine, feed, create, append } = await setup();
    for (const id of ["a", "b", "c", "d", "e"]) await create(id); // 1..5: event 1 is evicted
    await append("c"); // 6
    await create("x", "elsewhere"); // 7
    const other = new SessionFeed(new MemoryEngine());
    const cursors = [feed.cursor(0), other.cursor(0), feed.cursor(99)];
    for (const [i, cursor] of cursors.entries()) {
      // Each round appends to a once more: a holds 1 + i entries, and the head is 7 + i.
      const events = watchSessions(loopOf(engine, feed, { cursor }));
      const got = await pull(feed, events, 6);
      expect(got.slice(0, 5).sort()).toEqual([
        `updated a@${1 + i} #${7 + i}`,
        `updated b@1 #${7 + i}`,
        `updated c@2 #${7 + i}`,
        `updated d@1 #${7 + i}`,
        `updated e@1 #${7 + i}`,
      ]);
      expect(got[5]).toBe(`heartbeat #${7 + i}`);
      const live = next(feed, events);
      await append("a");
      expect(await live).toBe(`updated a@${2 + i} #${8 + i}`);
      await events.return(undefined);
    }
  });

  it("leaves out of the snapshot and of live changes a session gone before it is described", async () => {
    const { engine, feed, create } = await setup();
    await create("a");
    await create("b");
    const meta = metaOf(engine);
    const gone = new Set(["a"]);
    const loop = loopOf(engine, feed, {
      cursor: new SessionFeed(new MemoryEngine()).cursor(0),
      meta: (ws, id) => (gone.has(id) ? Promise.reject(notFound(`${id} is gone`)) : meta(ws, id)),
    });
    const events = watchSessions(loop);
    expect(await pull(feed, events, 2)).toEqual(["updated b@1 #2", "heartbeat #2"]);
    const live = next(feed, events);
    gone.add("c");
    await create("c");
    await create("d");
    expect(await live).toBe("created d@1 #4");
    await events.return(undefined);
  });

  it("passes on a failure to describe a session other than NOT_FOUND", async () => {
    const { engine, feed, create } = await setup();
    const loop = loopOf(engine, feed, {
      meta: () => Promise.reject(new Error("disk on fire")),
    });
    const events = watchSessions(loop);
    expect(await pull(feed, events, 1)).toEqual(["heartbeat #0"]);
    const failing = next(feed, events);
    await create("a");
    await expect(failing).rejects.toThrow("disk on fire");
  });

  it("refuses a malformed cursor with INVALID_ARGUMENT", async () => {
    const { engine, feed } = await setup();
    await expectCode(
      next(feed, watchSessions(loopOf(engine, feed, { cursor: "nonsense" }))),
      "INVALID_ARGUMENT",
      "after_cursor",
    );
  });

  it("after a quiet interval sends a heartbeat with the newest cursor, past other workspaces' events", async () => {
    const { engine, feed, create } = await setup();
    const events = watchSessions(loopOf(engine, feed, { heartbeatMs: 30 }));
    expect(await pull(feed, events, 1)).toEqual(["heartbeat #0"]);
    await create("x", "elsewhere"); // 1: wakes the loop, nothing to send
    await create("y", "elsewhere"); // 2
    expect(await pull(feed, events, 2)).toEqual(["heartbeat #2", "heartbeat #2"]);
    const live = next(feed, events);
    await create("a");
    expect(await live).toBe("created a@1 #3");
    await events.return(undefined);
  });

  it("ends by throwing the signal's reason, aborted before or while waiting", async () => {
    const { engine, feed } = await setup();
    const before = new AbortController();
    before.abort(new Error("stop now"));
    const a = watchSessions(loopOf(engine, feed, { signal: before.signal }));
    expect(await pull(feed, a, 1)).toEqual(["heartbeat #0"]);
    await expect(next(feed, a)).rejects.toThrow("stop now");

    const during = new AbortController();
    const b = watchSessions(loopOf(engine, feed, { signal: during.signal }));
    expect(await pull(feed, b, 1)).toEqual(["heartbeat #0"]);
    const ending = next(feed, b);
    during.abort(new Error("stop later"));
    await expect(ending).rejects.toThrow("stop later");
  });

  it("stops listening to the feed when it ends", async () => {
    const { engine, feed, create } = await setup();
    let listening = 0;
    const onEvent = feed.onEvent.bind(feed);
    feed.onEvent = (listener) => {
      listening++;
      const off = onEvent(listener);
      return () => {
        listening--;
        return off();
      };
    };
    const events = watchSessions(loopOf(engine, feed));
    expect(await pull(feed, events, 1)).toEqual(["heartbeat #0"]);
    expect(listening).toBe(1);
    await events.return(undefined);
    expect(listening).toBe(0);
    await create("a");
  });
});
