import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type ConformanceFactory,
  describeCapabilityConformance,
  describeStorageConformance,
  expectedRootPage,
} from "../../../test/conformance/storage/index.js";
import {
  createDatabase,
  type PgServer,
  pgSkipReason,
  startPostgres,
  withDatabase,
} from "../../../test/harness/postgres.js";
import {
  appendOf,
  expectCode,
  rootEntry,
  seqs,
  settle,
  ts,
  user,
} from "../../../test/support/fixtures.js";
import type { SessionRecord, StorageEngine, StorageEvent } from "../engine.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { idsByRefQuery, pageRootsQuery } from "./listing.js";
import { PostgresEngine } from "./postgres-engine.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
import type { PgEncryption } from "./sealing.js";

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

  type TestDb = Awaited<ReturnType<typeof createDatabase>>;

  /**
   * The conformance suite wants empty storage per test: one database for the
   * suite, emptied before each test (CREATE DATABASE costs ~250 ms here, a
   * TRUNCATE a few ms). Every engine of the previous test is closed by then.
   */
  function suiteFactory(
    makeDb: () => Promise<TestDb>,
    /** Encryption at rest for every engine of the suite (sealing.ts). */
    sealing?: () => Promise<PgEncryption>,
  ): ConformanceFactory {
    let suiteDb: TestDb | undefined;
    let admin: postgres.Sql | undefined;
    let encryption: PgEncryption | undefined;

    afterAll(async () => {
      await admin?.end({ timeout: 1 });
      await suiteDb?.drop();
    });

    return async () => {
      if (suiteDb === undefined) {
        suiteDb = await makeDb();
        admin = postgres(suiteDb.url, { max: 1, onnotice: () => {} });
      }
      const db = suiteDb;
      encryption ??= await sealing?.();
      let engine = await PostgresEngine.open({ url: db.url, encryption });
      await admin?.unsafe(
        "TRUNCATE sessiond_sessions, sessiond_entries, sessiond_session_keys, sessiond_checkpoints, sessiond_blobs, sessiond_blob_chunks",
      );
      const siblings: PostgresEngine[] = [];
      return {
        engine,
        reopen: async () => {
          await engine.close();
          engine = await PostgresEngine.open({ url: db.url, encryption });
          return engine;
        },
        sibling: async () => {
          const other = await PostgresEngine.open({ url: db.url, encryption });
          siblings.push(other);
          return other;
        },
        cleanup: async () => {
          await engine.close();
          for (const other of siblings) await other.close();
        },
      };
    };
  }

  /**
   * A database whose default collation is ICU en-US, not C: there '-' and
   * '_' are skipped at the first level and case is folded, so ids sort
   * otherwise than JavaScript's <. The listing must not care.
   */
  async function createIcuDatabase(): Promise<TestDb> {
    const url = serverUrl();
    const name = `sessiond_icu_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    const a = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await a.unsafe(
        `CREATE DATABASE "${name}" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`,
      );
    } finally {
      await a.end({ timeout: 1 });
    }
    return {
      url: withDatabase(url, name),
      name,
      drop: async () => {
        const b = postgres(url, { max: 1, onnotice: () => {} });
        try {
          await b.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        } finally {
          await b.end({ timeout: 1 });
        }
      },
    };
  }

  const factory = suiteFactory(() => createDatabase(serverUrl()));

  describeStorageConformance("postgres", factory);
  describeCapabilityConformance("postgres", factory);
  describeCapabilityConformance("postgres (ICU en-US collation)", suiteFactory(createIcuDatabase));
  // Every session sealed: the contract holds on sealed payloads too.
  const keyDir = mkdtempSync(join(tmpdir(), "sessiond-pg-conformance-keys-"));
  afterAll(() => rm(keyDir, { recursive: true, force: true }));
  const sealedFactory = suiteFactory(
    () => createDatabase(serverUrl()),
    async () => ({
      keys: await LocalKeyring.open(join(keyDir, "keyring.json"), { create: true }),
      workspaces: "all",
    }),
  );
  describeStorageConformance("postgres, every session sealed", sealedFactory);

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
            const r = await engine.append(k, appendOf([user(`w${w}-${i}`)]));
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

    it("appends to many sessions at once share statements; a session the database refuses fails alone", async () => {
      const db = await createDatabase(serverUrl());
      const a = await PostgresEngine.open({ url: db.url });
      const b = await PostgresEngine.open({ url: db.url });
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      try {
        // Counts the statements that inserted entries (a statement-level trigger).
        await sql.unsafe(`
          CREATE SEQUENCE insert_statements;
          CREATE FUNCTION count_statement() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN PERFORM nextval('insert_statements'); RETURN NULL; END $$;
          CREATE TRIGGER count_statement AFTER INSERT ON sessiond_entries
            FOR EACH STATEMENT EXECUTE FUNCTION count_statement();
          CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN IF NEW.session_id = 'bad' THEN RAISE EXCEPTION 'refused for the test'; END IF;
            RETURN NEW; END $$;`);
        const keys = Array.from({ length: 40 }, (_, i) => ({
          workspace: "w",
          sessionId: `s${i}`,
        }));
        const bad = { workspace: "w", sessionId: "bad" };
        for (const k of [...keys, bad]) await a.create(k, [rootEntry(k.sessionId)]);
        const statements = async () =>
          Number((await sql`SELECT last_value AS n FROM insert_statements`)[0]?.n);
        const before = await statements();
        await Promise.all(keys.map((k) => a.append(k, appendOf([user(`${k.sessionId}-1`)]))));
        // 40 appends, all in flight at once: a few statements, not 40.
        expect((await statements()) - before).toBeLessThan(20);

        await sql.unsafe(`
          CREATE TRIGGER refuse_bad BEFORE INSERT ON sessiond_entries
            FOR EACH ROW EXECUTE FUNCTION refuse_bad()`);
        // Another replica moves some rows on: their compare-and-set misses, they plan again.
        for (const k of keys.slice(0, 5)) await b.append(k, appendOf([user(`${k.sessionId}-b`)]));
        const results = await Promise.allSettled(
          [...keys, bad].map((k) => a.append(k, appendOf([user(`${k.sessionId}-2`)]))),
        );
        const failed = results.flatMap((r, i) => (r.status === "rejected" ? [i] : []));
        expect(failed).toEqual([keys.length]);
        await expectCode(
          Promise.reject((results[keys.length] as PromiseRejectedResult).reason),
          "UNAVAILABLE",
        );
        for (const [i, k] of keys.entries()) {
          const log = await a.load(k);
          expect(log.headSeq).toBe(i < 5 ? 4 : 3);
          expect(log.get(`${k.sessionId}-2`)?.seq).toBe(BigInt(log.headSeq));
        }
        expect((await a.load(bad)).headSeq).toBe(1);
        const [rec] = await b.list("w", ["bad"]);
        expect(rec?.headSeq).toBe(1);
      } finally {
        await sql.end({ timeout: 1 });
        await a.close();
        await b.close();
        await db.drop();
      }
    });

    it("plans on the stored log, not a stale cache: a CAS on another replica's head wins, a retry gets the current head", async () => {
      const db = await createDatabase(serverUrl());
      const a = await PostgresEngine.open({ url: db.url });
      const b = await PostgresEngine.open({ url: db.url });
      try {
        const k = { workspace: "w", sessionId: "stale" };
        await a.create(k, [rootEntry(k.sessionId)]);
        await a.append(k, appendOf([user("m1")])); // A's cache: head 2
        await b.append(k, appendOf([user("m2"), user("m3")])); // stored: head 4
        // Expecting the stored head: A's cached head (2) says otherwise, the table does not.
        const r = await a.append(k, appendOf([user("m4")], { expectedSeq: 4 }));
        expect(r.headSeq).toBe(5);
        await b.append(k, appendOf([user("m5")])); // stored: head 6, A's cache 5
        await expectCode(a.append(k, appendOf([user("x")], { expectedSeq: 5 })), "ABORTED");
        // A retry of B's batch through A: deduplicated, with the head as stored.
        await b.append(k, appendOf([user("m6")])); // stored: head 7
        const again = await a.append(k, appendOf([user("m5")]));
        expect(again.deduplicated).toBe(true);
        expect(again.headSeq).toBe(7);
        expect(seqs((await b.read(k, 0, 100)).entries)).toEqual([1, 2, 3, 4, 5, 6, 7]);
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
        await a.append(k, appendOf([user("o1"), user("o2"), user("o3")]));
        expect((await a.load(k)).headSeq).toBe(4);
        expect(await b.delete(k)).toBe(true);
        await b.create(k, [rootEntry(k.sessionId, { id: "new-root" })]);
        await b.append(k, appendOf([user("n1"), user("n2"), user("n3"), user("n4")]));
        const log = await a.load(k);
        expect(log.root.id).toBe("new-root");
        expect(log.headSeq).toBe(5);
        expect(log.has("o1")).toBe(false);
        const r = await a.append(k, appendOf([user("after")]));
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
        await expectCode(engine.append(k, appendOf([user("lost")])), "UNAVAILABLE");
        await expectCode(engine.load(k), "UNAVAILABLE");
        await expectCode(engine.listIds("default"), "UNAVAILABLE");
        await expectCode(
          engine.create({ ...k, sessionId: "other" }, [rootEntry("other")]),
          "UNAVAILABLE",
        );
        await admin.unsafe(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`);
        const r = await engine.append(k, appendOf([user("back")]));
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
          engine.append({ workspace: "w", sessionId: "s" }, appendOf([user("x")])),
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

  describe("postgres engine: listing pages and deletes in SQL", () => {
    interface PlanNode {
      "Node Type": string;
      "Index Name"?: string;
      "Index Cond"?: string;
      Filter?: string;
      Plans?: PlanNode[];
    }

    function nodesOf(n: PlanNode): PlanNode[] {
      return [n, ...(n.Plans ?? []).flatMap(nodesOf)];
    }

    it.each([
      ["C", () => createDatabase(serverUrl())],
      ["ICU en-US", createIcuDatabase],
    ] as const)(
      "pages with an index scan on sessiond_sessions_page, keyset in the index condition, no sort (%s collation)",
      async (_collation, makeDb) => {
        const db = await makeDb();
        const engine = await PostgresEngine.open({ url: db.url });
        const sql = postgres(db.url, { max: 1, onnotice: () => {} });
        try {
          // 20 000 sessions in 4 workspaces, one in 5 a subagent; 3 per creation time.
          await sql`
            INSERT INTO sessiond_sessions (workspace, session_id, created_at_ms, parent_session_id,
              head_seq, leaf_id, message_count, updated_at_ms)
            SELECT 'w' || (i % 4), 's-' || i, 1000 + i / 3,
              CASE WHEN i % 5 = 0 THEN 's-' || (i - 4) ELSE '' END, 1, 'r', 0, 0
            FROM generate_series(1, 20000) AS i`;
          await sql`
            INSERT INTO sessiond_entries (workspace, session_id, seq, id, payload)
            SELECT workspace, session_id, 1, 'r-' || session_id, '{}' FROM sessiond_sessions`;
          await sql`ANALYZE`;
          const after = { createdMs: 3000, id: "s-6001" };
          for (const q of [
            { parentSessionId: "", order: "desc", limit: 51 },
            { parentSessionId: "", order: "desc", limit: 51, after },
            { parentSessionId: "", order: "asc", limit: 51 },
            { parentSessionId: "", order: "asc", limit: 51, after },
            { parentSessionId: "s-6001", order: "desc", limit: 51, after },
            { parentSessionId: "s-6001", order: "asc", limit: 51 },
          ] as const) {
            const [row] = await sql<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>`
              EXPLAIN (FORMAT JSON) ${pageRootsQuery(sql, "w1", q)}`;
            const plan = row?.["QUERY PLAN"][0].Plan as PlanNode;
            const nodes = nodesOf(plan);
            const what = `${JSON.stringify(q)}: ${JSON.stringify(plan, null, 1)}`;
            expect(plan["Node Type"], what).toBe("Limit");
            expect(
              nodes.map((n) => n["Node Type"]),
              what,
            ).not.toContain("Sort");
            const scan = nodes.find((n) => n["Index Name"] === "sessiond_sessions_page");
            expect(scan?.["Node Type"], what).toMatch(/^Index (Only )?Scan$/);
            expect(scan?.Filter, what).toBeUndefined();
            if ("after" in q) expect(scan?.["Index Cond"], what).toMatch(/created_at_ms/);
          }
        } finally {
          await sql.end({ timeout: 1 });
          await engine.close();
          await db.drop();
        }
      },
    );

    it.each([
      ["C", () => createDatabase(serverUrl())],
      ["ICU en-US", createIcuDatabase],
    ] as const)(
      "resolves a session reference with index range scans, not a scan of the workspace (%s collation)",
      async (_collation, makeDb) => {
        const db = await makeDb();
        const engine = await PostgresEngine.open({ url: db.url });
        const sql = postgres(db.url, { max: 1, onnotice: () => {} });
        try {
          // 20 000 generated ids and 20 000 client-chosen ones in 4 workspaces.
          await sql`
            INSERT INTO sessiond_sessions (workspace, session_id, created_at_ms, head_seq, leaf_id,
              message_count, updated_at_ms)
            SELECT 'w' || (i % 4),
              CASE WHEN i % 2 = 0 THEN '20260304-0506' || lpad((i % 100)::text, 2, '0') || '-' ||
                lpad(to_hex(i * 2654435761 % 4294967296), 8, '0') ELSE 's-' || i END,
              1000 + i, 1, 'r', 0, 0
            FROM generate_series(1, 40000) AS i`;
          await sql`ANALYZE`;
          for (const [ref, indexes] of [
            ["0a1b", ["sessiond_sessions_id_prefix", "sessiond_sessions_short_id"]],
            ["2026", ["sessiond_sessions_id_prefix", "sessiond_sessions_short_id"]],
            ["s-12", ["sessiond_sessions_id_prefix"]],
          ] as const) {
            const [row] = await sql<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>`
              EXPLAIN (FORMAT JSON) ${idsByRefQuery(sql, "w1", ref, 6)}`;
            const plan = row?.["QUERY PLAN"][0].Plan as PlanNode;
            const nodes = nodesOf(plan);
            const what = `${ref}: ${JSON.stringify(plan, null, 1)}`;
            expect(
              nodes.map((n) => n["Node Type"]),
              what,
            ).not.toContain("Seq Scan");
            for (const index of indexes) {
              const scan = nodes.find((n) => n["Index Name"] === index);
              expect(scan?.["Node Type"], what).toMatch(/^(Index (Only )?Scan|Bitmap Index Scan)$/);
              expect(scan?.["Index Cond"], what).toMatch(/>=/);
            }
          }
        } finally {
          await sql.end({ timeout: 1 });
          await engine.close();
          await db.drop();
        }
      },
    );

    it("migrates a version-1 database: the page index replaces the two listing indexes, data kept", async () => {
      const db = await createDatabase(serverUrl());
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      try {
        const v1 = MIGRATIONS.find((m) => m.version === 1) as (typeof MIGRATIONS)[number];
        await sql.begin(async (tx) => {
          await tx`CREATE TABLE sessiond_migrations (
            version integer PRIMARY KEY, description text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now())`;
          await tx.unsafe(v1.sql);
          await tx`INSERT INTO sessiond_migrations (version, description) VALUES (1, ${v1.description})`;
        });
        const indexes = async () =>
          (
            await sql<{ indexname: string }[]>`
              SELECT indexname FROM pg_indexes WHERE tablename = 'sessiond_sessions' ORDER BY 1`
          ).map((r) => r.indexname);
        expect(await indexes()).toContain("sessiond_sessions_by_created");
        // Sessions written under version 1 (the columns are the same).
        for (const [i, id] of ["b", "a", "C"].entries()) {
          await sql`
            INSERT INTO sessiond_sessions (workspace, session_id, created_at_ms, head_seq, leaf_id,
              message_count, updated_at_ms)
            VALUES ('w', ${id}, ${1000 + (i % 2)}, 1, ${`root-${id}`}, 0, 0)`;
        }
        const engine = await PostgresEngine.open({ url: db.url });
        try {
          expect(await indexes()).toEqual([
            "sessiond_sessions_id_prefix",
            "sessiond_sessions_page",
            "sessiond_sessions_pkey",
            "sessiond_sessions_short_id",
            "sessiond_sessions_tags",
          ]);
          const [v] = await sql<{ v: number }[]>`SELECT max(version) AS v FROM sessiond_migrations`;
          expect(v?.v).toBe(SCHEMA_VERSION);
          // No seq-1 entries were written above: give them, as a create would have.
          for (const id of ["a", "b", "C"]) {
            await sql`
              INSERT INTO sessiond_entries (workspace, session_id, seq, id, payload)
              VALUES ('w', ${id}, 1, ${`root-${id}`}, '{}')`;
          }
          const page = await engine.pageRoots("w", {
            parentSessionId: "",
            order: "desc",
            limit: 10,
          });
          expect(page.map((r) => `${r.sessionId}@${r.createdAtMs}`)).toEqual([
            "a@1001",
            "b@1000",
            "C@1000",
          ]);
        } finally {
          await engine.close();
        }
      } finally {
        await sql.end({ timeout: 1 });
        await db.drop();
      }
    });

    it("keeps a session whose root was damaged in its place: listRoots and pageRoots agree", async () => {
      const db = await createDatabase(serverUrl());
      const engine = await PostgresEngine.open({ url: db.url });
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      try {
        const at = (s: number) => ({ timestamp: ts(1_767_225_600 + s, 0) });
        for (const [i, id] of ["p", "q", "r"].entries()) {
          await engine.create({ workspace: "w", sessionId: id }, [rootEntry(id, at(i))]);
        }
        for (const [i, id] of ["p-1", "p-2"].entries()) {
          await engine.create({ workspace: "w", sessionId: id }, [
            rootEntry(id, { ...at(10 + i), parentSessionId: "p" }),
          ]);
        }
        await sql`
          UPDATE sessiond_entries SET payload = 'not json'
          WHERE workspace = 'w' AND session_id IN ('q', 'p-2') AND seq = 1`;
        const roots = await engine.listRoots("w");
        const damaged = roots.filter((r) => r.health === "corrupt").map((r) => r.sessionId);
        expect(damaged.sort()).toEqual(["p-2", "q"]);
        const q = roots.find((r) => r.sessionId === "q");
        expect(q?.createdAtMs).toBe((1_767_225_600 + 1) * 1000);
        expect(q?.healthDetail).toMatch(/corrupt at seq 1/);
        expect(roots.find((r) => r.sessionId === "p-2")?.parentSessionId).toBe("p");
        for (const parentSessionId of ["", "p"]) {
          for (const order of ["asc", "desc"] as const) {
            const query = { parentSessionId, order, limit: 10 };
            const page = await engine.pageRoots("w", query);
            expect(page).toEqual(expectedRootPage(roots, query));
          }
        }
        const top = await engine.pageRoots("w", { parentSessionId: "", order: "asc", limit: 10 });
        expect(top.map((r) => `${r.sessionId}:${r.health}`)).toEqual(["p:ok", "q:corrupt", "r:ok"]);
      } finally {
        await sql.end({ timeout: 1 });
        await engine.close();
        await db.drop();
      }
    });

    it("a page's records come with the page: the list of its ids right after costs no query, a later one queries", async () => {
      const db = await createDatabase(serverUrl());
      const engine = await PostgresEngine.open({ url: db.url });
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      try {
        const at = (s: number) => ({ timestamp: ts(1_767_225_600 + s, 0) });
        for (const [i, id] of ["a", "b", "c"].entries()) {
          await engine.create({ workspace: "w", sessionId: id }, [rootEntry(id, at(i))]);
        }
        await sql`UPDATE sessiond_entries SET payload = 'not json' WHERE session_id = 'b' AND seq = 1`;
        const query = { parentSessionId: "", order: "desc", limit: 3 } as const;
        const ids = (await engine.pageRoots("w", query)).map((r) => r.sessionId);
        expect(ids).toEqual(["c", "b", "a"]);
        // As the store calls it: in the same turn of the event loop, from the
        // page query's rows. The same records as a query gives, corrupt root included.
        await sql`UPDATE sessiond_sessions SET title = 'changed' WHERE session_id = 'a'`;
        const page = await engine.pageRoots("w", query);
        const records = await engine.list(
          "w",
          page.map((r) => r.sessionId),
        );
        expect(records.map((r) => [r.sessionId, r.health, r.title])).toEqual([
          ["c", "ok", "title of c"],
          ["b", "corrupt", "title of b"],
          ["a", "ok", "changed"],
        ]);
        expect(records[1]?.healthDetail).toMatch(/corrupt at seq 1/);
        const byId = (rs: SessionRecord[]) =>
          [...rs].sort((x, y) => (x.sessionId < y.sessionId ? -1 : 1));
        await new Promise((resolve) => setImmediate(resolve));
        expect(byId(await engine.list("w", ids))).toEqual(byId(records));
        await engine.pageRoots("w", query);
        expect(byId(await engine.list("w", ids.slice(0, 2)))).toEqual(byId(records.slice(0, 2)));
        // Consumed: the same list again is a query, and sees what changed since.
        await sql`UPDATE sessiond_sessions SET title = 'again' WHERE session_id = 'a'`;
        expect((await engine.list("w", ids)).find((r) => r.sessionId === "a")?.title).toBe("again");
        // A later turn of the event loop: a query.
        await engine.pageRoots("w", query);
        await sql`UPDATE sessiond_sessions SET title = 'later' WHERE session_id = 'a'`;
        expect((await engine.list("w", ["a"])).map((r) => r.title)).toEqual(["later"]);
        await engine.pageRoots("w", query);
        await new Promise((resolve) => setImmediate(resolve));
        await sql`UPDATE sessiond_sessions SET title = 'last' WHERE session_id = 'a'`;
        const late = await engine.list("w", ids);
        expect(late.find((r) => r.sessionId === "a")?.title).toBe("last");
      } finally {
        await sql.end({ timeout: 1 });
        await engine.close();
        await db.drop();
      }
    });

    it("deleteMany is all or nothing: a failure on the last row removes none and wakes nobody", async () => {
      const db = await createDatabase(serverUrl());
      const a = await PostgresEngine.open({ url: db.url });
      const b = await PostgresEngine.open({ url: db.url });
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      try {
        const ids = ["parent", "child-1", "child-2", "grandchild"];
        for (const id of ids) {
          const parentSessionId =
            id === "parent" ? undefined : id === "grandchild" ? "child-1" : "parent";
          await a.create({ workspace: "w", sessionId: id }, [rootEntry(id, { parentSessionId })]);
          await a.append({ workspace: "w", sessionId: id }, appendOf([user(`${id}-m`)]));
        }
        const heard: StorageEvent[] = [];
        const here: StorageEvent[] = [];
        b.subscribe((e) => heard.push(e));
        a.subscribe((e) => here.push(e));
        await settle(300); // b's LISTEN is up
        await sql.unsafe(`
          CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN RAISE EXCEPTION 'refused: %', OLD.session_id; END $$;
          CREATE TRIGGER refuse BEFORE DELETE ON sessiond_sessions
            FOR EACH ROW WHEN (OLD.session_id = 'grandchild') EXECUTE FUNCTION refuse();`);
        const err = await expectCode(a.deleteMany("w", ids), "UNAVAILABLE");
        expect(err.message).toMatch(/refused: grandchild/);
        await settle(300);
        expect(heard.filter((e) => e.type === "deleted")).toEqual([]);
        expect(here.filter((e) => e.type === "deleted")).toEqual([]);
        for (const e of [a, b]) {
          expect((await e.listIds("w")).sort()).toEqual([...ids].sort());
          for (const id of ids)
            expect((await e.load({ workspace: "w", sessionId: id })).headSeq).toBe(2);
        }
        const [count] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM sessiond_entries`;
        expect(Number(count?.n)).toBe(8);

        await sql.unsafe("DROP TRIGGER refuse ON sessiond_sessions");
        expect(await a.deleteMany("w", ids)).toEqual(ids);
        // b hears one NOTIFY per session; a emits its own events after COMMIT.
        await vi.waitFor(() =>
          expect(heard.filter((e) => e.type === "deleted").map((e) => e.sessionId)).toEqual(ids),
        );
        expect(here.filter((e) => e.type === "deleted").map((e) => e.sessionId)).toEqual(ids);
        expect(await b.listIds("w")).toEqual([]);
        for (const id of ids)
          await expectCode(b.load({ workspace: "w", sessionId: id }), "NOT_FOUND");
        const [left] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM sessiond_entries`;
        expect(Number(left?.n)).toBe(0);
      } finally {
        await sql.end({ timeout: 1 });
        await a.close();
        await b.close();
        await db.drop();
      }
    });
  });
}
