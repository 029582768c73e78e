import { afterAll, describe, expect, it } from "vitest";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import type { CandidateQuery } from "../engine.js";
import type { PostgresEngine } from "./postgres-engine.js";
import { candidatesQuery, likePattern } from "./search.js";

describe("likePattern", () => {
  it("holds the needle anywhere, its % _ and \\ taken literally", () => {
    expect(likePattern("ab")).toBe("%ab%");
    expect(likePattern("50%_off\\")).toBe("%50\\%\\_off\\\\%");
  });
});

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

function nodesOf(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodesOf)];
}

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL search index tests (skipped: ${pgSkip})`, () => {});
} else {
  let engine: PostgresEngine | undefined;
  afterAll(() => engine?.close());

  describe("the trigram index of message entries (migration 5)", () => {
    it("a search for a rare word can be answered from the index, not by reading every message", async () => {
      const opened = await openPostgres();
      engine = opened.engine;
      // One connection: a SET below holds for the EXPLAIN after it.
      const q = opened.admin;
      // 500 sessions of 40 messages, random words; one message holds "zebrafish".
      await q`
        INSERT INTO sessiond_sessions (workspace, session_id, created_at_ms, parent_session_id,
          head_seq, leaf_id, message_count, updated_at_ms)
        SELECT 'w', 's-' || i, 1000 + i, '', 41, 'r', 40, 0 FROM generate_series(1, 500) AS i`;
      await q`
        INSERT INTO sessiond_entries (workspace, session_id, seq, id, kind, payload)
        SELECT 'w', session_id, 1, 'r', 'sessionInfo', '{"id":"r","seq":"1"}'
        FROM sessiond_sessions`;
      await q`
        INSERT INTO sessiond_entries (workspace, session_id, seq, id, kind, payload)
        SELECT 'w', 's-' || i, j, 'e' || j, 'message',
          '{"message":{"content":[{"text":"' || md5(i::text || ' ' || j::text) || ' ' ||
          CASE WHEN i = 250 AND j = 20 THEN 'zebrafish' ELSE md5(j::text) END || '"}]}}'
        FROM generate_series(1, 500) AS i, generate_series(2, 41) AS j`;
      await q`ANALYZE`;
      const query: CandidateQuery = {
        needles: ["zebrafish"],
        parentSessionId: "",
        order: "desc",
        limit: 257,
      };
      // On a table this small a sequential scan is cheaper, and the planner
      // rightly takes it; what this checks is that the query CAN be answered
      // from the index (its predicate matches the index's partial WHERE).
      await q`SET enable_seqscan = off`;
      const [row] = await q<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>`
        EXPLAIN (FORMAT JSON) ${candidatesQuery(q, "w", query)}`;
      await q`RESET enable_seqscan`;
      const plan = row?.["QUERY PLAN"][0].Plan as PlanNode;
      const indexes = nodesOf(plan).map((n) => n["Index Name"]);
      expect(indexes, JSON.stringify(plan, null, 1)).toContain("sessiond_entries_text");
      const found = await (engine as PostgresEngine).searchCandidates("w", query);
      expect(found.map((c) => [c.root.sessionId, c.seq])).toEqual([["s-250", 20]]);
    });

    it("holds clear messages only: sealed payloads add nothing to it (migration 16)", async () => {
      const opened = await openPostgres();
      engine = opened.engine;
      const q = opened.admin;
      const size = async () => {
        // VACUUM moves GIN's pending list into the index proper.
        await q`VACUUM sessiond_entries`;
        const [r] = await q<{ bytes: string }[]>`
          SELECT pg_relation_size('sessiond_entries_text') AS bytes`;
        return Number(r?.bytes);
      };
      // Payloads shaped as the engines store them: the kind's content sealed
      // (base64 of random bytes, as ciphertext is), or the same bytes in clear.
      const rows = (form: "sealed" | "clear") => q`
        INSERT INTO sessiond_entries (workspace, session_id, seq, id, kind, payload)
        SELECT 'ix', ${form}, j, 'e' || j, 'message',
          '{"id":"e' || j || '","seq":"' || j || '","message":' ||
          CASE WHEN ${form} = 'sealed'
            THEN '{"@sealed":"' || encode(pg_temp.ciphertext(j), 'base64') || '"}}'
            ELSE '{"content":[{"text":"' || encode(pg_temp.ciphertext(j), 'hex') || '"}]}}'
          END
        FROM generate_series(1, 300) AS j`;
      // ~1 KB of random bytes per row (60 md5s).
      await q`
        CREATE OR REPLACE FUNCTION pg_temp.ciphertext(j int) RETURNS bytea
        LANGUAGE sql AS $$
          SELECT string_agg(decode(md5(random()::text || j || k), 'hex'), '')
          FROM generate_series(1, 60) AS k
        $$`;
      await q`
        INSERT INTO sessiond_sessions (workspace, session_id, created_at_ms, parent_session_id,
          head_seq, leaf_id, message_count, updated_at_ms)
        VALUES ('ix', 'sealed', 1, '', 300, 'e300', 300, 0), ('ix', 'clear', 2, '', 300, 'e300', 300, 0)`;
      const before = await size();
      await rows("sealed");
      const afterSealed = await size();
      await rows("clear");
      const afterClear = await size();
      // The measure sees index growth (the clear rows), and the sealed rows made none.
      expect(afterClear).toBeGreaterThan(afterSealed);
      expect(afterSealed).toBe(before);
    });
  });
}
