import { afterAll, describe, expect, it } from "vitest";
import { appendOf, rootEntry, user } from "../../../test/support/fixtures.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import type { PostgresEngine } from "./postgres-engine.js";

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL listing record tests (skipped: ${pgSkip})`, () => {});
} else {
  let engine: PostgresEngine | undefined;
  afterAll(() => engine?.close());

  describe("listing records of unchanged rows (row-records.ts)", () => {
    it("a page read again gives the same records; a changed session a new one, current", async () => {
      engine = (await openPostgres()).engine;
      const e = engine;
      const ids = ["a", "b", "c"];
      for (const id of ids) await e.create({ workspace: "w", sessionId: id }, [rootEntry(id)]);
      const query = { parentSessionId: "", order: "desc", limit: 10 } as const;
      const page = async () => {
        const roots = await e.pageRoots("w", query);
        const records = await e.list(
          "w",
          roots.map((r) => r.sessionId),
        );
        return { roots, records };
      };
      const first = await page();
      const second = await page();
      expect(second.roots).toHaveLength(3);
      for (const [i, r] of second.records.entries()) expect(r).toBe(first.records[i]);
      for (const [i, r] of second.roots.entries()) expect(r).toBe(first.roots[i]);

      await e.append({ workspace: "w", sessionId: "b" }, appendOf([user("m1")]));
      const third = await page();
      const b = third.records.findIndex((r) => r.sessionId === "b");
      expect(third.records[b]).not.toBe(first.records[b]);
      expect(third.records[b]?.headSeq).toBe(2);
      for (const [i, r] of third.records.entries()) {
        if (i !== b) expect(r).toBe(first.records[i]);
      }

      // Deleted and created again with the same id: a new record.
      await e.delete({ workspace: "w", sessionId: "c" });
      await e.create({ workspace: "w", sessionId: "c" }, [rootEntry("c", { title: "again" })]);
      const fourth = await page();
      const c = fourth.records.find((r) => r.sessionId === "c");
      expect(c?.title ?? (c?.root?.kind.value as { title?: string })?.title).toBe("again");
    });
  });
}
