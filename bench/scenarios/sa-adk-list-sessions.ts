/**
 * Scenario a: listing the Google ADK sessions of one user through the
 * Python adapter (`sessiond.adk.SessiondSessionService.list_sessions`)
 * among 10,000, vs the bare ListSessions calls that do the same work (the
 * same tag filter, order and page size of 1,000, every page) from the same
 * Python client in the same process, the two alternating. Target: p50 of
 * the adapter <= 1.5 × p50 of the bare calls: what the adapter adds
 * (building ADK `Session` objects) must stay small next to the listing.
 *
 * The sessions are made through the adapter's `create_session` (many at
 * once) on a fresh JSONL data dir; the client is
 * clients/python/bench_adk/list_sessions.py in a venv with the pinned
 * google-adk, built once into .cache/bench (see cachedPythonAdk). When
 * google-adk cannot be installed, the row says SKIPPED and fails: no
 * figure is made up.
 *
 * --quick: 1,000 sessions, 5 calls of each.
 */
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { cachedPythonAdk, pythonAdkEnv } from "../../test/harness/python-adk.js";
import { PYTHON_CLIENT_DIR } from "../../test/harness/python-client.js";
import type { BenchContext, Scenario } from "../lib/context.js";
import { REPO, startSessiond } from "../lib/procs.js";
import { atMost, type Row } from "../lib/row.js";
import { median, summarize } from "../lib/stats.js";

const run = promisify(execFile);

interface Listing {
  sessions: number;
  createMs: number;
  adapterMs: number[];
  bareMs: number[];
}

const ID = "a";
const TITLE = "Google ADK list_sessions (Python adapter) vs bare ListSessions";

export const adkListSessions: Scenario = {
  id: ID,
  title: TITLE,
  async run(ctx: BenchContext): Promise<Row[]> {
    const sessions = ctx.quick ? 1_000 : 10_000;
    const calls = ctx.quick ? 5 : 30;
    let python: string;
    try {
      ctx.log("venv with google-adk (built once into .cache/bench)");
      python = await cachedPythonAdk(join(REPO, ".cache/bench"));
    } catch (err) {
      const reason = String(err instanceof Error ? err.message : err).split("\n")[0];
      ctx.log(`*** SKIPPED scenario ${ID}: google-adk could not be installed: ${reason} ***`);
      return [skipped(sessions, reason ?? "")];
    }
    const dataDir = join(ctx.tmpDir, "sa-sessiond");
    mkdirSync(dataDir, { recursive: true });
    const server = await startSessiond(["--data-dir", dataDir]);
    let listing: Listing;
    try {
      const script = join(PYTHON_CLIENT_DIR, "bench_adk/list_sessions.py");
      const { stdout } = await run(
        python,
        [script, JSON.stringify({ url: server.url, sessions, calls })],
        { env: { ...process.env, ...pythonAdkEnv() }, timeout: 1_200_000, maxBuffer: 1 << 24 },
      );
      listing = JSON.parse(stdout.trim().split("\n").pop() ?? "") as Listing;
    } finally {
      await server.stop();
    }
    const adapter = summarize(listing.adapterMs);
    const bare = summarize(listing.bareMs);
    ctx.log(
      `${sessions} sessions created in ${(listing.createMs / 1000).toFixed(1)} s; list_sessions p50 ${adapter.p50.toFixed(1)} ms, bare ${bare.p50.toFixed(1)} ms`,
    );
    return [
      atMost(
        {
          id: `${ID}/list`,
          scenario: `ADK list_sessions of one user's ${sessions} sessions (Python)`,
          unit: "p50 ms",
          sessiond: adapter.p50,
          baseline: bare.p50,
          baselineName: "bare ListSessions, same filter, every page (same client)",
          details: {
            sessions,
            pages: Math.ceil(sessions / 1_000),
            calls,
            createMs: listing.createMs,
            adapter,
            bare,
            // On a loaded box the p50s swing; these two say more about the adapter's own cost.
            medianOfPairedRatios: median(
              listing.adapterMs.map((a, i) => a / (listing.bareMs[i] ?? a)),
            ),
            ratioOfMinima: adapter.min / bare.min,
            adapterMs: listing.adapterMs,
            bareMs: listing.bareMs,
          },
        },
        1.5,
      ),
    ];
  },
};

/** The row when the client could not be set up: no figures, and not a pass. */
function skipped(sessions: number, reason: string): Row {
  return {
    id: `${ID}/list`,
    scenario: `SKIPPED (google-adk not installable): ADK list_sessions of ${sessions} sessions`,
    unit: "p50 ms",
    sessiond: Number.NaN,
    baseline: Number.NaN,
    baselineName: "not measured",
    ratio: Number.NaN,
    target: "ratio <= 1.5",
    pass: false,
    details: { skipped: reason },
  };
}
