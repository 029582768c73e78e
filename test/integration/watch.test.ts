/**
 * WatchEntries reliability (T7, small): cancel + resume, restarts (SIGTERM
 * and kill -9 on the same data dir and port), deletion, shutdown, heartbeats
 * and the per-session watcher cap. Every watcher must end with seq 1..n,
 * each exactly once, in order.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import type { WatchEntriesResponse } from "../../gen/sessiond/v1/session_service_pb.js";
import type { WatchSessionsResponse } from "../../gen/sessiond/v1/store_service_pb.js";
import { type SessiondClient, watchEntriesResumable } from "../../src/client/index.js";
import { removeDataDir } from "../harness/server.js";
import { user } from "./support/entries.js";
import { expectCode, expectNoLeak } from "./support/errors.js";
import {
  client,
  denseProblem,
  EXTERNAL,
  readAll,
  type SessiondProcess,
  serverUnderTest,
  skipExternal,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";
import { collect, eventually, sleep } from "./support/stream.js";

const ws = uniqueWorkspace("watch");

if (EXTERNAL) {
  skipExternal(
    "watch (b) restarts, (d) SIGTERM, (e) --heartbeat-ms 200, (f) --max-watchers-per-session 3",
  );
}

const entriesOf = (xs: readonly WatchEntriesResponse[]): Entry[] =>
  xs.flatMap((x) => (x.event.case === "entry" ? [x.event.value] : []));
const heartbeatsOf = (xs: readonly WatchEntriesResponse[]) =>
  xs.flatMap((x) => (x.event.case === "heartbeat" ? [x.event.value] : []));

/** Appends `count` single entries with ids `${prefix}-i`, pausing between them; returns the acked ids. */
async function writeEntries(
  c: SessiondClient,
  session: string,
  prefix: string,
  count: number,
  pauseMs: number,
  acked: string[],
  errors: string[],
): Promise<void> {
  for (let i = 0; i < count; i++) {
    const id = `${prefix}-${i}`;
    // The client retries UNAVAILABLE with the same entry id; if an error still
    // reaches us, the outcome is unknown: retry with the same id ourselves (dedup).
    for (let attempt = 0; ; attempt++) {
      try {
        await c.session.append({ workspace: ws, session, entries: [user(id, { id })] });
        acked.push(id);
        break;
      } catch (err) {
        const ce = ConnectError.from(err);
        errors.push(`${id}: ${Code[ce.code]} ${ce.rawMessage}`);
        if (attempt >= 20) throw ce;
        await sleep(100);
      }
    }
    if (pauseMs > 0) await sleep(pauseMs);
  }
}

