/**
 * Two sessiond replicas on one PostgreSQL database (issue 5's "must show"):
 * a watcher on replica A receives the entries appended through replica B,
 * in order and exactly once; 8 writers split across both replicas append to
 * one session, some with expected_seq, and the log ends dense with every
 * acknowledged entry exactly once and every conflict answered ABORTED.
 *
 * Replicas: SESSIOND_URL + SESSIOND_URL_B when both are set (the compose
 * `integration` service: sessiond-a and sessiond-b), else two `sessiond
 * serve --storage postgres://...` processes spawned on a throwaway cluster
 * (or SESSIOND_TEST_PG_URL). The reliability battery's T9 does the same
 * with kills, restarts and LISTEN terminations.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SessionEventType,
  type WatchSessionsResponse,
} from "../../gen/sessiond/v1/store_service_pb.js";
import type { SessiondClient } from "../../src/client/index.js";
import { createDatabase, pgSkipReason, sharedPostgres } from "../harness/postgres.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";
import { user } from "./support/entries.js";
import { client, denseProblem, readAll, uniqueWorkspace } from "./support/server.js";
import { collect, sleep } from "./support/stream.js";

const URL_A = process.env.SESSIOND_URL;
const URL_B = process.env.SESSIOND_URL_B;
const external = URL_A !== undefined && URL_B !== undefined;
const skip = external
  ? undefined
  : URL_A !== undefined
    ? "SESSIOND_URL is set but SESSIOND_URL_B is not: two replicas of one database are needed"
    : process.env.CI === "true"
      ? undefined
      : pgSkipReason();

const ws = uniqueWorkspace("replicas");

if (skip !== undefined) {
  console.warn(`\n*** two-replica PostgreSQL tests SKIPPED: ${skip} ***\n`);
  it.skip(`two sessiond replicas on one PostgreSQL database (skipped: ${skip})`, () => {});
} else {
  describe("two replicas on one PostgreSQL database", () => {
    const servers: SessiondProcess[] = [];
    let dropDb: (() => Promise<void>) | undefined;
    let a: SessiondClient;
    let b: SessiondClient;

    beforeAll(async () => {
      let urlA = URL_A as string;
      let urlB = URL_B as string;
      if (!external) {
        const pg = await sharedPostgres();
        const db = await createDatabase(pg.url, "sessiond_replicas");
        dropDb = db.drop;
        for (let i = 0; i < 2; i++) {
          // A heartbeat re-reads the log and would hide a lost NOTIFY: with
          // one a minute, only LISTEN/NOTIFY wakes A's watcher within the waits below.
          servers.push(
            await startSessiond({ args: ["--storage", db.url, "--heartbeat-ms", "60000"] }),
          );
        }
        urlA = (servers[0] as SessiondProcess).url;
        urlB = (servers[1] as SessiondProcess).url;
      }
      a = client(urlA, "grpc");
      b = client(urlB, "connect");
    });

    afterAll(async () => {
      for (const s of servers) {
        await s.stop();
        await removeDataDir(s.dataDir);
      }
      await dropDb?.();
    });

    it("a watcher on A receives B's appends in order, exactly once", async () => {
      const id = (await b.store.createSession({ workspace: ws, title: "cross-replica watch" }))
        .session?.id as string;
      const ac = new AbortController();
      const w = collect(
        // timeoutMs 0: no deadline on the stream (a reconnect's replay would hide a lost wake-up).
        a.session.watchEntries(
          { workspace: ws, session: id, afterSeq: 0n },
          { signal: ac.signal, timeoutMs: 0 },
        ),
      );
      const seen = () => w.items.flatMap((m) => (m.event.case === "entry" ? [m.event.value] : []));
      try {
        // A has the root (the replay) before anything is appended through B.
        await w.waitFor(() => seen().length >= 1, 15_000, "the root on A");
        const N = 120;
        let written = 0;
        while (written < N) {
          // Single entries and small batches, with pauses so A wakes up several times.
          const size = written % 7 === 3 ? 3 : 1;
          const entries = Array.from({ length: size }, (_, k) => {
            const eid = `b-${written + k}`;
            return user(eid, { id: eid });
          });
          await b.session.append({ workspace: ws, session: id, entries });
          written += size;
          if (written % 10 === 0) await sleep(20);
        }
        const n = N + 1;
        await w.waitFor(() => seen().length >= n, 30_000, `A's watcher to reach seq ${n}`);
        expect(w.isEnded(), "the watch stream stayed open (no reconnect, no replay)").toBe(false);
        await sleep(300); // a duplicate would arrive now
      } finally {
        ac.abort();
        await w.waitEnd(5000);
      }
      const got = seen();
      const log = await readAll(b, ws, id);
      expect(log).toHaveLength(121);
      expect(
        denseProblem(
          got.map((e) => e.seq),
          log.length,
        ),
      ).toBeUndefined();
      expect(got.map((e) => e.id)).toEqual(log.map((e) => e.id));
      expect(got.slice(1).map((e) => e.id)).toEqual(
        Array.from({ length: 120 }, (_, i) => `b-${i}`),
      );
    });

    it("WatchSessions on A sees sessions created, updated and deleted through B", async () => {
      const ww = uniqueWorkspace("replicas-ws");
      const ac = new AbortController();
      const w = collect<WatchSessionsResponse>(
        a.store.watchSessions({ workspace: ww }, { signal: ac.signal, timeoutMs: 0 }),
      );
      const is = (t: SessionEventType, sid: string) => (x: WatchSessionsResponse) =>
        x.type === t && x.sessionId === sid;
      try {
        await w.waitFor((xs) => xs.some((x) => x.cursor !== ""), 15_000, "first heartbeat");
        const id = (await b.store.createSession({ workspace: ww, title: "made on B" })).session
          ?.id as string;
        await w.waitFor((xs) => xs.some(is(SessionEventType.CREATED, id)), 30_000, "CREATED");
        await b.session.append({ workspace: ww, session: id, entries: [user("x")] });
        await w.waitFor(
          (xs) => xs.some((x) => is(SessionEventType.UPDATED, id)(x) && x.session?.headSeq === 2n),
          30_000,
          "UPDATED with head 2",
        );
        await b.store.deleteSession({ workspace: ww, session: id });
        await w.waitFor((xs) => xs.some(is(SessionEventType.DELETED, id)), 30_000, "DELETED");
        const created = w.items.find(is(SessionEventType.CREATED, id));
        expect(created?.session).toMatchObject({ id, title: "made on B", workspace: ww });
      } finally {
        ac.abort();
        await w.waitEnd(5000);
      }
    });

    it("deleting a session through B ends A's WatchEntries with NOT_FOUND", async () => {
      const id = (await a.store.createSession({ workspace: ws, title: "doomed" })).session
        ?.id as string;
      const w = collect(a.session.watchEntries({ workspace: ws, session: id }, { timeoutMs: 0 }));
      await w.waitFor((xs) => xs.some((x) => x.event.case === "entry"), 15_000, "the root on A");
      await b.store.deleteSession({ workspace: ws, session: id });
      const end = await w.waitEnd(30_000);
      expect(end?.code, end?.rawMessage ?? "the stream did not end with an error").toBe(
        Code.NotFound,
      );
      expect(end?.rawMessage).toContain(id);
    });

    it("8 writers across both replicas: dense seqs, every ack exactly once, conflicts ABORTED", async () => {
      const id = (await a.store.createSession({ workspace: ws, title: "8 writers" })).session
        ?.id as string;
      const PER_WRITER = 20;
      const acked: string[] = [];
      const unexpected: string[] = [];
      let aborted = 0;

      // A deterministic conflict first: four CAS writers (two per replica)
      // append on the same head seen on each replica: one wins, three are ABORTED.
      const head0 = (await a.store.getSession({ workspace: ws, session: id })).session
        ?.headSeq as bigint;
      expect((await b.store.getSession({ workspace: ws, session: id })).session?.headSeq).toBe(
        head0,
      );
      const first = await Promise.allSettled(
        [a, b, a, b].map((c, i) =>
          c.session.append({
            workspace: ws,
            session: id,
            entries: [user(`race-${i}`, { id: `race-${i}` })],
            expectedSeq: head0,
          }),
        ),
      );
      const winners = first.flatMap((r, i) => (r.status === "fulfilled" ? [`race-${i}`] : []));
      const losers = first.flatMap((r) =>
        r.status === "rejected" ? [Code[ConnectError.from(r.reason).code]] : [],
      );
      expect(winners).toHaveLength(1);
      expect(losers).toEqual(["Aborted", "Aborted", "Aborted"]);
      acked.push(...winners);

      // Then 8 writers at once, 4 per replica; writers 2, 3, 6, 7 use expected_seq
      // (refreshing their view of the head after each ABORTED).
      const writer = async (w: number) => {
        const c = w % 2 === 0 ? a : b;
        const cas = w % 4 >= 2;
        let head = head0 + 1n;
        for (let i = 0; i < PER_WRITER; i++) {
          const eid = `w${w}-${i}`;
          for (let attempt = 0; ; attempt++) {
            try {
              const res = await c.session.append({
                workspace: ws,
                session: id,
                entries: [user(eid, { id: eid })],
                ...(cas ? { expectedSeq: head } : {}),
              });
              head = res.headSeq;
              acked.push(eid);
              break;
            } catch (err) {
              const ce = ConnectError.from(err);
              if (cas && ce.code === Code.Aborted) {
                aborted++;
                head = (await c.store.getSession({ workspace: ws, session: id })).session
                  ?.headSeq as bigint;
              } else {
                unexpected.push(`${eid}: ${Code[ce.code]} ${ce.rawMessage}`);
              }
              if (attempt > 200) throw new Error(`${eid}: no progress after ${attempt} attempts`);
            }
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));

      expect(unexpected, "every failed append was a CAS conflict (ABORTED)").toEqual([]);
      const logA = await readAll(a, ws, id);
      const logB = await readAll(b, ws, id);
      const n = 1 + 1 + 8 * PER_WRITER;
      expect(
        denseProblem(
          logA.map((e) => e.seq),
          n,
        ),
      ).toBeUndefined();
      expect(logB.map((e) => e.id)).toEqual(logA.map((e) => e.id));
      const stored = logA.slice(1).map((e) => e.id);
      expect(new Set(stored).size).toBe(stored.length);
      expect([...stored].sort()).toEqual([...acked].sort());
      // Each writer's entries keep their order in the log.
      for (let w = 0; w < 8; w++) {
        const mine = stored.filter((x) => x.startsWith(`w${w}-`));
        expect(mine).toEqual(Array.from({ length: PER_WRITER }, (_, i) => `w${w}-${i}`));
      }
      console.log(
        `replicas: 8 writers across 2 replicas, ${acked.length} acked, seqs 1..${n} dense, ${aborted + 3} CAS conflicts (all ABORTED)`,
      );
    });
  });
}
