/**
 * Fan-out latency: `watchers` streams on one sessiond session (WatchEntries)
 * or on the echo server (Subscribe), spread over connections of at most
 * `perConnection` streams, and one writer on its own connection, all in this
 * process so one clock measures. Each round: the writer appends one ~500 B
 * message (sessiond) or publishes 500 B (echo), and the latency is from the
 * call starting to the receipt by the LAST watcher; the next round starts
 * once every watcher has it and the call has returned. Heartbeats are
 * ignored. Every watcher checks that it sees seqs without gaps.
 *
 * With `echoPayload: "entry"` the echo's event carries the bytes of the
 * WatchEntriesResponse a sessiond watcher gets for that append (the same
 * ~500 B message entry, with its id, seq and time), and each subscriber
 * decodes them as one, so that both fan-outs cost their watchers the same
 * work per event. A bare 500 B payload decodes in ~0.7 µs, the entry in
 * ~5 µs: ×1,000 watchers in one client process that is several ms of the
 * last receipt that no server does (scenario g's g7). Default "bytes".
 */
import { setMaxListeners } from "node:events";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { WatchEntriesResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import { summarize } from "../lib/stats.js";
import {
  answer,
  args,
  echo,
  log,
  message,
  newSession,
  now,
  PAYLOAD,
  sessiond,
} from "./rpc-common.js";

interface Args {
  target: "sessiond" | "echo";
  url: string;
  watchers: number;
  rounds: number;
  warmup: number;
  perConnection?: number;
  echoPayload?: "bytes" | "entry";
}

const a = args<Args>();
const per = a.perConnection ?? 250;
const connections = Math.ceil(a.watchers / per);
const ac = new AbortController();
setMaxListeners(0, ac.signal); // one listener per stream
const ROUND_TIMEOUT_MS = 30_000;

let failed: unknown;
let ready = 0;
let onReady: (() => void) | undefined;
/** The round in flight: what to wait for, how many have it, when the last got it. */
let expect = -1;
let received = 0;
let lastAt = 0;
let onAll: (() => void) | undefined;
let onFail: ((err: unknown) => void) | undefined;

function fail(err: unknown) {
  failed ??= err;
  onFail?.(err);
}

function markReady() {
  if (++ready === a.watchers) onReady?.();
}

function got(key: number) {
  if (key !== expect) return;
  if (++received === a.watchers) {
    lastAt = now();
    onAll?.();
  }
}

/** Starts a round; resolves with the last receipt time. */
async function round(key: number, send: () => Promise<void>): Promise<number> {
  expect = key;
  received = 0;
  let timer: NodeJS.Timeout | undefined;
  const all = new Promise<void>((done, reject) => {
    onAll = done;
    onFail = reject;
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `round ${key}: ${received}/${a.watchers} watchers got it after ${ROUND_TIMEOUT_MS} ms`,
          ),
        ),
      ROUND_TIMEOUT_MS,
    );
  });
  const t0 = now();
  try {
    await Promise.all([send(), all]);
  } finally {
    clearTimeout(timer);
  }
  return lastAt - t0;
}

function waitReady(what: string): Promise<void> {
  return new Promise<void>((done, reject) => {
    if (failed !== undefined) return reject(failed);
    if (ready === a.watchers) return done();
    onReady = done;
    onFail = reject;
    setTimeout(
      () => reject(new Error(`${what}: ${ready}/${a.watchers} ready after 60 s`)),
      60_000,
    ).unref();
  });
}

let next: () => Promise<number>;
const openStart = now();

