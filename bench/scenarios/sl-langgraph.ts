/**
 * Scenario l: LangGraph checkpointers on one PostgreSQL cluster. A graph
 * whose state grows by a message (~400 characters) each step runs 200
 * steps on SessiondSaver (sessiond/langgraph, through a `sessiond serve
 * --storage postgres://...` process: the gRPC hop included) and on
 * @langchain/langgraph-checkpoint-postgres's PostgresSaver, each on a
 * database of its own on the same cluster, in one client process
 * (clients/langgraph-steps.ts), then 100 getTuple of the latest
 * checkpoint of each, alternating.
 *
 * l/bytes: bytes the run added to the database (pg_total_relation_size of
 *   every table, indexes and TOAST included, after minus before), sessiond
 *   vs PostgresSaver. Target <= 1.0 ×.
 * l/put: p50 of the saver's put, sessiond vs PostgresSaver. Target <= 2 ×.
 * l/get: p50 of getTuple of the latest checkpoint (the whole grown state
 *   read and deserialized), sessiond vs PostgresSaver. Held to the put
 *   row's 2 × (the issue sets no target for it).
 *
 * --quick: 40 steps, 20 reads.
 */
import { createDatabase } from "../../test/harness/postgres.js";
import type { BenchContext, Scenario } from "../lib/context.js";
import { connect, startPgSessiond, withPostgres } from "../lib/pg-common.js";
import { runClient } from "../lib/procs.js";
import { atMost, type Row } from "../lib/row.js";
import { summarize } from "../lib/stats.js";

const ID = "l";

interface Timed {
  put: number[];
  putWrites: number[];
  getTuple: number[];
  reads: number[];
  runMs: number;
}

/** Bytes of every table of the database's public schema (indexes and TOAST included). */
async function databaseBytes(url: string): Promise<number> {
  const sql = connect(url, 1, "bench-l-size");
  try {
    const [row] = await sql<{ bytes: string }[]>`
      SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS bytes
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'r'`;
    return Number(row?.bytes ?? 0);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export const langgraphSavers: Scenario = {
  id: ID,
  title: "LangGraph checkpointers: SessiondSaver vs PostgresSaver, same graph, same PostgreSQL",
  run(ctx: BenchContext): Promise<Row[]> {
    return withPostgres(ctx, ID, async (clusterUrl) => {
      const steps = ctx.quick ? 40 : 200;
      const reads = ctx.quick ? 20 : 100;
      const ours = await createDatabase(clusterUrl);
      const theirs = await createDatabase(clusterUrl);
      const server = await startPgSessiond(ours.url);
      try {
        // Both schemas (and a thread of one step) made before the "before" sizes: the run's bytes only.
        await runClient("clients/langgraph-steps.ts", {
          sessiondUrl: server.url,
          pgUrl: theirs.url,
          steps: 1,
          reads: 0,
          thread: "warm-up",
        });
        const before = {
          ours: await databaseBytes(ours.url),
          theirs: await databaseBytes(theirs.url),
        };
        const t = await runClient<{ sessiond: Timed; postgres: Timed }>(
          "clients/langgraph-steps.ts",
          { sessiondUrl: server.url, pgUrl: theirs.url, steps, reads, thread: "bench" },
        );
        const after = {
          ours: await databaseBytes(ours.url),
          theirs: await databaseBytes(theirs.url),
        };
        const bytes = { ours: after.ours - before.ours, theirs: after.theirs - before.theirs };
        const put = { ours: summarize(t.sessiond.put), theirs: summarize(t.postgres.put) };
        const get = { ours: summarize(t.sessiond.reads), theirs: summarize(t.postgres.reads) };
        ctx.log(
          `${steps} steps: bytes ${bytes.ours} vs ${bytes.theirs}; put p50 ${put.ours.p50.toFixed(2)} vs ${put.theirs.p50.toFixed(2)} ms; getTuple p50 ${get.ours.p50.toFixed(2)} vs ${get.theirs.p50.toFixed(2)} ms`,
        );
        const baselineName =
          "PostgresSaver (@langchain/langgraph-checkpoint-postgres), same cluster";
        return [
          atMost(
            {
              id: `${ID}/bytes`,
              scenario: `LangGraph thread of ${steps} growing steps: bytes stored in PostgreSQL`,
              unit: "bytes",
              sessiond: bytes.ours,
              baseline: bytes.theirs,
              baselineName,
              details: { steps, before, after },
            },
            1.0,
          ),
          atMost(
            {
              id: `${ID}/put`,
              scenario: `LangGraph put, ${steps}-step growing thread`,
              unit: "p50 ms",
              sessiond: put.ours.p50,
              baseline: put.theirs.p50,
              baselineName,
              details: {
                put,
                putWrites: {
                  ours: summarize(t.sessiond.putWrites),
                  theirs: summarize(t.postgres.putWrites),
                },
                runMs: { ours: t.sessiond.runMs, theirs: t.postgres.runMs },
              },
            },
            2,
          ),
          atMost(
            {
              id: `${ID}/get`,
              scenario: `LangGraph getTuple of the latest checkpoint after ${steps} steps`,
              unit: "p50 ms",
              sessiond: get.ours.p50,
              baseline: get.theirs.p50,
              baselineName,
              details: { get, reads },
            },
            2,
          ),
        ];
      } finally {
        await server.stop();
        await ours.drop();
        await theirs.drop();
      }
    });
  },
};