describe("on the shared server", () => {
  let srv: Awaited<ReturnType<typeof serverUnderTest>>;
  let c: SessiondClient;

  beforeAll(async () => {
    srv = await serverUnderTest();
    c = client(srv.url, "grpc");
  });

  afterAll(async () => {
    await srv?.close();
  });

  test("(a) a watcher cancelled mid-stream and resumed from its last seq sees 1..n exactly once", async () => {
    const id = (await c.store.createSession({ workspace: ws, title: "cancel-resume" })).session
      ?.id as string;
    const acked: string[] = [];
    const errors: string[] = [];
    const writer = writeEntries(c, id, "w", 300, 2, acked, errors);
    // Once the writer is done, the final head is known and the watcher stops there.
    let finalHead: bigint | undefined;
    const finished = writer.then(async () => {
      finalHead = (await c.store.getSession({ workspace: ws, session: id })).session?.headSeq;
    });

    const seqs: bigint[] = [];
    const ids: string[] = [];
    let last = 0n;
    let resumes = 0;
    const done = () => finalHead !== undefined && last >= finalHead;
    const deadline = Date.now() + 30_000;
    while (!done() && Date.now() < deadline) {
      const ac = new AbortController();
      const cutAfter = 3 + Math.floor(Math.random() * 40);
      let got = 0;
      try {
        const stream = c.session.watchEntries(
          { workspace: ws, session: id, afterSeq: last },
          { signal: ac.signal, timeoutMs: 2000 },
        );
        for await (const msg of stream) {
          if (msg.event.case === "entry") {
            const e = msg.event.value;
            seqs.push(e.seq);
            ids.push(e.id);
            last = e.seq;
            // Cancel mid-stream: whatever the client had buffered is dropped.
            if (++got >= cutAfter) ac.abort();
          }
          if (done()) break;
        }
      } catch (err) {
        const code = ConnectError.from(err).code;
        // Canceled by us, or the 2 s deadline of an idle stream (re-checks done()).
        expect([Code.Canceled, Code.DeadlineExceeded]).toContain(code);
      }
      resumes++;
    }
    await finished;
    expect(errors).toEqual([]);
    const log = await readAll(c, ws, id);
    expect(resumes).toBeGreaterThan(3);
    expect(denseProblem(seqs, log.length)).toBeUndefined();
    expect(ids).toEqual(log.map((e) => e.id));
    console.log(
      `(a) cancel/resume: ${seqs.length} entries, ${resumes} resumes, 0 gaps, 0 duplicates`,
    );
  });

  test("(c) deleting the session ends its watch streams with NOT_FOUND", async () => {
    const id = (await c.store.createSession({ workspace: ws, title: "doomed" })).session
      ?.id as string;
    await c.session.append({ workspace: ws, session: id, entries: [user("x")] });
    const raw = collect(c.session.watchEntries({ workspace: ws, session: id }));
    const ac = new AbortController();
    const resumable = collect(
      watchEntriesResumable(c, { workspace: ws, session: id, signal: ac.signal, retryDelayMs: 50 }),
    );
    try {
      await raw.waitFor((xs) => heartbeatsOf(xs).length > 0, 5000, "raw watcher caught up");
      await resumable.waitFor(
        (xs) => heartbeatsOf(xs).length > 0,
        5000,
        "resumable watcher caught up",
      );
      await c.store.deleteSession({ workspace: ws, session: id });
      const rawEnd = await raw.waitEnd(5000);
      expect(rawEnd?.code, rawEnd?.rawMessage).toBe(Code.NotFound);
      expect(rawEnd?.rawMessage).toContain(id);
      expectNoLeak(rawEnd?.rawMessage ?? "");
      // The resumable watcher does not retry a deleted session: it ends with NOT_FOUND too.
      const resEnd = await resumable.waitEnd(5000);
      expect(resEnd?.code).toBe(Code.NotFound);
      expect(entriesOf(raw.items).map((e) => Number(e.seq))).toEqual([1, 2]);
    } finally {
      ac.abort();
    }
  });
});

