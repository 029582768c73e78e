/**
 * Scenario 11: finding sessions on the JSONL engine, among 10,000 top-level
 * sessions of 60–120 entries with ~1,000-character texts (about 1 GB of
 * JSONL), each tagged user=u<i mod 50>; one entry in the middle session
 * holds the rare word "zebrafish". Written directly as files.
 *
 * 11/filter-warm: ListSessions with a tag filter (user=u7: 200 sessions
 *   match), first page of 100, p50 of repeated calls after the first one;
 *   <= 10 ms.
 * 11/filter-cold: the first such call after a restart (plus any start-up
 *   excess over an empty data dir, as in 6/cold) vs the first-line floor
 *   (readdir + the first line of each file, fresh process). Target <= 1.5 ×.
 *   A tag filter needs each session's folded tags, which today means a read
 *   of every file (no persisted index): this row says what that costs.
 * 11/search: SearchEntries for the rare word (it scans every session), p50
 *   of warm calls, vs the indexOf floor (read every byte of every file and
 *   Buffer.indexOf the word, fresh process, same page cache). Target <= 1.5 ×.
 *
 * 11/pg-search, 11/pg-filter: the same sessions with 10–30 entries each
 *   (~200 MB; the ids, tags and the rare word's session are the same) loaded
 *   into a throwaway PostgreSQL cluster through the engine; SearchEntries and
 *   the filtered page against `sessiond serve --storage postgres://…`, p50 of
 *   warm calls; the search vs the bare `SELECT … ILIKE` a user would write
 *   (one connection, the trigram index) plus the connect-node echo's p50
 *   with the same client (the RPC, as scenario 10's baselines include it),
 *   <= 3 ×; the filtered page <= 10 ms.
 *
 * --quick: 500 sessions of 10–30 entries, 1 repetition.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createDatabase } from "../../test/harness/postgres.js";
import type { BenchContext, Scenario } from "../lib/context.js";
import { CALIBRATION_PAIRS, type FloorResult, RestartMeter } from "../lib/floors.js";
import { findableConversations, sessionsDirOf, writeSessiondFiles } from "../lib/generate.js";
import { loadSessions, startPgSessiond, withPostgres } from "../lib/pg-common.js";
import { runClient, startEcho } from "../lib/procs.js";
import { absoluteAtMost, atMost, type Row } from "../lib/row.js";
import { median, summarize } from "../lib/stats.js";

interface Call {
  firstMs: number;
  warm: number[];
  count: number;
  firstId?: string;
}

const PAGE = 100;
const USERS = 50;
const RARE = "zebrafish";

export const findSessions: Scenario = {
  id: "11",
  title: "finding sessions: a tag filter and a text search among 10,000 sessions",
  async run(ctx: BenchContext): Promise<Row[]> {
    const count = ctx.quick ? 500 : 10_000;
    // Five restarts, as in row 6/cold: the first finds no index (the bench wrote the files)
    // and rebuilds it, so with three the median was the slower of only two.
    const reps = ctx.quick ? 1 : 5;
    const t0 = performance.now();
    const shape = {
      count,
      minEntries: ctx.quick ? 10 : 60,
      maxEntries: ctx.quick ? 30 : 120,
      textBytes: ctx.quick ? 400 : 1_000,
      startMs: Date.UTC(2024, 0, 1),
    };
    const { cs, marked } = findableConversations({ ...shape, users: USERS, rareWord: RARE });
    const dataDir = join(ctx.tmpDir, "s11-sessiond");
    const bytes = writeSessiondFiles(dataDir, cs);
    const emptyDir = join(ctx.tmpDir, "s11-empty");
    mkdirSync(emptyDir, { recursive: true });
    ctx.log(
      `${count} sessions: ${(bytes / 1e6).toFixed(0)} MB, written in ${(performance.now() - t0).toFixed(0)} ms`,
    );
    const matching = cs.filter((c) => c.tags?.user === "u7");
    const newestMatching = matching[matching.length - 1]?.sessionId;

    const coldMs: number[] = [];
    let warmFilter: number[] = [];
    let warmSearch: number[] = [];
    const firstLine: FloorResult[] = [];
    const indexOf: FloorResult[] = [];
    const restarts = new RestartMeter(dataDir, emptyDir);
    for (let r = 0; r < reps; r++) {
      ctx.log(`repetition ${r + 1}/${reps}: restart + filtered page, search, floors`);
      await restarts.restart(async (server) => {
        const filtered = await runClient<Call>("clients/data-first-call.ts", {
          url: server.url,
          call: "list",
          pageSize: PAGE,
          tags: { user: "u7" },
          warm: r === reps - 1 ? (ctx.quick ? 30 : 200) : 0,
        });
        const want = Math.min(PAGE, matching.length);
        if (filtered.count !== want || filtered.firstId !== newestMatching) {
          throw new Error(
            `filtered page has ${filtered.count} sessions from ${filtered.firstId}, expected ${want} from ${newestMatching}`,
          );
        }
        coldMs.push(filtered.firstMs);
        if (filtered.warm.length > 0) warmFilter = filtered.warm;
        if (r === reps - 1) {
          const search = await runClient<Call>("clients/data-first-call.ts", {
            url: server.url,
            call: "search",
            query: RARE,
            warm: ctx.quick ? 3 : 5,
          });
          if (search.count !== 1 || search.firstId !== marked.sessionId) {
            throw new Error(`search found ${search.count} hits in ${search.firstId}`);
          }
          warmSearch = search.warm;
        }
      });
      const dir = sessionsDirOf(dataDir);
      const fl = await runClient<FloorResult>("clients/data-floor.ts", { kind: "first-line", dir });
      if (fl.count !== count) throw new Error(`first-line floor read ${fl.count} files`);
      firstLine.push(fl);
      const io = await runClient<FloorResult>("clients/data-floor.ts", {
        kind: "indexOf",
        dir,
        word: RARE,
      });
      if (io.count !== 1) throw new Error(`indexOf floor found ${RARE} in ${io.count} files`);
      indexOf.push(io);
    }
    await restarts.calibrate(ctx.quick ? 0 : CALIBRATION_PAIRS);
    const w = summarize(warmFilter);
    const s = summarize(warmSearch);
    const pg = await withPostgres(ctx, "11/pg", (url) =>
      postgresRows(ctx, url, shape, marked.sessionId, newestMatching, matching.length),
    );
    return [
      ...pg,
      absoluteAtMost(
        {
          id: "11/filter-warm",
          scenario: `ListSessions, tag filter, first page among ${count}, warm`,
          unit: "p50 ms",
          sessiond: w.p50,
          details: { p99: w.p99, calls: w.n, matching: matching.length },
        },
        10,
      ),
      atMost(
        {
          id: "11/filter-cold",
          scenario: "first filtered ListSessions after restart",
          unit: "ms",
          sessiond: median(coldMs) + restarts.excessMs,
          baseline: median(firstLine.map((f) => f.ms)),
          baselineName: "first-line floor (fresh process)",
          details: {
            firstCallMs: coldMs,
            ...restarts.details(),
            floorMs: firstLine.map((f) => f.ms),
          },
        },
        1.5,
      ),
      atMost(
        {
          id: "11/search",
          scenario: `SearchEntries, a rare word, ${(bytes / 1e9).toFixed(2)} GB of JSONL`,
          unit: "p50 ms",
          sessiond: s.p50,
          baseline: median(indexOf.map((f) => f.ms)),
          baselineName: "read every byte + indexOf (fresh process)",
          details: { calls: warmSearch, floorMs: indexOf.map((f) => f.ms), bytes },
        },
        1.5,
      ),
    ];
  },
};

/**
 * The PostgreSQL rows: the same sessions loaded through the engine into a
 * throwaway cluster, then the same two calls against `sessiond serve
 * --storage postgres://…`, and the bare SQL a user would write for each on
 * the same database (postgres.js, one connection).
 */