if (a.target === "sessiond") {
  const writer = sessiond(a.url);
  const session = await newSession(writer, "fan-out");
  let head = Number((await writer.session.getEntries({ session, afterSeq: 0n, limit: 1 })).headSeq);
  const conns = Array.from({ length: connections }, () => sessiond(a.url));
  for (let i = 0; i < a.watchers; i++) {
    const c = conns[Math.floor(i / per)] ?? writer;
    void (async () => {
      let first = true;
      let last = 0;
      try {
        for await (const ev of c.session.watchEntries(
          { session, afterSeq: 0n },
          { signal: ac.signal },
        )) {
          if (ev.event.case === "entry") {
            const seq = Number(ev.event.value.seq);
            if (seq !== last + 1) throw new Error(`watcher ${i}: seq ${seq} after ${last}`);
            last = seq;
            got(seq);
          } else if (ev.event.case === "heartbeat" && first) {
            first = false;
            markReady();
          }
        }
        if (!ac.signal.aborted) throw new Error(`watcher ${i}: stream ended`);
      } catch (err) {
        if (!ac.signal.aborted) fail(err);
      }
    })();
  }
  await waitReady("WatchEntries");
  next = () => {
    const seq = head + 1;
    return round(seq, async () => {
      const r = await writer.session.append({ session, entries: [message()] });
      if (Number(r.headSeq) !== seq)
        throw new Error(`append got seq ${r.headSeq}, expected ${seq}`);
      head = seq;
    });
  };
} else {
  const writer = echo(a.url);
  const conns = Array.from({ length: connections }, () => echo(a.url));
  const asEntry = a.echoPayload === "entry";
  const payload = (key: number) => {
    if (asEntry) return entryEvent(key);
    const p = new Uint8Array(PAYLOAD);
    new DataView(p.buffer).setUint32(0, key);
    return p;
  };
  const keyOf = (p: Uint8Array) => {
    if (!asEntry) return new DataView(p.buffer, p.byteOffset).getUint32(0);
    const ev = fromBinary(WatchEntriesResponseSchema, p);
    return ev.event.case === "entry" ? Number(ev.event.value.seq) : -1;
  };
  for (let i = 0; i < a.watchers; i++) {
    const c = conns[Math.floor(i / per)] ?? writer;
    void (async () => {
      let first = true;
      try {
        for await (const ev of c.subscribe({}, { signal: ac.signal })) {
          if (first) {
            first = false;
            markReady();
          }
          got(keyOf(ev.payload));
        }
        if (!ac.signal.aborted) throw new Error(`subscriber ${i}: stream ended`);
      } catch (err) {
        if (!ac.signal.aborted) fail(err);
      }
    })();
  }
  // Subscriptions are registered when Publish counts them all; the first
  // message then tells that each stream delivers.
  const PING = 0xffffffff;
  for (let i = 0; ; i++) {
    const { subscribers } = await writer.publish({ payload: payload(PING) });
    if (subscribers >= a.watchers) break;
    if (i > 6000) throw new Error(`echo: ${subscribers}/${a.watchers} subscribed after 60 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await waitReady("Subscribe");
  let key = 0;
  next = () => {
    const k = ++key;
    return round(k, async () => {
      await writer.publish({ payload: payload(k) });
    });
  };
}

const openMs = now() - openStart;
log(
  `${a.target}: ${a.watchers} watchers on ${connections} connection(s) open in ${openMs.toFixed(0)} ms`,
);
for (let i = 0; i < a.warmup; i++) await next();
const samples: number[] = [];
for (let i = 0; i < a.rounds; i++) samples.push(await next());
if (failed !== undefined) throw failed;
const s = summarize(samples);
log(`${a.target} fan-out to ${a.watchers}: p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms`);
ac.abort();
answer({ ...s, mean: samples.reduce((x, y) => x + y, 0) / samples.length, openMs, connections });

/** What a sessiond watcher gets for the append of `message()` at `seq`: a WatchEntriesResponse's bytes. */
function entryEvent(seq: number): Uint8Array {
  const entry = message();
  // Ids of the length sessiond gives them (8 hex digits).
  entry.id = (seq % 2 ** 32).toString(16).padStart(8, "0");
  entry.parentId = ((seq + 2 ** 32 - 1) % 2 ** 32).toString(16).padStart(8, "0");
  entry.seq = BigInt(seq);
  entry.timestamp = timestampNow();
  return toBinary(
    WatchEntriesResponseSchema,
    create(WatchEntriesResponseSchema, { event: { case: "entry", value: entry } }),
  );
}