describe("across restarts (SIGTERM and kill -9, same data dir and port)", () => {
  let server: SessiondProcess | undefined;
  let dataDir: string | undefined;

  afterAll(async () => {
    await server?.kill9();
    if (dataDir) removeDataDir(dataDir);
  });

  test.skipIf(EXTERNAL)(
    "(b) resumable watchers and a retrying writer lose nothing and duplicate nothing",
    async () => {
      server = await startSessiond({ port: 0 });
      dataDir = server.dataDir;
      const port = server.port;
      const url = server.url;
      const restart = async (how: "SIGTERM" | "SIGKILL") => {
        const old = server as SessiondProcess;
        if (how === "SIGTERM") expect(await old.stop()).toBe(0);
        else await old.kill9();
        server = await startSessiond({ port, dataDir });
        expect(server.url).toBe(url);
      };

      const writerClient = client(url, "grpc", {
        timeoutMs: 40_000,
        retry: { maxAttempts: 200, baseDelayMs: 20, maxDelayMs: 200 },
      });
      const c = client(url, "grpc", {
        retry: { maxAttempts: 200, baseDelayMs: 20, maxDelayMs: 200 },
      });
      const id = (await c.store.createSession({ workspace: ws, title: "restarts" })).session
        ?.id as string;

      const ac = new AbortController();
      const reconnects: string[] = [];
      const watchers = [0, 1].map((i) =>
        collect(
          watchEntriesResumable(client(url, i === 0 ? "grpc" : "connect"), {
            workspace: ws,
            session: id,
            signal: ac.signal,
            retryDelayMs: 50,
            onReconnect: (err) => reconnects.push(`${i}: ${Code[err.code]}`),
          }),
        ),
      );
      // A strict watcher with its own resume loop and no de-duplication: any
      // duplicate or gap the server sends shows up here.
      const strictSeqs: bigint[] = [];
      const strict = (async () => {
        const sc = client(url, "grpc");
        let last = 0n;
        while (!ac.signal.aborted) {
          try {
            for await (const m of sc.session.watchEntries(
              { workspace: ws, session: id, afterSeq: last },
              { signal: ac.signal },
            )) {
              if (m.event.case !== "entry") continue;
              strictSeqs.push(m.event.value.seq);
              last = m.event.value.seq;
            }
          } catch (err) {
            if (ac.signal.aborted) return;
            const code = ConnectError.from(err).code;
            if (code === Code.NotFound) throw err;
          }
          await sleep(50);
        }
      })();

      const acked: string[] = [];
      const errors: string[] = [];
      const N = 240;
      const writer = writeEntries(writerClient, id, "r", N, 12, acked, errors);

      await eventually(() => acked.length >= 60, 20_000, "60 acked appends before SIGTERM");
      await restart("SIGTERM");
      await eventually(() => acked.length >= 130, 30_000, "130 acked appends before kill -9");
      await restart("SIGKILL");
      await writer;
      // The client's retry covered both restarts: no error reached the writer.
      expect(errors, "errors seen by the writer").toEqual([]);
      const n = N + 1;
      try {
        for (const w of watchers) {
          await w.waitFor((xs) => entriesOf(xs).length >= n, 20_000, `a watcher to reach seq ${n}`);
        }
        await eventually(
          () => strictSeqs.length >= n,
          20_000,
          `the strict watcher to reach seq ${n}`,
        );
        await sleep(200); // anything extra (a duplicate) would arrive now
      } finally {
        ac.abort();
        await strict.catch(() => {});
      }

      const log = await readAll(c, ws, id);
      expect(
        denseProblem(
          log.map((e) => e.seq),
          n,
        ),
      ).toBeUndefined();
      const stored = new Set(log.map((e) => e.id));
      expect(
        acked.filter((x) => !stored.has(x)),
        "acknowledged appends missing after the restarts",
      ).toEqual([]);
      expect(log.map((e) => e.id).filter((x) => x.startsWith("r-"))).toEqual(acked);
      for (const w of watchers) {
        const got = entriesOf(w.items);
        expect(
          denseProblem(
            got.map((e) => e.seq),
            n,
          ),
        ).toBeUndefined();
        expect(got.map((e) => e.id)).toEqual(log.map((e) => e.id));
      }
      expect(denseProblem(strictSeqs, n)).toBeUndefined();
      expect(reconnects.length, "the watchers did reconnect").toBeGreaterThanOrEqual(2);
      console.log(
        `(b) restarts: SIGTERM + kill -9, ${acked.length} acked, 0 lost, 3 watchers x ${n} entries, 0 gaps, 0 duplicates; ` +
          `writer saw ${errors.length} errors (${errors.slice(0, 3).join("; ")}), watcher reconnects: ${reconnects.join(", ")}`,
      );
    },
  );
});

