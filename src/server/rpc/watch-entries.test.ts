/**
 * WatchEntries responses, pulled (connect-node) and pushed (the grpc-js
 * front): the same messages either way, a watcher slot held while the
 * stream is open and given back when it ends, and one shared heartbeat
 * response for the watchers of a session in the same millisecond.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WatchEntriesResponse } from "../../../gen/sessiond/v1/session_service_pb.js";
import { user } from "../../../test/support/fixtures.js";
import { openStore } from "../../index.js";
import type { PushSink } from "../wire/push-stream.js";
import type { ServiceDeps } from "./deps.js";
import { watchEntriesResponses } from "./watch-entries.js";
import { WatchSlots } from "./watch-slots.js";

const LONG = 60_000;

async function setup(maxPerSession = 10) {
  const store = openStore({ memory: true });
  await store.create({ sessionId: "w" });
  const session = await store.open(undefined, "w");
  await session.append([user("u1", "one")]); // seqs 1..2
  const slots = new WatchSlots(100, maxPerSession);
  const deps = { store, slots, config: { heartbeatMs: LONG } } as unknown as ServiceDeps;
  const stream = (signal = new AbortController().signal) =>
    watchEntriesResponses(deps, async () => ({ session, afterSeq: 0 }), signal);
  return { store, session, slots, stream };
}

const describeOf = (r: WatchEntriesResponse) =>
  r.event.case === "entry" ? `entry ${r.event.value.seq}` : `heartbeat ${r.event.value?.headSeq}`;

/** A sink that takes everything and resolves once it has `n` messages or an end. */
function collector(n: number) {
  const got: WatchEntriesResponse[] = [];
  let ended: unknown;
  let done: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    done = resolve;
  });
  const sink: PushSink<WatchEntriesResponse> = {
    message(m) {
      got.push(m);
      if (got.length >= n) done();
      return true;
    },
    end(err) {
      ended = err;
      done();
    },
  };
  return { sink, got, settled, ended: () => ended };
}

describe("watchEntriesResponses", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("pushed and iterated, sends the same responses: the replay, then the heartbeat at the head", async () => {
    const { stream } = await setup();
    const pulled: string[] = [];
    for await (const r of stream()) {
      pulled.push(describeOf(r));
      if (pulled.length === 3) break;
    }
    const c = collector(3);
    const control = stream().push(c.sink);
    await c.settled;
    control.close();
    expect(c.got.map(describeOf)).toEqual(pulled);
    expect(pulled).toEqual(["entry 1", "entry 2", "heartbeat 2"]);
  });

  it("pushed, holds a watcher slot while open and gives it back on close", async () => {
    const { stream, slots } = await setup();
    const c = collector(3);
    const control = stream().push(c.sink);
    await c.settled;
    expect(slots.open).toBe(1);
    control.close();
    expect(slots.open).toBe(0);
  });

  it("pushed, ends with RESOURCE_EXHAUSTED when the session has all its watchers, and holds no slot", async () => {
    const { stream, slots } = await setup(1);
    const first = collector(3);
    const control = stream().push(first.sink);
    await first.settled;
    const second = collector(1);
    stream().push(second.sink);
    await second.settled;
    expect((second.ended() as { code?: string }).code).toBe("RESOURCE_EXHAUSTED");
    expect(slots.open).toBe(1);
    control.close();
  });

  it("pushed, ends with the signal's reason and gives the slot back", async () => {
    const { stream, slots } = await setup();
    const ac = new AbortController();
    const c = collector(3);
    stream(ac.signal).push(c.sink);
    await c.settled;
    ac.abort(new Error("shutting down"));
    expect(c.ended()).toEqual(new Error("shutting down"));
    expect(slots.open).toBe(0);
  });

  it("gives the watchers of a session one heartbeat response in the same millisecond", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-12-02T09:00:00.123Z"));
    const { stream } = await setup();
    const a = collector(3);
    const b = collector(3);
    const ca = stream().push(a.sink);
    const cb = stream().push(b.sink);
    await Promise.all([a.settled, b.settled]);
    ca.close();
    cb.close();
    expect(a.got[2]).toBe(b.got[2]);
    const beat = a.got[2] as WatchEntriesResponse;
    expect(beat.event.case === "heartbeat" && Number(beat.event.value.time?.nanos)).toBe(
      123_000_000,
    );
  });
});
