import { afterAll, describe, expect, it } from "vitest";
import { appendOf, rootEntry, user } from "../../../test/support/fixtures.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import type { PostgresEngine } from "./postgres-engine.js";
import { RowRecords } from "./row-records.js";
import { jsonOf, type PageRow } from "./rows.js";

function row(id: string, over: Partial<PageRow> = {}): PageRow {
  return {
    session_id: id,
    created_at_ms: "1767225600123",
    parent_session_id: "",
    incarnation: "1",
    payload: jsonOf(rootEntry(id)),
    head_seq: 1,
    leaf_id: `root-${id}`,
    message_count: 0,
    title: null,
    updated_at_ms: "1767225600123",
    folded_tags: null,
    info_payloads: null,
    ...over,
  };
}

describe("RowRecords", () => {
  it("gives the same records for a row read again, new ones when any column differs", () => {
    const made = new RowRecords();
    const first = made.of("w", row("a"));
    expect(made.of("w", row("a")).record).toBe(first.record);
    expect(made.of("w", row("a")).root).toBe(first.root);
    const changed = made.of("w", row("a", { head_seq: 2, leaf_id: "m1" }));
    expect(changed.record).not.toBe(first.record);
    expect(changed.record.headSeq).toBe(2);
    expect(made.of("w", row("a", { title: "t" })).record.title).toBe("t");
    // Another workspace's session of the same id is another session.
    expect(made.of("v", row("a")).record.workspace).toBe("v");
  });

  it("holds a root by its incarnation: a row read without its payload takes it, another incarnation does not", () => {
    const made = new RowRecords();
    const first = made.of("w", row("a"));
    const root = made.rootOf("w", "a", "1");
    expect(root).toBe(first.root);
    expect(made.rootOf("w", "a", "2")).toBeUndefined();
    expect(made.rootOf("v", "a", "1")).toBeUndefined();
    // Read again without the payload: the same records while nothing else changed.
    expect(made.of("w", row("a", { payload: null }), root).record).toBe(first.record);
    // An append: a new record on the same root.
    const appended = made.of("w", row("a", { payload: null, head_seq: 2, leaf_id: "m1" }), root);
    expect(appended.record).not.toBe(first.record);
    expect(appended.record.headSeq).toBe(2);
    expect(appended.root).toBe(first.root);
    // Deleted and created again under the same id: another incarnation, its own root.
    const again = made.of("w", row("a", { incarnation: "2", payload: jsonOf(rootEntry("a")) }));
    expect(again.root).not.toBe(first.root);
    expect(made.rootOf("w", "a", "1")).toBeUndefined();
    expect(made.rootOf("w", "a", "2")).toBe(again.root);
    // A row without its payload and no root given is a bug of the caller, not a corrupt session.
    expect(() => made.of("w", row("b", { payload: null }))).toThrow(/neither read nor given/);
  });

  it("forgets the least recently used rows past 1,024", () => {
    const made = new RowRecords();
    const kept = made.of("w", row("s-0")).record;
    const dropped = made.of("w", row("s-1")).record;
    for (let i = 2; i < 1025; i++) {
      made.of("w", row(`s-${i}`));
      made.of("w", row("s-0")); // used again: the newest
    }
    expect(made.of("w", row("s-0")).record).toBe(kept);
    expect(made.of("w", row("s-1")).record).not.toBe(dropped);
  });
});

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