describe("with --heartbeat-ms 200 --max-watchers-per-session 3", () => {
  let server: SessiondProcess | undefined;
  let c: SessiondClient;

  beforeAll(async () => {
    if (EXTERNAL) return;
    server = await startSessiond({
      args: ["--heartbeat-ms", "200", "--max-watchers-per-session", "3"],
    });
    c = client(server.url, "grpc");
  });

  afterAll(async () => {
    await server?.kill9();
    if (server) removeDataDir(server.dataDir);
  });

  test.skipIf(EXTERNAL)("(e) heartbeats arrive every interval and carry the head seq", async () => {
    const id = (await c.store.createSession({ workspace: ws })).session?.id as string;
    await c.session.append({ workspace: ws, session: id, entries: [user("1"), user("2")] });
    const ac = new AbortController();
    const w = collect(
      c.session.watchEntries({ workspace: ws, session: id, afterSeq: 3n }, { signal: ac.signal }),
    );
    try {
      const start = Date.now();
      await w.waitFor((xs) => heartbeatsOf(xs).length >= 4, 3000, "4 heartbeats");
      const elapsed = Date.now() - start;
      expect(elapsed).toBeGreaterThanOrEqual(450); // 3 intervals after the first
      expect(heartbeatsOf(w.items).every((h) => h.headSeq === 3n && h.time !== undefined)).toBe(
        true,
      );
      expect(entriesOf(w.items)).toEqual([]);
      await c.session.append({ workspace: ws, session: id, entries: [user("3", { id: "e4" })] });
      await w.waitFor(
        (xs) => heartbeatsOf(xs).some((h) => h.headSeq === 4n),
        3000,
        "a heartbeat with head 4",
      );
      expect(entriesOf(w.items).map((e) => [e.id, e.seq])).toEqual([["e4", 4n]]);
    } finally {
      ac.abort();
    }
  });

  test.skipIf(EXTERNAL)(
    "(f) too many watchers of one session: RESOURCE_EXHAUSTED; a freed slot is reusable",
    async () => {
      const id = (await c.store.createSession({ workspace: ws })).session?.id as string;
      const other = (await c.store.createSession({ workspace: ws })).session?.id as string;
      const acs = [0, 1, 2].map(() => new AbortController());
      const open = acs.map((ac) =>
        collect(c.session.watchEntries({ workspace: ws, session: id }, { signal: ac.signal })),
      );
      const acOther = new AbortController();
      try {
        for (const w of open)
          await w.waitFor((xs) => heartbeatsOf(xs).length > 0, 5000, "watcher open");
        const fourth = collect(c.session.watchEntries({ workspace: ws, session: id }));
        const end = await fourth.waitEnd(5000);
        expect(Code[end?.code ?? Code.Unknown], end?.rawMessage).toBe(Code[Code.ResourceExhausted]);
        expect(end?.rawMessage).toContain(id);
        expectNoLeak(end?.rawMessage ?? "");
        // The cap is per session: another session can still be watched.
        const elsewhere = collect(
          c.session.watchEntries({ workspace: ws, session: other }, { signal: acOther.signal }),
        );
        await elsewhere.waitFor(
          (xs) => heartbeatsOf(xs).length > 0,
          5000,
          "watcher of another session",
        );
        // Closing one frees its slot.
        acs[0]?.abort();
        await open[0]?.waitEnd(5000);
        await eventually(
          async () => {
            const ac = new AbortController();
            const again = collect(
              c.session.watchEntries({ workspace: ws, session: id }, { signal: ac.signal }),
            );
            const ok = await again
              .waitFor((xs) => heartbeatsOf(xs).length > 0, 2000, "re-opened watcher")
              .then(
                () => true,
                () => false,
              );
            ac.abort();
            await again.waitEnd(2000);
            return ok;
          },
          5000,
          "a slot to be freed",
        );
      } finally {
        for (const ac of acs) ac.abort();
        acOther.abort();
      }
    },
  );

  test.skipIf(EXTERNAL)(
    "(d) SIGTERM ends open watch streams with UNAVAILABLE and the server exits 0",
    async () => {
      const id = (await c.store.createSession({ workspace: ws })).session?.id as string;
      const entriesWatch = collect(c.session.watchEntries({ workspace: ws, session: id }));
      const sessionsWatch = collect<WatchSessionsResponse>(
        c.store.watchSessions({ workspace: ws }),
      );
      await entriesWatch.waitFor((xs) => heartbeatsOf(xs).length > 0, 5000, "entries watcher open");
      await sessionsWatch.waitFor((xs) => xs.length > 0, 5000, "sessions watcher open");
      const exit = (server as SessiondProcess).stop();
      const [e1, e2] = await Promise.all([
        entriesWatch.waitEnd(10_000),
        sessionsWatch.waitEnd(10_000),
      ]);
      expect(Code[e1?.code ?? -1], `WatchEntries end: ${e1?.rawMessage ?? "clean end"}`).toBe(
        Code[Code.Unavailable],
      );
      expect(Code[e2?.code ?? -1], `WatchSessions end: ${e2?.rawMessage ?? "clean end"}`).toBe(
        Code[Code.Unavailable],
      );
      expectNoLeak(e1?.rawMessage ?? "");
      expect(await exit).toBe(0);
      // After the exit, calls fail with UNAVAILABLE (nothing listens).
      const down = client((server as SessiondProcess).url, "grpc", { retry: false });
      await expectCode(down.store.listSessions({ workspace: ws }), Code.Unavailable);
    },
  );
});
