/**
 * The PostgreSQL engine's metrics on two replicas of one database: the
 * writer counts what it committed and shows its pool; the watching replica
 * measures the lag of the NOTIFY that woke it; both are ready.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, pgSkipReason, sharedPostgres } from "../harness/postgres.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";
import { getH1, parseScrape, type Series, sampleOf } from "../support/prometheus.js";
import { user } from "./support/entries.js";
import { client, EXTERNAL, uniqueWorkspace } from "./support/server.js";
import { collect } from "./support/stream.js";

const skip = EXTERNAL
  ? "SESSIOND_URL is set: this test starts its own replicas"
  : process.env.CI === "true"
    ? undefined
    : pgSkipReason();
if (skip !== undefined) console.warn(`\n*** PostgreSQL metrics test SKIPPED: ${skip} ***\n`);

async function scrape(s: SessiondProcess): Promise<Series[]> {
  return parseScrape((await getH1(s.url, "/metrics")).body);
}

describe.skipIf(skip !== undefined)("metrics of two replicas on PostgreSQL", () => {
  const replicas: SessiondProcess[] = [];
  let dropDb: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const pg = await sharedPostgres();
    const db = await createDatabase(pg.url, "sessiond_metrics");
    dropDb = db.drop;
    for (let i = 0; i < 2; i++) {
      // No heartbeat re-read within the test: only the NOTIFY wakes the watcher.
      replicas.push(
        await startSessiond({ args: ["--storage", db.url, "--heartbeat-ms", "60000"] }),
      );
    }
  }, 120_000);
  afterAll(async () => {
    for (const s of replicas) {
      await s.stop();
      await removeDataDir(s.dataDir);
    }
    await dropDb?.();
  });

  it("count the writer's entries and group commits, show its pool, and time the watcher's NOTIFY lag", async () => {
    const [watching, writing] = replicas as [SessiondProcess, SessiondProcess];
    const w = client(writing.url, "grpc");
    const ws = uniqueWorkspace("pg-metrics");
    const id = (await w.store.createSession({ workspace: ws })).session?.id ?? "";
    const ac = new AbortController();
    const watch = collect(
      client(watching.url, "grpc").session.watchEntries(
        { workspace: ws, session: id },
        { signal: ac.signal, timeoutMs: 0 },
      ),
    );
    await watch.waitFor((items) => items.length > 0, 10_000, "the replay");
    const N = 5;
    for (let i = 0; i < N; i++) {
      await w.session.append({ workspace: ws, session: id, entries: [user(`entry ${i}`)] });
    }
    const entries = () => watch.items.filter((m) => m.event.case === "entry").length;
    await watch.waitFor(() => entries() >= N + 1, 15_000, "the appends on the watcher");

    const written = await scrape(writing);
    expect(sampleOf(written, "sessiond_appended_entries_total")).toBe(N);
    expect(sampleOf(written, "sessiond_group_commit_appends_sum")).toBe(N);
    expect(sampleOf(written, "sessiond_pg_pool_connections", { state: "size" })).toBe(10);
    expect(
      written.some((s) => s.name === "sessiond_pg_pool_connections" && s.labels.state === "in_use"),
    ).toBe(true);
    // The writer NOTIFYs only once its peer check (every second) has seen the
    // watcher's LISTEN, which began with the watch: the appends above may all
    // have gone before that (the watcher's head poll brought them). So append,
    // with the watch open, until a NOTIFY has woken the watcher and been timed.
    const lagged = async () =>
      sampleOf(await scrape(watching), "sessiond_pg_notify_lag_seconds_count") >= 1;
    const deadline = Date.now() + 15_000;
    for (let i = 0; !(await lagged()); i++) {
      if (Date.now() > deadline) {
        throw new Error("no NOTIFY lag observation on the watching replica within 15 s");
      }
      await w.session.append({ workspace: ws, session: id, entries: [user(`late ${i}`)] });
      await new Promise((r) => setTimeout(r, 200));
    }
    ac.abort();
    for (const s of replicas) expect((await getH1(s.url, "/readyz")).status).toBe(200);
  }, 60_000);
});
