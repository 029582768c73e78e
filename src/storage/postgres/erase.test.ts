import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import type postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { type Entry, WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { assistant, toolResult, user } from "../../../test/support/fixtures.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { SessionStore } from "../../store/session-store.js";
import type { StorageEvent } from "../engine.js";
import { PostgresEngine, type PostgresEngineOptions } from "./postgres-engine.js";

/**
 * Erasure on PostgreSQL, what is the engine's own (the store-level cases
 * run on it in src/store/erase.test.ts): the content leaves what a
 * `pg_dump --data-only` holds AND the pages of the entries table and its
 * TOAST table (the VACUUM after the call: without it the old payloads
 * stay there as dead tuples, which the negative control shows), search
 * finds nothing, and another replica that had the sessions cached reads
 * the erased form and tells its watchers, in NOTIFY wake-ups small enough
 * for PostgreSQL's 8000-byte limit on a large session.
 */

const run = promisify(execFile);
const WS = "acme";
const ERASED = ["ERASEME-PG-PARENT-1a2b", "ERASEME-PG-CHILD-3c4d", "ERASEME-PG-GRANDCHILD-5e6f"];
const KEPT = "KEEPME-PG-OTHER-7a8b";
/** Incompressible filler: the message goes to the TOAST table. */
const BIG = randomBytes(6000).toString("base64");

const engines: PostgresEngine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});

async function opened(extra: Partial<PostgresEngineOptions> = {}) {
  const o = await openPostgres(extra);
  engines.push(o.engine);
  return o;
}

/** The markers found in `pg_dump --data-only` of the database. */
async function inDump(url: string, markers: readonly string[]): Promise<string[]> {
  const { stdout } = await run("pg_dump", ["--data-only", url], { maxBuffer: 256 << 20 });
  return markers.filter((m) => stdout.includes(m));
}

/**
 * The markers found in the raw pages of sessiond_entries and of its TOAST
 * table, dead tuples included (pageinspect's get_raw_page, through the
 * buffer cache: what the table's files hold once written out).
 */
async function inPages(admin: postgres.Sql, markers: readonly string[]): Promise<string[]> {
  await admin`CREATE EXTENSION IF NOT EXISTS pageinspect`;
  const [t] = await admin<{ toast: string }[]>`
    SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE relname = 'sessiond_entries'`;
  const found = new Set<string>();
  for (const rel of ["sessiond_entries", t?.toast as string]) {
    const [size] = await admin<
      { n: string }[]
    >`SELECT pg_relation_size(${rel}::regclass) / 8192 AS n`;
    for (let b = 0; b < Number(size?.n); b++) {
      const [page] = await admin<{ p: Buffer }[]>`SELECT get_raw_page(${rel}, ${b}) AS p`;
      for (const m of markers) if (page?.p.includes(m)) found.add(m);
    }
  }
  return [...found].sort();
}

function shape(entries: readonly Entry[]): string[] {
  return entries.map((e) => `${e.seq}:${e.id}<${e.parentId ?? ""}:${e.kind.case}`);
}

