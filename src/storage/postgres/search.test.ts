import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDatabase,
  type PgServer,
  pgSkipReason,
  startPostgres,
} from "../../../test/harness/postgres.js";
import type { CandidateQuery } from "../engine.js";
import { PostgresEngine } from "./postgres-engine.js";
import { candidatesQuery, likePattern } from "./search.js";

const skip = process.env.CI === "true" ? undefined : pgSkipReason();

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

if (skip !== undefined) {
  console.warn(`\n*** PostgreSQL search index tests SKIPPED: ${skip} ***\n`);
  it.skip(`PostgreSQL search index tests (skipped: ${skip})`, () => {});
} else {
  let server: PgServer | undefined;
  let db: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let sql: postgres.Sql | undefined;
  let engine: PostgresEngine | undefined;

  beforeAll(async () => {
    server = await startPostgres();
    if (server === undefined) throw new Error("PostgreSQL is not available");
    db = await createDatabase(server.url);
    engine = await PostgresEngine.open({ url: db.url });
    sql = postgres(db.url, { max: 1, onnotice: () => {} });
  });

  afterAll(async () => {
    await sql?.end({ timeout: 1 });
    await engine?.close();
    await db?.drop();
    await server?.stop();
  });

  describe("the trigram index of message entries (migration 5)", () => {
    it("a search for a rare word can be answered from the index, not by reading every message", async () => {
      const q = sql as postgres.Sql;
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
      // (q has one connection: the SET holds for the EXPLAIN.)
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
  });
}
