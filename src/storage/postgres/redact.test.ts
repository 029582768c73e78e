import { afterAll, describe, expect, it } from "vitest";
import { WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { user } from "../../../test/support/fixtures.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { SessionStore } from "../../store/session-store.js";
import type { StorageEvent } from "../engine.js";
import { PostgresEngine } from "./postgres-engine.js";

/**
 * Redaction on PostgreSQL: one transaction updates the rows (the content
 * is gone from the table and from the trigram search), and every replica
 * follows: one that had the session cached reads the new form (the
 * session's new incarnation starts its cached log over), its next append
 * plans on the reloaded log, and its watchers get the "withheld" event
 * from the NOTIFY.
 */

const SECRET = "sk-live-PGMARKER-8086";
const engines: PostgresEngine[] = [];

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL redaction tests (skipped: ${pgSkip})`, () => {});
} else {
  afterAll(async () => {
    for (const e of engines) await e.close();
  });

  describe("redaction on PostgreSQL", () => {
    it("updates the rows, and a replica with the session cached reads, appends and is told accordingly", async () => {
      const { engine: a, url, admin } = await openPostgres();
      const b = await PostgresEngine.open({ url });
      engines.push(a, b);
      const storeA = new SessionStore(a);
      const storeB = new SessionStore(b);
      await storeA.create({ sessionId: "pg-r" });
      await (await storeA.open(undefined, "pg-r")).append([
        user("u1", `key ${SECRET}`),
        user("u2", "plain"),
      ]);
      // B has the log cached and listens.
      const key = { workspace: "default", sessionId: "pg-r" };
      expect((await b.read(key, 0, 10)).entries[1]?.id).toBe("u1");
      const events: StorageEvent[] = [];
      const unsubscribe = b.subscribe((e) => events.push(e));
      // Let B's LISTEN connection come up before A commits.
      for (let i = 0; i < 50 && (b.stats?.().cachedSessions ?? 0) === 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 300));

      await (await storeA.open(undefined, "pg-r")).redact(["u1"], { by: "ops", why: "key" });

      const rows = await admin`
        SELECT seq FROM sessiond_entries WHERE payload LIKE ${`%PGMARKER%`}`;
      expect(rows.length).toBe(0);
      const hits = await storeA.search({ query: "PGMARKER" });
      expect(hits.hits).toEqual([]);

      const read = (await b.read(key, 0, 10)).entries;
      expect(read[1]?.withheld?.reason).toBe(WithheldReason.REDACTED);
      expect(
        JSON.stringify(read[1]?.kind.value, (_k, v) => (typeof v === "bigint" ? String(v) : v)),
      ).not.toContain("PGMARKER");

      const appended = await (await storeB.open(undefined, "pg-r")).append([user("u3", "from b")]);
      expect(appended.headSeq).toBe(4);
      expect(appended.entries[0]?.parentId).toBe("u2");

      for (let i = 0; i < 100 && !events.some((e) => e.type === "withheld"); i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const told = events.find((e) => e.type === "withheld");
      expect(told?.seqs).toEqual([2]);
      expect(told?.headSeq).toBe(3);
      unsubscribe();
    });
  });
}
