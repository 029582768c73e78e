import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDatabase,
  type PgServer,
  pgSkipReason,
  startPostgres,
} from "../../../test/harness/postgres.js";
import { describeStorageConformance } from "../conformance.js";
import { appendOf, expectCode, rootEntry, seqs, userMsg } from "../conformance-helpers.js";
import type { StorageEngine } from "../engine.js";
import { PostgresEngine } from "./postgres-engine.js";
import { SCHEMA_VERSION } from "./schema.js";

const skip = process.env.CI === "true" ? undefined : pgSkipReason();

if (skip !== undefined) {
  console.warn(`\n*** PostgreSQL engine tests SKIPPED: ${skip} ***\n`);
  it.skip(`PostgreSQL engine tests (skipped: ${skip})`, () => {});
} else {
  let server: PgServer | undefined;

  beforeAll(async () => {
    server = await startPostgres();
    if (server === undefined) throw new Error("PostgreSQL is not available");
  });

  afterAll(async () => {
    await server?.stop();
  });

  function serverUrl(): string {
    if (server === undefined) throw new Error("PostgreSQL did not start");
    return server.url;
  }

  /**
   * The conformance suite wants empty storage per test: one database for the
   * suite, emptied before each test (CREATE DATABASE costs ~250 ms here, a
   * TRUNCATE a few ms). Every engine of the previous test is closed by then.
   */
  let suiteDb: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let admin: postgres.Sql | undefined;

  afterAll(async () => {
    await admin?.end({ timeout: 1 });
    await suiteDb?.drop();
  });

  describeStorageConformance("postgres", async () => {
    if (suiteDb === undefined) {
      suiteDb = await createDatabase(serverUrl());
      admin = postgres(suiteDb.url, { max: 1, onnotice: () => {} });
    }
    const db = suiteDb;
    let engine = await PostgresEngine.open({ url: db.url });
    await admin?.unsafe("TRUNCATE sessiond_sessions, sessiond_entries");
    const siblings: PostgresEngine[] = [];
    return {
      engine,
      reopen: async () => {
        await engine.close();
        engine = await PostgresEngine.open({ url: db.url });
        return engine;
      },
      sibling: async () => {
        const other = await PostgresEngine.open({ url: db.url });
        siblings.push(other);
        return other;
      },
      cleanup: async () => {
        await engine.close();
        for (const other of siblings) await other.close();
      },
    };
  });

  describe("postgres engine: replicas, schema and failures", () => {
    it("two replicas appending to one session: seqs dense, every acknowledged entry once", async () => {
      const db = await createDatabase(serverUrl());
      const a = await PostgresEngine.open({ url: db.url });
      const b = await PostgresEngine.open({ url: db.url });
      try {
        const k = { workspace: "default", sessionId: "shared" };
        await a.create(k, [rootEntry(k.sessionId)]);
        // 4 writers (2 per replica) x 100 appends each, each writer sequential.
        const writers = [a, b, a, b].map(async (engine, w) => {
          const acked: string[] = [];
          for (let i = 0; i < 100; i++) {
            const r = await engine.append(k, appendOf([userMsg(`w${w}-${i}`)]));
            expect(r.deduplicated).toBe(false);
            acked.push(r.entries[0]?.id as string);
          }
          return acked;
        });
        const acked = (await Promise.all(writers)).flat();
        for (const engine of [a, b]) {
          const all = (await engine.read(k, 0, 1_000_000)).entries;
          expect(seqs(all)).toEqual(Array.from({ length: 401 }, (_, i) => i + 1));
          const ids = all.slice(1).map((e) => e.id);
          expect(new Set(ids).size).toBe(400);
          expect([...ids].sort()).toEqual([...acked].sort());
          // One linear chain: each planner saw the other replica's appends.
          all.slice(1).forEach((e, i) => {
            expect(e.parentId).toBe(all[i]?.id);
          });
        }
        const [recA] = await a.list("default", [k.sessionId]);
        expect(recA?.headSeq).toBe(401);
        expect(recA?.messageCount).toBe(400);
      } finally {
        await a.close();
        await b.close();
        await db.drop();
      }
    });

    it("sees a session deleted and re-created by another replica, not its cached log", async () => {
      const db = await createDatabase(serverUrl());
      const a = await PostgresEngine.open({ url: db.url });
      const b = await PostgresEngine.open({ url: db.url });
      try {
        const k = { workspace: "default", sessionId: "phoenix" };
        await a.create(k, [rootEntry(k.sessionId, { id: "old-root" })]);
        await a.append(k, appendOf([userMsg("o1"), userMsg("o2"), userMsg("o3")]));
        expect((await a.load(k)).headSeq).toBe(4);
        expect(await b.delete(k)).toBe(true);
        await b.create(k, [rootEntry(k.sessionId, { id: "new-root" })]);
        await b.append(k, appendOf([userMsg("n1"), userMsg("n2"), userMsg("n3"), userMsg("n4")]));
        const log = await a.load(k);
        expect(log.root.id).toBe("new-root");
        expect(log.headSeq).toBe(5);
        expect(log.has("o1")).toBe(false);
        const r = await a.append(k, appendOf([userMsg("after")]));
        expect(seqs(r.entries)).toEqual([6]);
        expect(r.entries[0]?.parentId).toBe("n4");
      } finally {
        await a.close();
        await b.close();
        await db.drop();
      }
    });

    it("refuses a database whose schema is newer than the code knows", async () => {
      const db = await createDatabase(serverUrl());
      const a = await PostgresEngine.open({ url: db.url });
      await a.close();
      const admin = postgres(db.url, { max: 1, onnotice: () => {} });
      try {
        await admin`INSERT INTO sessiond_migrations (version, description) VALUES (${SCHEMA_VERSION + 1}, 'from the future')`;
        const err = await expectCode(PostgresEngine.open({ url: db.url }), "FAILED_PRECONDITION");
        expect(err.message).toMatch(
          new RegExp(
            `schema is version ${SCHEMA_VERSION + 1}, newer than .*\\(${SCHEMA_VERSION}\\)`,
          ),
        );
      } finally {
        await admin.end({ timeout: 1 });
        await db.drop();
      }
    });

    it("applies the schema once when replicas start together", async () => {
      const db = await createDatabase(serverUrl());
      const engines: StorageEngine[] = await Promise.all(
        Array.from({ length: 4 }, () => PostgresEngine.open({ url: db.url })),
      );
      try {
        const k = { workspace: "w", sessionId: "s" };
        await engines[0]?.create(k, [rootEntry("s")]);
        for (const e of engines) expect(await e.listIds("w")).toEqual(["s"]);
      } finally {
        for (const e of engines) await e.close();
        await db.drop();
      }
    });

    it("gives UNAVAILABLE, not a crash, when the database is down, and recovers", async () => {
      const db = await createDatabase(serverUrl());
      const engine = await PostgresEngine.open({ url: db.url });
      const k = { workspace: "default", sessionId: "survivor" };
      const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
      try {
        await engine.create(k, [rootEntry(k.sessionId)]);
        // Refuse new connections to the database and kill the engine's connections.
        await admin.unsafe(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS false`);
        await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${db.name}`;
        await expectCode(engine.append(k, appendOf([userMsg("lost")])), "UNAVAILABLE");
        await expectCode(engine.load(k), "UNAVAILABLE");
        await expectCode(engine.listIds("default"), "UNAVAILABLE");
        await expectCode(
          engine.create({ ...k, sessionId: "other" }, [rootEntry("other")]),
          "UNAVAILABLE",
        );
        await admin.unsafe(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`);
        const r = await engine.append(k, appendOf([userMsg("back")]));
        expect(r.headSeq).toBe(2);
        expect(seqs((await engine.read(k, 0, 100)).entries)).toEqual([1, 2]);
      } finally {
        await engine.close();
        await admin.end({ timeout: 1 });
        await db.drop();
      }
    });

    it("gives UNAVAILABLE when no server listens at all", async () => {
      const engine = new PostgresEngine({ url: "postgres://postgres@127.0.0.1:1/none" });
      try {
        await expectCode(engine.listIds("default"), "UNAVAILABLE");
        await expectCode(
          engine.append({ workspace: "w", sessionId: "s" }, appendOf([userMsg("x")])),
          "UNAVAILABLE",
        );
        await expectCode(
          PostgresEngine.open({ url: "postgres://postgres@127.0.0.1:1/none" }),
          "UNAVAILABLE",
        );
      } finally {
        await engine.close();
      }
    });
  });
}