/** p ─ subagent c ─ subagent g, and o; the markers in their messages (p's also in TOAST). */
async function seed(store: SessionStore): Promise<void> {
  await store.create({ workspace: WS, sessionId: "p", tags: { user: "42" } });
  await (await store.open(WS, "p")).append([
    user("u1", `my card is ${ERASED[0]}`),
    assistant("a1", `calling a tool about ${ERASED[0]} ${BIG}`, ["call1"]),
    toolResult("t1", "call1"),
  ]);
  await store.create({ workspace: WS, sessionId: "c", parentSessionId: "p", agentType: "x" });
  await (await store.open(WS, "c")).append([user("cu1", `child saw ${ERASED[1]}`)]);
  await store.create({ workspace: WS, sessionId: "g", parentSessionId: "c", agentType: "x" });
  await (await store.open(WS, "g")).append([user("gu1", `grandchild saw ${ERASED[2]}`)]);
  await store.create({ workspace: WS, sessionId: "o", tags: { user: "7" } });
  await (await store.open(WS, "o")).append([user("ou1", `other user ${KEPT}`)]);
}

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL erasure tests (skipped: ${pgSkip})`, () => {});
} else {
  describe("erasure on PostgreSQL", () => {
    it("the content leaves pg_dump, the table's pages (dead tuples vacuumed) and search; the tree stays", async () => {
      const { engine, url, admin } = await opened();
      const store = new SessionStore(engine);
      await seed(store);
      const before = new Map<string, string[]>();
      for (const id of ["p", "c", "g"]) {
        before.set(id, shape((await (await store.open(WS, id)).entries(0, 100)).entries));
      }
      expect(await inDump(url, [...ERASED, KEPT])).toEqual([...ERASED, KEPT]);
      expect(await inPages(admin, [...ERASED, BIG.slice(0, 40)])).toEqual(
        [...ERASED, BIG.slice(0, 40)].sort(),
      );

      const rec = await store.erase({ workspace: WS, sessionIds: ["p"], by: "dpo", why: "GDPR" });

      expect(rec.sessionIds).toEqual(["p", "c", "g"]);
      expect(await inPages(admin, [...ERASED, BIG.slice(0, 40)])).toEqual([]);
      expect(await inDump(url, [...ERASED, KEPT])).toEqual([KEPT]);
      expect((await store.search({ workspace: WS, query: "ERASEME" })).hits).toEqual([]);
      expect(
        (await store.search({ workspace: WS, query: "ERASEME", parentSessionId: "p" })).hits,
      ).toEqual([]);
      expect(
        (await store.search({ workspace: WS, query: KEPT })).hits.map((h) => h.entryId),
      ).toEqual(["ou1"]);
      for (const id of ["p", "c", "g"]) {
        const entries = (await (await store.open(WS, id)).entries(0, 100)).entries;
        expect(shape(entries)).toEqual(before.get(id));
        for (const e of entries.slice(1)) expect(e.withheld?.reason).toBe(WithheldReason.ERASED);
      }
      // One audit row for the call, without content.
      const rows = await admin<{ workspace: string; record: string }[]>`
        SELECT workspace, record FROM sessiond_erasures`;
      expect(rows.map((r) => r.workspace)).toEqual([WS]);
      expect(JSON.parse(rows[0]?.record ?? "{}").sessionIds).toEqual(["p", "c", "g"]);
      expect(rows[0]?.record).not.toMatch(/ERASEME|KEEPME/);
    });

    it("without the VACUUM the erased content stays in the table's pages as dead tuples (negative control)", async () => {
      const { engine, url, admin } = await opened({ vacuumAfterErase: false });
      const store = new SessionStore(engine);
      await seed(store);
      await store.erase({ workspace: WS, sessionIds: ["p"], by: "dpo" });
      // Invisible to every query...
      expect(await inDump(url, ERASED)).toEqual([]);
      // ...but still bytes in the table's files.
      expect((await inPages(admin, ERASED)).length).toBeGreaterThan(0);
    });

    it("another replica that had the sessions cached reads them erased, and a restart too", async () => {
      const { engine: a, url } = await opened();
      const b = await PostgresEngine.open({ url });
      engines.push(b);
      const storeA = new SessionStore(a);
      const storeB = new SessionStore(b);
      await seed(storeA);
      // B caches every log.
      for (const id of ["p", "c", "g"]) {
        const text = JSON.stringify(
          (await (await storeB.open(WS, id)).entries(0, 100)).entries,
          big,
        );
        expect(text).toMatch(/ERASEME/);
      }
      await storeA.erase({ workspace: WS, tags: { user: "42" }, by: "dpo", why: "user 42" });
      for (const id of ["p", "c", "g"]) {
        const entries = (await (await storeB.open(WS, id)).entries(0, 100)).entries;
        expect(entries.slice(1).map((e) => e.withheld?.reason)).toEqual(
          entries.slice(1).map(() => WithheldReason.ERASED),
        );
        expect(entries.map((e) => JSON.stringify(e.kind.value, big)).join()).not.toMatch(/ERASEME/);
      }
      expect((await storeB.erasures(WS)).map((r) => r.request)).toEqual([{ tags: { user: "42" } }]);
      // An append of B to an erased session in clear plans on the reloaded log (new content).
      const appended = await (await storeB.open(WS, "c")).append([user("cu2", "after")]);
      expect(appended.entries[0]?.parentId).toBe("cu1");

      const c = await PostgresEngine.open({ url });
      engines.push(c);
      const storeC = new SessionStore(c);
      const p = (await (await storeC.open(WS, "p")).entries(0, 100)).entries;
      expect(p[2]?.withheld?.by).toBe("dpo");
      expect(
        JSON.stringify(
          p.map((e) => e.kind.value),
          big,
        ),
      ).not.toMatch(/ERASEME/);
    });

    it("a large session's erasure wakes another replica's watchers in NOTIFYs under PostgreSQL's 8000-byte limit", async () => {
      const { engine: a, url } = await opened();
      const b = await PostgresEngine.open({ url });
      engines.push(b);
      const store = new SessionStore(a);
      await store.create({ workspace: WS, sessionId: "big" });
      const s = await store.open(WS, "big");
      let parent: string | undefined;
      for (let k = 0; k < 22; k++) {
        const batch: Entry[] = [];
        for (let i = 0; i < 100; i++) {
          const id = `m${k * 100 + i}`;
          batch.push(user(id, `text ${id}`, parent === undefined ? {} : { parentId: parent }));
          parent = id;
        }
        await s.append(batch);
      }
      const seqs: number[] = [];
      b.subscribe((e: StorageEvent) => {
        if (e.type === "withheld") seqs.push(...(e.seqs ?? []));
      });
      // B's LISTEN connection up before A commits.
      await new Promise((r) => setTimeout(r, 500));
      const rec = await store.erase({ workspace: WS, sessionIds: ["big"], by: "dpo" });
      expect(rec.newlyErased).toBe(2200);
      for (let i = 0; i < 150 && seqs.length < 2200; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(seqs.length).toBe(2200);
      expect(new Set(seqs).size).toBe(2200);
    });
  });
}

function big(_k: string, v: unknown): unknown {
  return typeof v === "bigint" ? String(v) : v;
}
