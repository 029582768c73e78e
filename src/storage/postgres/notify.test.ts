import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDatabase,
  type PgServer,
  pgSkipReason,
  startPostgres,
} from "../../../test/harness/postgres.js";
import { appendOf, rootEntry, seqs, settle, ts, user } from "../../../test/support/fixtures.js";
import type { StorageEvent } from "../engine.js";
import { PostgresEngine, type PostgresEngineOptions } from "./postgres-engine.js";
import { jsonOf } from "./rows.js";

const skip = process.env.CI === "true" ? undefined : pgSkipReason();

/** Resolves once `pred` holds for an event seen so far (or later); rejects after `ms`. */
function waitFor(
  events: StorageEvent[],
  pred: (e: StorageEvent) => boolean,
  ms = 5_000,
): Promise<StorageEvent> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      const hit = events.find(pred);
      if (hit !== undefined) return resolve(hit);
      if (Date.now() > deadline) {
        return reject(new Error(`no matching event within ${ms} ms: ${JSON.stringify(events)}`));
      }
      setTimeout(tick, 10);
    };
    tick();
  });
}

if (skip !== undefined) {
  console.warn(`\n*** PostgreSQL notify tests SKIPPED: ${skip} ***\n`);
  it.skip(`PostgreSQL notify tests (skipped: ${skip})`, () => {});
} else {
  let server: PgServer | undefined;
  let db: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let admin: postgres.Sql | undefined;

  beforeAll(async () => {
    server = await startPostgres();
    if (server === undefined) throw new Error("PostgreSQL is not available");
    db = await createDatabase(server.url);
    admin = postgres(db.url, { max: 1, onnotice: () => {} });
  });

  afterAll(async () => {
    await admin?.end({ timeout: 1 });
    await db?.drop();
    await server?.stop();
  });

  async function replicas(
    opts: Omit<PostgresEngineOptions, "url"> = {},
  ): Promise<[PostgresEngine, PostgresEngine]> {
    if (db === undefined) throw new Error("no database");
    return [
      await PostgresEngine.open({ url: db.url, ...opts }),
      await PostgresEngine.open({ url: db.url, ...opts }),
    ];
  }

  /** Pids of the LISTEN connections on the test database. */
  async function listenPids(): Promise<number[]> {
    if (admin === undefined || db === undefined) throw new Error("no database");
    const rows = await admin<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity
      WHERE datname = ${db.name} AND application_name = 'sessiond-listen'
        AND query ILIKE 'LISTEN%'`;
    return rows.map((r) => r.pid);
  }

  async function waitForListen(n: number): Promise<number[]> {
    for (const deadline = Date.now() + 5_000; ; ) {
      const pids = await listenPids();
      if (pids.length === n) return pids;
      if (Date.now() > deadline) throw new Error(`expected ${n} LISTEN connections, got ${pids}`);
      await settle(20);
    }
  }

  describe("postgres engine: watches across replicas (LISTEN/NOTIFY)", () => {
    it("wakes a subscriber of replica A for appends made through replica B", async () => {
      // No head poll: every event here is a NOTIFY or A's own commit (a poll
      // that reads A's head 52 just before A announces it emits 52 once more,
      // a legitimate wake-up that the exact count below would take for A's
      // own NOTIFY).
      const [a, b] = await replicas({ headPollMs: 0 });
      try {
        const k = { workspace: "default", sessionId: "cross" };
        const events: StorageEvent[] = [];
        a.subscribe((e) => events.push(e));
        await waitForListen(1);
        expect(await listenPids()).toHaveLength(1); // B has no subscriber: no LISTEN

        await b.create(k, [rootEntry(k.sessionId)]);
        await waitFor(events, (e) => e.type === "created" && e.sessionId === k.sessionId);

        await b.append(k, appendOf([user("m1"), user("m2")]));
        await waitFor(events, (e) => e.type === "appended" && e.headSeq === 3);
        expect(seqs((await a.read(k, 1, 100)).entries)).toEqual([2, 3]);

        for (let i = 0; i < 48; i++) await b.append(k, appendOf([user(`n${i}`)]));
        await waitFor(events, (e) => e.type === "appended" && e.headSeq === 51);
        expect(seqs((await a.read(k, 0, 1000)).entries)).toEqual(
          Array.from({ length: 51 }, (_, i) => i + 1),
        );
        // Heads only grow, in commit order (one session, one row lock).
        const heads = events.filter((e) => e.type === "appended").map((e) => e.headSeq);
        expect(heads).toEqual([...heads].sort((x, y) => x - y));

        // A's own append: one event (its own NOTIFY is ignored).
        const before = events.length;
        await a.append(k, appendOf([user("own")]));
        await settle(200);
        expect(events.slice(before)).toEqual([{ type: "appended", ...k, headSeq: 52 }]);

        await b.delete(k);
        await waitFor(events, (e) => e.type === "deleted" && e.sessionId === k.sessionId);
      } finally {
        await a.close();
        await b.close();
      }
      // A closed connection's backend leaves pg_stat_activity when it has exited, a moment later.
      expect(await waitForListen(0)).toEqual([]);
    });

    it("no watcher is stuck when A's LISTEN connection is killed while B appends", async () => {
      // No head poll: only the re-LISTEN and its resync can wake A here.
      const [a, b] = await replicas({ headPollMs: 0 });
      try {
        const k = { workspace: "default", sessionId: "killed" };
        const events: StorageEvent[] = [];
        a.subscribe((e) => events.push(e));
        await waitForListen(1);
        await b.create(k, [rootEntry(k.sessionId)]);
        await a.read(k, 0, 10); // a watcher's read: the session is in A's cache

        const writer = (async () => {
          for (let i = 0; i < 60; i++) await b.append(k, appendOf([user(`k${i}`)]));
        })();
        await waitFor(events, (e) => e.headSeq >= 10);
        const [pid] = await waitForListen(1);
        await admin?.unsafe("SELECT pg_terminate_backend($1)", [pid as number]);
        await writer;
        await waitFor(events, (e) => e.type === "appended" && e.headSeq === 61);
        expect(seqs((await a.read(k, 0, 1000)).entries)).toEqual(
          Array.from({ length: 61 }, (_, i) => i + 1),
        );

        // With no append after it, a reconnect alone resyncs: A's cached
        // session gets an event with the head as stored now.
        const [pid2] = await waitForListen(1);
        expect(pid2).not.toBe(pid);
        events.length = 0;
        await admin?.unsafe("SELECT pg_terminate_backend($1)", [pid2 as number]);
        await waitFor(events, (e) => e.type === "appended" && e.headSeq === 61);
        await waitForListen(1);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it("a replica NOTIFYs its appends only while another replica LISTENs", async () => {
      if (db === undefined) throw new Error("no database");
      // An observer of the channel that is no replica (not application_name sessiond-listen).
      const observer = postgres(db.url, { max: 1, onnotice: () => {} });
      const heard: string[] = [];
      await observer.listen("sessiond_events", (p) => heard.push(p));
      const b = await PostgresEngine.open({ url: db.url, headPollMs: 100 });
      let a: PostgresEngine | undefined;
      try {
        const k = { workspace: "default", sessionId: "alone" };
        await b.create(k, [rootEntry(k.sessionId)]);
        // Until its first look at pg_stat_activity, B wakes rather than not.
        await b.append(k, appendOf([user("first")]));
        await settle(300);
        const appended = () => heard.filter((p) => p.includes('"t":"appended"'));
        const before = appended().length;
        for (let i = 0; i < 3; i++) await b.append(k, appendOf([user(`a${i}`)]));
        await settle(300);
        expect(appended()).toHaveLength(before); // nobody to wake: no NOTIFY
        expect(heard.some((p) => p.includes('"t":"created"'))).toBe(true); // creates always NOTIFY

        a = await PostgresEngine.open({ url: db.url });
        const events: StorageEvent[] = [];
        a.subscribe((e) => events.push(e));
        await waitForListen(1);
        await settle(300); // B's next peer check sees A's LISTEN connection
        await b.append(k, appendOf([user("seen")]));
        await waitFor(events, (e) => e.type === "appended" && e.headSeq === 6);
        expect(appended()).toHaveLength(before + 1);
      } finally {
        await a?.close();
        await b.close();
        await observer.end({ timeout: 0 });
      }
    });

    it("a new watch hears of another replica's appends before that replica's peer check has seen its LISTEN: the head poll is hurried", async () => {
      if (db === undefined) throw new Error("no database");
      await waitForListen(0);
      // Peer checks and head polls a minute apart: within this test B never
      // looks again for listeners and A never polls at its own pace, so only
      // A's hurried polls (every 100 ms after its LISTEN) can bring B's append.
      const b = await PostgresEngine.open({ url: db.url, headPollMs: 60_000 });
      let a: PostgresEngine | undefined;
      try {
        const k = { workspace: "default", sessionId: "hurried" };
        await b.create(k, [rootEntry(k.sessionId)]);
        await b.append(k, appendOf([user("first")])); // B's first peer check: nobody listens
        await settle(300);
        a = await PostgresEngine.open({ url: db.url, headPollMs: 60_000 });
        const events: StorageEvent[] = [];
        a.subscribe((e) => events.push(e));
        expect(seqs((await a.read(k, 0, 10)).entries)).toEqual([1, 2]); // a watcher's read
        await waitForListen(1);
        await b.append(k, appendOf([user("second")])); // no NOTIFY: B saw no listener
        await waitFor(events, (e) => e.type === "appended" && e.headSeq === 3, 5_000);
        expect(seqs((await a.read(k, 0, 10)).entries)).toEqual([1, 2, 3]);
      } finally {
        await a?.close();
        await b.close();
      }
    });

    it("an append's NOTIFY announces only a committed head: never before its commit, never for a write that did not land", async () => {
      if (db === undefined || admin === undefined) throw new Error("no database");
      const check = admin;
      // A peer for the writers' peer check (its application_name), reading
      // the stored head as soon as each wake-up arrives.
      const observer = postgres(db.url, {
        max: 1,
        onnotice: () => {},
        connection: { application_name: "sessiond-listen" },
      });
      const heard: { s: string; r: string; h: number; stored: Promise<number> }[] = [];
      await observer.listen("sessiond_events", (p) => {
        const v = JSON.parse(p) as { t: string; w: string; s: string; r: string; h: number };
        if (v.t !== "appended") return;
        const stored = check<{ h: number }[]>`
          SELECT head_seq AS h FROM sessiond_sessions WHERE workspace = ${v.w} AND session_id = ${v.s}`;
        heard.push({ s: v.s, r: v.r, h: v.h, stored: stored.then((rows) => rows[0]?.h ?? 0) });
      });
      const [b, c] = await replicas({ headPollMs: 100 });
      try {
        // Re-created behind B's back: B's first attempt, planned on the old
        // incarnation at head 3, misses; its wake-up must not go out.
        const k = { workspace: "default", sessionId: "recreated" };
        await b.create(k, [rootEntry(k.sessionId)]);
        await b.append(k, appendOf([user("m1")]));
        await c.delete(k);
        await c.create(k, [rootEntry(k.sessionId)]);
        await c.append(k, appendOf([user("c1"), user("c2")]));
        await settle(300); // C's own wake-up (head 3) is in
        const before = heard.length;
        await b.append(k, appendOf([user("m2")]));
        await settle(300);
        const fromB = heard.slice(before).filter((x) => x.s === k.sessionId);
        expect(fromB.map((x) => x.h)).toEqual([4]);

        // Two replicas racing on shared sessions, many at once (batched
        // writes, compare-and-set misses, the locked path).
        const keys = Array.from({ length: 8 }, (_, i) => ({
          workspace: "default",
          sessionId: `race-${i}`,
        }));
        for (const key of keys) await b.create(key, [rootEntry(key.sessionId)]);
        await Promise.all(
          [b, c].flatMap((e, w) =>
            keys.map(async (key) => {
              for (let i = 0; i < 10; i++) await e.append(key, appendOf([user(`w${w}-${i}`)]));
            }),
          ),
        );
        await settle(300);
        const raced = heard.filter((x) => x.s.startsWith("race-"));
        expect(raced.length).toBeGreaterThan(0);
        for (const x of raced) expect(await x.stored).toBeGreaterThanOrEqual(x.h);
      } finally {
        await b.close();
        await c.close();
        await observer.end({ timeout: 0 });
      }
    });

    it("wakes A for a commit nobody NOTIFYed (its replica died between COMMIT and NOTIFY): the head poll", async () => {
      const [a, b] = await replicas({ headPollMs: 100 });
      try {
        const k = { workspace: "default", sessionId: "unannounced" };
        const events: StorageEvent[] = [];
        a.subscribe((e) => events.push(e));
        await waitForListen(1);
        await b.create(k, [rootEntry(k.sessionId)]);
        await b.append(k, appendOf([user("m1")]));
        await waitFor(events, (e) => e.type === "appended" && e.headSeq === 2);
        await a.read(k, 0, 10); // a watcher's read: the session is in A's cache
        await settle(300); // a few polls with nothing to report
        expect(events.filter((e) => e.type === "appended").map((e) => e.headSeq)).toEqual([2]);

        // What a replica killed right after its COMMIT leaves behind: the
        // rows and the head, and no NOTIFY.
        const entry = user("raw", "written, never announced", {
          parentId: "m1",
          seq: 3,
          timestamp: ts(1_767_225_700),
        });
        await admin?.begin(async (tx) => {
          await tx`
            INSERT INTO sessiond_entries (workspace, session_id, seq, id, parent_id, kind, payload)
            VALUES (${k.workspace}, ${k.sessionId}, 3, 'raw', 'm1', 'message', ${jsonOf(entry)})`;
          await tx`
            UPDATE sessiond_sessions SET head_seq = 3, leaf_id = 'raw', message_count = 2
            WHERE workspace = ${k.workspace} AND session_id = ${k.sessionId}`;
        });
        await waitFor(events, (e) => e.type === "appended" && e.headSeq === 3);
        expect(seqs((await a.read(k, 0, 10)).entries)).toEqual([1, 2, 3]);
        // Told once: later polls stay quiet.
        await settle(300);
        expect(events.filter((e) => e.type === "appended").map((e) => e.headSeq)).toEqual([2, 3]);

        // B's next append (a normal one, NOTIFYed after its commit) plans on the stored head.
        await b.append(k, appendOf([user("m4")]));
        await waitFor(events, (e) => e.type === "appended" && e.headSeq === 4);
        expect(seqs((await a.read(k, 0, 10)).entries)).toEqual([1, 2, 3, 4]);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}
