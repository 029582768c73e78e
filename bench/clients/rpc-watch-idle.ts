/**
 * Server memory per idle watch stream: opens `streams` WatchEntries streams
 * (over `sessions` sessions) on sessiond, or Subscribe streams on the echo
 * server, spread over connections of at most `perConnection` streams, waits
 * until each got its first message (sessiond: the heartbeat after the
 * replay; echo: one published message), lets the server settle and reads
 * the server's VmRSS from /proc before and after. The connections exist and
 * have carried calls (and a few streams, opened and closed) before the
 * "before" sample, so the difference is the streams alone.
 */
import { setMaxListeners } from "node:events";
import { memoryOf } from "../lib/procs.js";
import { median } from "../lib/stats.js";
import { answer, args, echo, log, newSession, PAYLOAD, sessiond } from "./rpc-common.js";

interface Args {
  target: "sessiond" | "echo";
  url: string;
  /** The server process, for /proc/<pid>/status. */
  pid: number;
  streams: number;
  sessions?: number;
  perConnection?: number;
  settleMs?: number;
}

const a = args<Args>();
const per = a.perConnection ?? 250;
const connections = Math.ceil(a.streams / per);
const settleMs = a.settleMs ?? 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Median of 5 samples of the server's RSS, 200 ms apart. */
async function serverRss(): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(memoryOf(a.pid).rss);
    await sleep(200);
  }
  return median(samples);
}

/** Opens one stream; resolves when its first message arrived. */
type Open = (conn: number, i: number, signal: AbortSignal) => Promise<void>;

function streamOpener(
  each: (conn: number, i: number, signal: AbortSignal) => AsyncIterable<unknown>,
): Open {
  return (conn, i, signal) =>
    new Promise<void>((first, fail) => {
      void (async () => {
        let got = false;
        try {
          for await (const _ of each(conn, i, signal)) {
            if (!got) {
              got = true;
              first();
            }
          }
        } catch (err) {
          if (!signal.aborted) fail(err);
        }
      })();
    });
}

let open: Open;
/** Makes every open stream deliver its first message (echo: publish once). */
let poke: () => Promise<void> = async () => {};

if (a.target === "sessiond") {
  const clients = Array.from({ length: connections }, () => sessiond(a.url));
  const ids: string[] = [];
  for (let i = 0; i < (a.sessions ?? 10); i++)
    ids.push(await newSession(clients[0] as ReturnType<typeof sessiond>, `idle ${i}`));
  // Every connection carries a unary call first.
  for (const c of clients)
    await c.session.getEntries({ session: ids[0] as string, afterSeq: 0n, limit: 1 });
  open = streamOpener((conn, i, signal) =>
    (clients[conn] as ReturnType<typeof sessiond>).session.watchEntries(
      { session: ids[i % ids.length] as string, afterSeq: 0n },
      { signal },
    ),
  );
} else {
  const writer = echo(a.url);
  const clients = Array.from({ length: connections }, () => echo(a.url));
  for (const c of clients) await c.echo({ payload: PAYLOAD });
  open = streamOpener((conn, _i, signal) =>
    (clients[conn] as ReturnType<typeof echo>).subscribe({}, { signal }),
  );
  poke = async () => {
    await writer.publish({ payload: PAYLOAD });
  };
}

/** Opens `n` streams (stream i on connection i mod connections) and waits for their first messages. */
async function openStreams(n: number, signal: AbortSignal): Promise<void> {
  const firsts: Promise<void>[] = [];
  for (let i = 0; i < n; i++) firsts.push(open(i % connections, i, signal));
  // Echo streams say nothing until something is published: publish until all got one.
  let all = false;
  void Promise.all(firsts).then(() => {
    all = true;
  });
  for (let t = 0; !all && a.target === "echo"; t++) {
    await poke();
    await sleep(50);
    if (t > 1200) throw new Error("echo streams got no message after 60 s");
  }
  await Promise.all(firsts);
}

// Warm the streaming path on every connection: open and close a few.
{
  const warm = new AbortController();
  setMaxListeners(0, warm.signal);
  await openStreams(Math.min(a.streams, 4 * connections), warm.signal);
  warm.abort();
  await sleep(500);
}
const before = await serverRss();
const ac = new AbortController();
setMaxListeners(0, ac.signal);
const t0 = performance.now();
await openStreams(a.streams, ac.signal);
const openMs = performance.now() - t0;
await sleep(settleMs);
const after = await serverRss();
const perStream = (after - before) / a.streams;
log(
  `${a.target}: ${a.streams} idle streams on ${connections} connection(s): server RSS ${(before / 2 ** 20).toFixed(1)} → ${(after / 2 ** 20).toFixed(1)} MB, ${(perStream / 1024).toFixed(1)} KB per stream`,
);
ac.abort();
answer({ before, after, perStream, streams: a.streams, connections, openMs });
