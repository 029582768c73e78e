/**
 * Scenario e (issue 41): encryption at rest on vs off on the JSONL engine,
 * in the same run, the same process and the same data dir (a sealed and a
 * clear workspace on one engine: bench/clients/encryption.ts); then the
 * same four measures on the PostgreSQL engine (rows e/pg/*: a throwaway
 * cluster, one database for both workspaces; durable appends are commits).
 *
 * Every measure follows a warm-up of both modes alike (as rows 1 and g1
 * have: a server's steady state, not a fresh process's first thousands of
 * seals); the first appends' p50 is in e/append's details.
 *
 * e/append: p50 of a sequential durable append (~900-byte message), sealed
 *   vs clear. Target <= 1.10 ×.
 * e/64: appends/s with 64 in flight (64 sessions, one appender each).
 *   Target >= 1 / 1.10 × the clear figure.
 * e/cold: first open + state of a session by a fresh engine (page cache
 *   warm). Target <= 1.10 ×. JSONL's details carry its floor: the clear
 *   read plus reading and CRC-ing the sealed log's extra bytes, reading
 *   the checkpoint and opening it (floorRatio).
 * e/search: a rare word over a workspace, decrypting as it scans vs the
 *   clear scan (which skips files by their bytes). Target <= 1.5 ×.
 */
import { join } from "node:path";
import { createDatabase } from "../../test/harness/postgres.js";
import type { ColdFloor } from "../clients/encryption.js";
import type { BenchContext, Scenario } from "../lib/context.js";
import { withPostgres } from "../lib/pg-common.js";
import { runClient } from "../lib/procs.js";
import { atLeast, atMost, type Row } from "../lib/row.js";
import { median, percentile } from "../lib/stats.js";

interface Figures {
  appendMs: number[];
  appendFirstMs: number[];
  inflightOps: number[];
  coldMs: number[];
  searchMs: number[];
}

/** What the encryption client answers. */
interface Measured {
  on: Figures;
  off: Figures;
  aead: string;
  coldFloor?: ColdFloor;
}

/**
 * e/cold's floor as the row's details: the clear read plus what any sealed
 * read of this format must add (floorRatio: the least ratio a sealed cold
 * read can have on this box in this run).
 */
function floorOf(off: Figures, f: ColdFloor | undefined): Record<string, unknown> {
  if (f === undefined) return {};
  const extra = median(f.extraMs);
  return {
    floorRatio: (median(off.coldMs) + extra) / median(off.coldMs),
    floorExtraMs: extra,
    floorLogExtraMs: median(f.logExtraMs),
    floorCheckpointReadMs: median(f.checkpointReadMs),
    floorOpenMs: median(f.openMs),
    checkpointBytes: f.checkpointBytes,
  };
}

/** The four rows of one engine's figures, ids under `prefix`. */
function rowsOf(prefix: string, engine: string, { on, off, aead, coldFloor }: Measured): Row[] {
  const scenario = (what: string) => `${what}, sealed vs clear workspace (${engine})`;
  return [
    atMost(
      {
        id: `${prefix}/append`,
        scenario: scenario("sequential durable append p50"),
        unit: "p50 ms",
        sessiond: percentile(on.appendMs, 50),
        baseline: percentile(off.appendMs, 50),
        baselineName: "the same append, clear",
        details: {
          aead,
          p99On: percentile(on.appendMs, 99),
          p99Off: percentile(off.appendMs, 99),
          // A fresh process's first appends, before the warm-up (not the target).
          firstP50On: percentile(on.appendFirstMs, 50),
          firstP50Off: percentile(off.appendFirstMs, 50),
        },
      },
      1.1,
    ),
    atLeast(
      {
        id: `${prefix}/64`,
        scenario: scenario("appends with 64 in flight"),
        unit: "ops/s",
        sessiond: median(on.inflightOps),
        baseline: median(off.inflightOps),
        baselineName: "the same appends, clear",
        details: { aead, on: on.inflightOps, off: off.inflightOps },
      },
      1 / 1.1,
    ),
    atMost(
      {
        id: `${prefix}/cold`,
        scenario: scenario("first open + state by a fresh engine"),
        unit: "ms",
        sessiond: median(on.coldMs),
        baseline: median(off.coldMs),
        baselineName: "the same session, clear",
        details: { aead, on: on.coldMs, off: off.coldMs, ...floorOf(off, coldFloor) },
      },
      1.1,
    ),
    atMost(
      {
        id: `${prefix}/search`,
        scenario: scenario("text search for a rare word over a workspace"),
        unit: "ms",
        sessiond: median(on.searchMs),
        baseline: median(off.searchMs),
        baselineName: "the same search, clear",
        details: { on: on.searchMs, off: off.searchMs },
      },
      1.5,
    ),
  ];
}

export const encryption: Scenario = {
  id: "e",
  title: "encryption at rest on vs off (JSONL embedded, and PostgreSQL)",
  async run(ctx: BenchContext): Promise<Row[]> {
    const q = ctx.quick;
    const sizes = {
      appends: q ? 30 : 300,
      inflightSessions: 64,
      inflightPerSession: q ? 3 : 20,
      coldEntries: q ? 500 : 10_000,
      searchSessions: q ? 20 : 200,
      searchEntries: q ? 20 : 100,
      reps: q ? 1 : 4,
      warmup: q ? 200 : 3000,
    };
    const jsonl = await runClient<Measured>("clients/encryption.ts", {
      dataDir: join(ctx.tmpDir, "se-data"),
      keyring: join(ctx.tmpDir, "se-keyring.json"),
      ...sizes,
    });
    const pg = await withPostgres(ctx, "e/pg", async (serverUrl) => {
      const db = await createDatabase(serverUrl, "sessiond_bench_seal");
      try {
        const r = await runClient<Measured>("clients/encryption.ts", {
          dataDir: join(ctx.tmpDir, "se-pg-unused"),
          keyring: join(ctx.tmpDir, "se-pg-keyring.json"),
          url: db.url,
          ...sizes,
        });
        return rowsOf("e/pg", "PostgreSQL", r);
      } finally {
        await db.drop();
      }
    });
    return [...rowsOf("e", "JSONL", jsonl), ...pg];
  },
};
