/**
 * /metrics after a known workload: the counters equal what was done, the
 * histograms have observations, the gauges show the open watch streams,
 * and the label sets stay the same however many sessions are used (no
 * session id or workspace ever becomes a label).
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDataDir } from "../harness/server.js";
import { getH1, parseScrape, type Series, sampleOf, seriesKeys } from "../support/prometheus.js";
import { user } from "./support/entries.js";
import { expectCode } from "./support/errors.js";
import {
  client,
  EXTERNAL,
  type SessiondProcess,
  skipExternal,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";
import { collect } from "./support/stream.js";

if (EXTERNAL) skipExternal("metrics of a known workload (needs a server of its own)");

const APPEND = { service: "sessiond.v1.SessionService", method: "Append" };

async function scrape(server: SessiondProcess): Promise<Series[]> {
  const res = await getH1(server.url, "/metrics");
  expect(res.status).toBe(200);
  return parseScrape(res.body);
}

describe.skipIf(EXTERNAL)("a known workload", () => {
  let server: SessiondProcess;
  beforeAll(async () => {
    // JSONL on every test run: the engine metrics (fdatasync, lock, group commit) are its own.
    server = await startSessiond({ storage: "jsonl" });
  });
  afterAll(async () => {
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  const N = 12; // appends
  const K = 3; // failed appends
  const ac = new AbortController();
  afterAll(() => ac.abort());
  let after: Series[];

  beforeAll(async () => {
    const c = client(server.url, "grpc", { retry: false });
    const web = client(server.url, "connect", { retry: false });
    const ws = uniqueWorkspace("metrics");
    const a = (await c.store.createSession({ workspace: ws })).session?.id ?? "";
    const b = (await c.store.createSession({ workspace: ws })).session?.id ?? "";
    for (let i = 0; i < N; i++) {
      // Both servers count: native gRPC (grpc-js) and Connect (connect-node).
      await (i % 2 === 0 ? c : web).session.append({
        workspace: ws,
        session: a,
        entries: [user(`entry ${i}`)],
      });
    }
    for (let i = 0; i < K; i++) {
      await expectCode(
        c.session.append({ workspace: ws, session: `missing-${i}`, entries: [user("x")] }),
        Code.NotFound,
      );
    }
    // M = 3 WatchEntries streams (two on one session) and one WatchSessions stream.
    const watches = [a, a, b].map((session) =>
      collect(c.session.watchEntries({ workspace: ws, session }, { signal: ac.signal })),
    );
    const feed = collect(c.store.watchSessions({ workspace: ws }, { signal: ac.signal }));
    for (const w of watches) await w.waitFor((items) => items.length > 0, 10_000, "the replay");
    await feed.waitFor((items) => items.length > 0, 10_000, "the first WatchSessions event");
    after = await scrape(server);
  });

  it("counts each Append by its code: N ok, K NOT_FOUND", () => {
    expect(sampleOf(after, "sessiond_requests_total", { ...APPEND, code: "ok" })).toBe(N);
    expect(sampleOf(after, "sessiond_requests_total", { ...APPEND, code: "NotFound" })).toBe(K);
    expect(
      sampleOf(after, "sessiond_requests_total", {
        service: "sessiond.v1.StoreService",
        method: "CreateSession",
        code: "ok",
      }),
    ).toBe(2);
  });

  it("observes every Append's duration", () => {
    expect(sampleOf(after, "sessiond_request_duration_seconds_count", APPEND)).toBe(N + K);
    expect(sampleOf(after, "sessiond_request_duration_seconds_sum", APPEND)).toBeGreaterThan(0);
  });

  it("counts the entries written and their bytes", () => {
    expect(sampleOf(after, "sessiond_appended_entries_total")).toBe(N);
    expect(sampleOf(after, "sessiond_appended_bytes_total")).toBeGreaterThan(N * 10);
  });

  it("has group commits that add up to the N appends, each after a lock wait", () => {
    const batches = sampleOf(after, "sessiond_group_commit_appends_count");
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(sampleOf(after, "sessiond_group_commit_appends_sum")).toBe(N);
    expect(sampleOf(after, "sessiond_lock_wait_seconds_count")).toBe(batches);
  });

  it("times an fdatasync for every batch at least", () => {
    const batches = sampleOf(after, "sessiond_group_commit_appends_count");
    expect(sampleOf(after, "sessiond_fdatasync_duration_seconds_count")).toBeGreaterThanOrEqual(
      batches,
    );
    expect(
      sampleOf(after, "sessiond_fdatasync_duration_seconds_bucket", { le: "+Inf" }),
    ).toBeGreaterThanOrEqual(batches);
  });

  it("shows the open watch streams, the top watchers per session and WatchSessions subscribers", () => {
    expect(sampleOf(after, "sessiond_watch_streams")).toBe(4);
    expect(sampleOf(after, "sessiond_watch_sessions_subscribers")).toBe(1);
    expect(sampleOf(after, "sessiond_session_watchers_top", { rank: "1" })).toBe(2);
    expect(sampleOf(after, "sessiond_session_watchers_top", { rank: "2" })).toBe(1);
    expect(sampleOf(after, "sessiond_session_watchers_top", { rank: "3" })).toBe(0);
  });

  it("counts session cache lookups and shows the cache size", () => {
    const hits = sampleOf(after, "sessiond_session_cache_lookups_total", { result: "hit" });
    const misses = sampleOf(after, "sessiond_session_cache_lookups_total", { result: "miss" });
    expect(hits + misses).toBeGreaterThanOrEqual(N);
    expect(sampleOf(after, "sessiond_session_cache_sessions")).toBeGreaterThanOrEqual(2);
  });

  it("has the process metrics", () => {
    expect(sampleOf(after, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(after.some((s) => s.name === "nodejs_eventloop_lag_seconds")).toBe(true);
  });
});

describe.skipIf(EXTERNAL)("label sets after 10,000 distinct sessions", () => {
  let server: SessiondProcess;
  beforeAll(async () => {
    server = await startSessiond({ args: ["--storage", "memory"] });
  });
  afterAll(async () => {
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  /** Creates sessions `from`..`to`-1 in their own workspaces, each with one append and one read. */
  async function use(from: number, to: number, prefix: string): Promise<string[]> {
    const c = client(server.url, "grpc");
    const ids: string[] = [];
    let next = from;
    const worker = async () => {
      while (next < to) {
        const i = next++;
        const ws = `${prefix}-${i}`;
        const id = (await c.store.createSession({ workspace: ws })).session?.id ?? "";
        ids.push(id);
        await c.session.append({ workspace: ws, session: id, entries: [user(`hello ${i}`)] });
        await c.session.getState({ workspace: ws, session: id });
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    return ids;
  }

  // sessiond's own series; the process metrics' labels (GC kinds, heap
  // spaces) are the runtime's, bounded but appearing as the process ages.
  const own = (scrape: Series[]) =>
    seriesKeys(scrape.filter((s) => s.name.startsWith("sessiond_")));

  it("are the same series after 10 sessions and after 10,000, none naming a session or workspace", async () => {
    const prefix = uniqueWorkspace("card");
    const first = await use(0, 10, prefix);
    const small = own(await scrape(server));
    const rest = await use(10, 10_000, prefix);
    const scraped = await getH1(server.url, "/metrics");
    const big = own(parseScrape(scraped.body));
    expect(small.size).toBeGreaterThan(20);
    expect([...big].filter((k) => !small.has(k))).toEqual([]);
    for (const id of [...first, ...rest.slice(0, 100)]) expect(scraped.body).not.toContain(id);
    expect(scraped.body).not.toContain(prefix);
    expect(sampleOf(parseScrape(scraped.body), "sessiond_requests_total", APPEND)).toBe(10_000);
  }, 300_000);
});