async function postgresRows(
  ctx: BenchContext,
  serverUrl: string,
  shape: Omit<Parameters<typeof findableConversations>[0], "users" | "rareWord">,
  markedId: string,
  newestMatching: string | undefined,
  matching: number,
): Promise<Row[]> {
  const db = await createDatabase(serverUrl, "sessiond_bench_find");
  // The same sessions with fewer entries each (the ids, tags and the marked
  // one are the same): loading 1 GB through the engine takes ~6 min here.
  const pgShape = { ...shape, minEntries: 10, maxEntries: 30 };
  try {
    ctx.log(`loading ${pgShape.count} sessions into PostgreSQL through the engine`);
    const load = await loadSessions(ctx, db.url, {
      ...pgShape,
      concurrency: 16,
      findable: { users: USERS, rareWord: RARE },
    });
    const reps = ctx.quick ? 1 : 3;
    const calls = ctx.quick ? 10 : 50;
    // The filtered page as many times as the JSONL row's (200): a client process's first few
    // dozen calls still run cold client code, and the row is about a warm server.
    const listCalls = ctx.quick ? 10 : 200;
    const sdSearch: number[] = [];
    const sdList: number[] = [];
    const bare: number[] = [];
    const rpc: number[] = [];
    const echo = await startEcho();
    try {
      for (let r = 0; r < reps; r++) {
        const sd = await startPgSessiond(db.url);
        try {
          const search = await runClient<Call>("clients/data-first-call.ts", {
            url: sd.url,
            call: "search",
            query: RARE,
            warm: calls,
          });
          if (search.count !== 1 || search.firstId !== markedId) {
            throw new Error(`PostgreSQL search found ${search.count} hits in ${search.firstId}`);
          }
          sdSearch.push(median(search.warm));
          const list = await runClient<Call>("clients/data-first-call.ts", {
            url: sd.url,
            call: "list",
            pageSize: PAGE,
            tags: { user: "u7" },
            warm: listCalls,
          });
          if (list.count !== Math.min(PAGE, matching) || list.firstId !== newestMatching) {
            throw new Error(`PostgreSQL filtered page: ${list.count} from ${list.firstId}`);
          }
          sdList.push(median(list.warm));
        } finally {
          await sd.stop();
        }
        const b = await runClient<{ p50: number; count: number }>("clients/pg-bare.ts", {
          url: db.url,
          mode: "search",
          word: RARE,
          warmup: 3,
          n: calls,
          expectFirst: markedId,
        });
        bare.push(b.p50);
        const e = await runClient<{ p50: number }>("clients/rpc-unary.ts", {
          via: "connect",
          target: "echo",
          url: echo.url,
          mode: "latency",
          warmup: 20,
          n: calls * 4,
        });
        rpc.push(e.p50);
      }
    } finally {
      await echo.stop();
    }
    return [
      atMost(
        {
          id: "11/pg-search",
          scenario: `PostgreSQL: SearchEntries, a rare word, ${load.sessions} sessions, ${load.entries} entries`,
          unit: "p50 ms",
          sessiond: median(sdSearch),
          baseline: median(bare) + median(rpc),
          baselineName:
            "bare SELECT … ILIKE p50 (postgres.js, the trigram index) + echo p50 (same client)",
          details: { sessiondMs: sdSearch, bareMs: bare, echoMs: rpc, loadMs: load.ms },
        },
        3,
      ),
      absoluteAtMost(
        {
          id: "11/pg-filter",
          scenario: `PostgreSQL: ListSessions, tag filter, first page among ${shape.count}, warm`,
          unit: "p50 ms",
          sessiond: median(sdList),
          details: { sessiondMs: sdList },
        },
        10,
      ),
    ];
  } finally {
    await db.drop();
  }
}
