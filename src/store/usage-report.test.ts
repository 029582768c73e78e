import { mkdtemp, readFile, rm, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { afterEach, describe, expect, it } from "vitest";
import { EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import {
  UsageBucket,
  UsageReportRequestSchema,
  type UsageReportResponse,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { isSessiondError } from "../core/errors.js";
import type { Tags } from "../core/tags.js";
import { parsePriceTable } from "../core/usage-sums.js";
import type { StorageEngine } from "../storage/engine.js";
import { JsonlEngine } from "../storage/jsonl/jsonl-engine.js";
import { decodeIndex } from "../storage/jsonl/listing-index-codec.js";
import { LISTING_INDEX_NAME } from "../storage/jsonl/listing-index-file.js";
import { MemoryEngine } from "../storage/memory.js";
import { SessionStore } from "./session-store.js";
import { checkUsageQuery, usageReport } from "./usage-report.js";

/**
 * UsageReport (issue 42) on every engine: each report equals the figure
 * computed here independently from the messages the test appended (every
 * billed message, abandoned branches and subagents included), for windows
 * that cut through sessions and hours, hour and day buckets, by model, by
 * tag values (a session without the key in the "" group) and under a tag
 * filter; and again after a restart (JSONL: from the listing index, and
 * with the index deleted: rebuilt from the logs).
 */

const WS = "usage";
const H = 3_600_000;
/** 2026-05-06T00:00:00Z. */
const T0 = Date.UTC(2026, 4, 6);

const PRICES = parsePriceTable({
  prices: [
    {
      model: "m1",
      currency: "USD",
      input_per_mtok: "3",
      output_per_mtok: "15",
      cache_read_per_mtok: "0.3",
      cache_write_per_mtok: "3.75",
    },
    {
      model: "m1",
      from: new Date(T0 + 24 * H).toISOString(),
      currency: "USD",
      input_per_mtok: "1.1",
      output_per_mtok: "7.7",
      cache_read_per_mtok: "0.11",
      cache_write_per_mtok: "1.375",
    },
  ],
});

interface Billed {
  session: string;
  tags: Tags;
  ms: number;
  model: string;
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
  reasoning: bigint;
  /** Caller cost [amount in 10^-12 units, currency]. */
  cost?: [bigint, string];
}

interface Scenario {
  store: SessionStore;
  billed: Billed[];
}

let n = 0;
function message(
  role: Role,
  ms: number,
  model: string | undefined,
  usage: Omit<Billed, "session" | "tags" | "ms" | "model" | "cost"> | undefined,
  cost: string | undefined,
  parentId?: string,
) {
  n++;
  return create(EntrySchema, {
    id: `e${n}`,
    parentId,
    timestamp: timestampFromMs(ms),
    kind: {
      case: "message",
      value: {
        role,
        content: [{ part: { case: "text", value: `m${n}` } }],
        model,
        usage:
          usage === undefined
            ? undefined
            : {
                inputTokens: usage.input,
                outputTokens: usage.output,
                cacheReadTokens: usage.cacheRead,
                cacheWriteTokens: usage.cacheWrite,
                reasoningTokens: usage.reasoning,
                cost: cost === undefined ? undefined : { amount: cost, currency: "USD" },
              },
      },
    },
  });
}

function units(amount: string): bigint {
  const [w, f = ""] = amount.split(".");
  return BigInt(w as string) * 10n ** 12n + BigInt(f.padEnd(12, "0"));
}

/** Writes the scenario's sessions through the store; returns what it billed. */
async function writeScenario(engine: StorageEngine): Promise<Scenario> {
  const store = new SessionStore(engine, { now: () => new Date(T0 - H) });
  const billed: Billed[] = [];
  const add = async (
    session: string,
    tags: Tags,
    ms: number,
    model: string | undefined,
    tokens: [number, number, number, number, number] | undefined,
    opts: { role?: Role; cost?: string; parentId?: string } = {},
  ): Promise<string> => {
    const usage =
      tokens === undefined
        ? undefined
        : {
            input: BigInt(tokens[0]),
            output: BigInt(tokens[1]),
            cacheRead: BigInt(tokens[2]),
            cacheWrite: BigInt(tokens[3]),
            reasoning: BigInt(tokens[4]),
          };
    const role = opts.role ?? Role.ASSISTANT;
    const e = message(role, ms, model, usage, opts.cost, opts.parentId);
    const s = await store.open(WS, session);
    await s.append(e);
    if (usage !== undefined && role === Role.ASSISTANT) {
      billed.push({
        session,
        tags,
        ms,
        model: model ?? "",
        ...usage,
        cost: opts.cost === undefined ? undefined : [units(opts.cost), "USD"],
      });
    }
    return e.id;
  };
  const A = { team: "red", proj: "x" };
  const B = { team: "blue" };
  const C = { proj: "x" };
  await store.create({ workspace: WS, sessionId: "sess-a", tags: A });
  await store.create({ workspace: WS, sessionId: "sess-b", tags: B });
  await store.create({ workspace: WS, sessionId: "sess-c", tags: C });
  await store.create({ workspace: WS, sessionId: "sess-d", parentSessionId: "sess-a" });

  const u1 = await add("sess-a", A, T0 + 5 * 60_000, undefined, undefined, { role: Role.USER });
  await add("sess-a", A, T0 + 10 * 60_000, "m1", [1000, 200, 50, 20, 30]);
  await add("sess-a", A, T0 + 40 * 60_000, "m1", [333, 77, 0, 0, 0]);
  await add("sess-a", A, T0 + H + 30 * 60_000, "m2", [500, 100, 0, 0, 10], { cost: "0.0123" });
  await add("sess-a", A, T0 + H + 35 * 60_000, "m2", [400, 40, 0, 0, 0]);
  // An abandoned branch: off the first user message.
  await add("sess-a", A, T0 + 2 * H + 5 * 60_000, "m1", [7, 3, 1, 1, 0], { parentId: u1 });
  // Not billed: an assistant message without usage, a user message with usage.
  await add("sess-a", A, T0 + 2 * H + 6 * 60_000, "m1", undefined);
  await add("sess-a", A, T0 + 2 * H + 7 * 60_000, "m1", [9, 9, 9, 9, 9], { role: Role.USER });
  // The next day, at the second price.
  await add("sess-a", A, T0 + 24 * H + 59 * 60_000, "m1", [123457, 6789, 1234, 99, 12]);

  await add("sess-b", B, T0 + 10 * 60_000, "m1", [11, 13, 17, 19, 0]);
  await add("sess-b", B, T0 + 25 * H, "m1", [2, 3, 5, 7, 1]);
  await add("sess-b", B, T0 + 25 * H + 1, "", [1, 1, 1, 1, 0]);

  await add("sess-c", C, T0 + 45 * 60_000, "m1", [1, 1, 0, 0, 0]);
  await add("sess-c", C, T0 + 45 * 60_000, "m3", [10, 20, 30, 40, 5]);

  await add("sess-d", {}, T0 + H + 10 * 60_000, "m2", [600, 60, 6, 0, 6]);
  await add("sess-d", {}, T0 + H + 50 * 60_000, "m1", [600, 60, 6, 0, 6], { cost: "1" });
  return { store, billed };
}

interface Query {
  start: number;
  end: number;
  bucket?: UsageBucket;
  byModel?: boolean;
  groupByTags?: string[];
  tags?: Tags;
}

/** A report's figures as plain values (bigints as strings). */
function plain(r: UsageReportResponse) {
  const totals = (t: UsageReportResponse["total"]) => ({
    messages: String(t?.messages),
    input: String(t?.inputTokens),
    output: String(t?.outputTokens),
    cacheRead: String(t?.cacheReadTokens),
    cacheWrite: String(t?.cacheWriteTokens),
    reasoning: String(t?.reasoningTokens),
    cost: (t?.cost ?? []).map((c) => `${c.amount} ${c.currency}`),
    unpriced: String(t?.unpricedMessages),
  });
  return {
    rows: r.rows.map((row) => ({
      bucket: new Date(timestampMs(row.bucketStart ?? timestampFromMs(0))).toISOString(),
      model: row.model,
      tags: { ...row.tags },
      usage: totals(row.usage),
      sessions: String(row.sessions),
    })),
    total: totals(r.total),
    sessions: String(r.sessions),
  };
}

/** The same figures, computed from the billed messages alone. */
function expected(billed: readonly Billed[], q: Query) {
  const bucket = q.bucket ?? UsageBucket.UNSPECIFIED;
  const keys = q.groupByTags ?? [];
  const inWindow = billed.filter(
    (b) =>
      b.ms >= q.start &&
      b.ms < q.end &&
      Object.entries(q.tags ?? {}).every(([k, v]) => b.tags[k] === v),
  );
  // Raw sums per (session, hour, model), each priced once, half up.
  const perSessionHour = new Map<string, Billed[]>();
  for (const b of inWindow) {
    const hour = Math.floor(b.ms / H) * H;
    const k = JSON.stringify([b.session, hour, b.model]);
    perSessionHour.set(k, [...(perSessionHour.get(k) ?? []), b]);
  }
  type Sum = {
    messages: bigint;
    input: bigint;
    output: bigint;
    cacheRead: bigint;
    cacheWrite: bigint;
    reasoning: bigint;
    cost: Map<string, bigint>;
    unpriced: bigint;
    sessions: Set<string>;
  };
  const empty = (): Sum => ({
    messages: 0n,
    input: 0n,
    output: 0n,
    cacheRead: 0n,
    cacheWrite: 0n,
    reasoning: 0n,
    cost: new Map(),
    unpriced: 0n,
    sessions: new Set(),
  });
  const groups = new Map<string, { bucket: number; model: string; values: string[]; sum: Sum }>();
  const total = empty();
  for (const [k, list] of perSessionHour) {
    const [session, hour, model] = JSON.parse(k) as [string, number, string];
    const first = list[0] as Billed;
    const bucketMs =
      bucket === UsageBucket.HOUR
        ? hour
        : bucket === UsageBucket.DAY
          ? Math.floor(hour / (24 * H)) * 24 * H
          : q.start;
    const m = q.byModel ? model : "";
    const values = keys.map((key) => first.tags[key] ?? "");
    const gk = JSON.stringify([bucketMs, m, values]);
    if (!groups.has(gk)) groups.set(gk, { bucket: bucketMs, model: m, values, sum: empty() });
    const g = (groups.get(gk) as { sum: Sum }).sum;
    // The price in effect at the hour: the second m1 row from T0 + 24 h.
    const price =
      model === "m1"
        ? hour >= T0 + 24 * H
          ? [units("1.1"), units("7.7"), units("0.11"), units("1.375")]
          : [units("3"), units("15"), units("0.3"), units("3.75")]
        : undefined;
    let uncosted = [0n, 0n, 0n, 0n];
    let uncostedCount = 0n;
    for (const s of [g, total]) {
      for (const b of list) {
        s.messages++;
        s.input += b.input;
        s.output += b.output;
        s.cacheRead += b.cacheRead;
        s.cacheWrite += b.cacheWrite;
        s.reasoning += b.reasoning;
        if (b.cost !== undefined) s.cost.set("USD", (s.cost.get("USD") ?? 0n) + b.cost[0]);
      }
      s.sessions.add(session);
    }
    for (const b of list) {
      if (b.cost !== undefined) continue;
      uncostedCount++;
      uncosted = [
        (uncosted[0] as bigint) + b.input,
        (uncosted[1] as bigint) + b.output,
        (uncosted[2] as bigint) + b.cacheRead,
        (uncosted[3] as bigint) + b.cacheWrite,
      ];
    }
    if (uncostedCount === 0n) continue;
    // Prices are in 10^-12 units per million tokens: the sum / 10^6, half up.
    for (const s of [g, total]) {
      if (price === undefined) {
        s.unpriced += uncostedCount;
        continue;
      }
      let sum = 0n;
      for (let i = 0; i < 4; i++) sum += (uncosted[i] as bigint) * (price[i] as bigint);
      s.cost.set("USD", (s.cost.get("USD") ?? 0n) + (sum + 500_000n) / 1_000_000n);
    }
  }
  const fmt = (u: bigint) => {
    const w = u / 10n ** 12n;
    const f = (u % 10n ** 12n).toString().padStart(12, "0").replace(/0+$/, "");
    return f === "" ? `${w}` : `${w}.${f}`;
  };
  const totals = (s: Sum) => ({
    messages: String(s.messages),
    input: String(s.input),
    output: String(s.output),
    cacheRead: String(s.cacheRead),
    cacheWrite: String(s.cacheWrite),
    reasoning: String(s.reasoning),
    cost: [...s.cost].map(([c, v]) => `${fmt(v)} ${c}`),
    unpriced: String(s.unpriced),
  });
  const rows = [...groups.values()].sort((a, b) => {
    if (a.bucket !== b.bucket) return a.bucket - b.bucket;
    if (a.model !== b.model) return a.model < b.model ? -1 : 1;
    const x = JSON.stringify(a.values);
    const y = JSON.stringify(b.values);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return {
    rows: rows.map((g) => ({
      bucket: new Date(g.bucket).toISOString(),
      model: g.model,
      tags: Object.fromEntries(keys.map((k, i) => [k, g.values[i]])),
      usage: totals(g.sum),
      sessions: String(g.sum.sessions.size),
    })),
    total: totals(total),
    sessions: String(total.sessions.size),
  };
}

async function report(engine: StorageEngine, q: Query): Promise<UsageReportResponse> {
  const req = create(UsageReportRequestSchema, {
    workspace: WS,
    start: timestampFromMs(q.start),
    end: timestampFromMs(q.end),
    bucket: q.bucket ?? UsageBucket.UNSPECIFIED,
    byModel: q.byModel ?? false,
    groupByTags: q.groupByTags ?? [],
    tags: q.tags ?? {},
  });
  return usageReport(engine, checkUsageQuery(req, WS), PRICES);
}

const QUERIES: Array<[string, Query]> = [
  ["two whole days", { start: T0, end: T0 + 48 * H }],
  [
    "a window cutting through sessions and hours",
    { start: T0 + 20 * 60_000, end: T0 + H + 40 * 60_000 },
  ],
  [
    "hour buckets by model and team",
    { start: T0, end: T0 + 48 * H, bucket: UsageBucket.HOUR, byModel: true, groupByTags: ["team"] },
  ],
  [
    "day buckets over a window starting mid-hour",
    { start: T0 + 30 * 60_000, end: T0 + 47 * H + 1, bucket: UsageBucket.DAY, byModel: true },
  ],
  [
    "the tag filter, grouped by two keys",
    { start: T0, end: T0 + 48 * H, tags: { proj: "x" }, groupByTags: ["team", "proj"] },
  ],
  ["an empty window", { start: T0 + 3 * H, end: T0 + 4 * H }],
];

let fixture: EngineFixture | undefined;
afterEach(async () => {
  await fixture?.dispose();
  fixture = undefined;
});

describe.each(STORE_ENGINE_FACTORIES)("UsageReport on $name", (factory) => {
  it("equals the sums of the billed messages, for every window and grouping", async () => {
    fixture = await factory.open();
    const { billed } = await writeScenario(fixture.engine);
    expect(billed.length).toBe(13);
    for (const [name, q] of QUERIES) {
      expect(plain(await report(fixture.engine, q)), name).toEqual(expected(billed, q));
    }
    // The scenario does reach every kind of figure.
    const all = plain(await report(fixture.engine, QUERIES[0]?.[1] as Query));
    expect(all.sessions).toBe("4");
    expect(all.total.unpriced).not.toBe("0");
    expect(all.total.cost.length).toBe(1);
  });

  it("follows appends, deletes and a session made again under the same id", async () => {
    fixture = await factory.open();
    const { store, billed } = await writeScenario(fixture.engine);
    const q = QUERIES[2]?.[1] as Query;
    expect(plain(await report(fixture.engine, q))).toEqual(expected(billed, q));
    const more = async (session: string, tags: Tags, ms: number, input: number) => {
      const s = await store.open(WS, session);
      const usage = {
        input: BigInt(input),
        output: 1n,
        cacheRead: 0n,
        cacheWrite: 0n,
        reasoning: 0n,
      };
      await s.append(message(Role.ASSISTANT, ms, "m1", usage, undefined));
      billed.push({ session, tags, ms, model: "m1", ...usage });
    };
    await more("sess-b", { team: "blue" }, T0 + 10 * 60_000 + 1, 1000);
    await more("sess-b", { team: "blue" }, T0 + 3 * H, 2000);
    await store.create({ workspace: WS, sessionId: "sess-e", tags: { team: "red" } });
    await more("sess-e", { team: "red" }, T0 + 3 * H, 4000);
    expect(plain(await report(fixture.engine, q))).toEqual(expected(billed, q));
    await store.delete(WS, "sess-c");
    await store.create({ workspace: WS, sessionId: "sess-c", tags: { team: "green" } });
    await more("sess-c", { team: "green" }, T0 + 5 * H, 8000);
    const after = billed.filter((b) => !(b.session === "sess-c" && b.tags.team === undefined));
    expect(plain(await report(fixture.engine, q))).toEqual(expected(after, q));
  });

  it("still counts the messages an erasure withheld (their usage stays), before and after a restart", async () => {
    fixture = await factory.open();
    const { store, billed } = await writeScenario(fixture.engine);
    const q = QUERIES[2]?.[1] as Query;
    expect(plain(await report(fixture.engine, q))).toEqual(expected(billed, q));
    await store.erase({ workspace: WS, sessionIds: ["sess-c"], by: "test", why: "usage" });
    expect(plain(await report(fixture.engine, q))).toEqual(expected(billed, q));
    const again = fixture.reopen === undefined ? fixture.engine : await fixture.reopen();
    expect(plain(await report(again, q))).toEqual(expected(billed, q));
  });

  it("counts a fork's copies once, in its source; what the fork adds counts in the fork", async () => {
    fixture = await factory.open();
    const { store, billed } = await writeScenario(fixture.engine);
    const q = QUERIES[2]?.[1] as Query;
    // Counted before the forks exist, and again after (the sums are kept and grown).
    expect(plain(await report(fixture.engine, q))).toEqual(expected(billed, q));
    await store.fork(WS, "sess-a", { sessionId: "fork-a" });
    const cRoot = (await fixture.engine.load({ workspace: WS, sessionId: "sess-c" })).root.id;
    await store.fork(WS, "sess-c", { sessionId: "fork-c", entry: cRoot });
    const usage = { input: 70n, output: 7n, cacheRead: 0n, cacheWrite: 0n, reasoning: 0n };
    for (const [session, tags] of [
      ["fork-a", { team: "red", proj: "x" }],
      ["fork-c", { proj: "x" }],
    ] as const) {
      const ms = T0 + 4 * H;
      await (await store.open(WS, session)).append(
        message(Role.ASSISTANT, ms, "m1", usage, undefined),
      );
      billed.push({ session, tags, ms, model: "m1", ...usage });
    }
    expect(plain(await report(fixture.engine, q))).toEqual(expected(billed, q));
    const again = fixture.reopen === undefined ? fixture.engine : await fixture.reopen();
    expect(plain(await report(again, q))).toEqual(expected(billed, q));
  });

  it.runIf(factory.reopens)("gives the same figures after a restart", async () => {
    fixture = await factory.open();
    const { billed } = await writeScenario(fixture.engine);
    // Listed once, so that the JSONL index holds the records (with their sums).
    await report(fixture.engine, QUERIES[0]?.[1] as Query);
    const engine = await (fixture.reopen as () => Promise<StorageEngine>)();
    for (const [name, q] of QUERIES) {
      expect(plain(await report(engine, q)), name).toEqual(expected(billed, q));
    }
  });
});

describe("UsageReport on JSONL across restarts", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("reads the sums from the listing index, and rebuilds them when it is deleted", async () => {
    dir = await mkdtemp(join(tmpdir(), "sessiond-usage-"));
    let engine = new JsonlEngine({ dataDir: dir });
    const { billed } = await writeScenario(engine);
    await report(engine, QUERIES[0]?.[1] as Query);
    await engine.close();

    // The index holds every session's sums...
    const files = decodeIndex(await readFile(join(dir, WS, LISTING_INDEX_NAME)), WS) ?? [];
    expect(files.map((f) => [f.id, f.record?.usage?.size]).sort()).toEqual([
      ["sess-a", 4],
      ["sess-b", 3],
      ["sess-c", 2],
      ["sess-d", 2],
    ]);
    // ... and a restarted engine reports from them.
    engine = new JsonlEngine({ dataDir: dir });
    for (const [name, q] of QUERIES) {
      expect(plain(await report(engine, q)), name).toEqual(expected(billed, q));
    }
    await engine.close();

    // Without the index: rebuilt from the logs, the same figures.
    await unlink(join(dir, WS, LISTING_INDEX_NAME));
    engine = new JsonlEngine({ dataDir: dir });
    for (const [name, q] of QUERIES) {
      expect(plain(await report(engine, q)), name).toEqual(expected(billed, q));
    }
    await engine.close();
  });
});

describe("UsageReport requests", () => {
  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ["no start", { start: undefined, end: timestampFromMs(T0) }, /^start is required/],
    ["no end", { start: timestampFromMs(T0), end: undefined }, /^end is required/],
    [
      "end before start",
      { start: timestampFromMs(T0), end: timestampFromMs(T0) },
      /end .* must be after start/,
    ],
    [
      "over 400 days",
      { start: timestampFromMs(T0), end: timestampFromMs(T0 + 401 * 24 * H) },
      /over 400 days/,
    ],
    [
      "nine group_by_tags",
      { groupByTags: ["a", "b", "c", "d", "e", "f", "g", "h", "i"] },
      /group_by_tags has 9 keys/,
    ],
    ["a malformed key", { groupByTags: ["ok", "no way"] }, /group_by_tags\[1\]/],
    ["a malformed tag", { tags: { "bad key": "v" } }, /tags/],
  ];
  it.each(bad)("refuses %s with INVALID_ARGUMENT naming the field", (_, fields, message) => {
    const req = create(UsageReportRequestSchema, {
      start: timestampFromMs(T0),
      end: timestampFromMs(T0 + H),
      ...fields,
    });
    let err: unknown;
    try {
      checkUsageQuery(req, WS);
    } catch (e) {
      err = e;
    }
    expect(isSessiondError(err, "INVALID_ARGUMENT")).toBe(true);
    expect((err as Error).message).toMatch(message);
  });
});

describe("UsageReport over 10,000 sessions", () => {
  it("sums every session of the workspace in one call", async () => {
    const engine = new MemoryEngine();
    const store = new SessionStore(engine, { now: () => new Date(T0) });
    const count = 10_000;
    let want = 0n;
    for (let i = 0; i < count; i++) {
      const sessionId = `s${String(i).padStart(5, "0")}`;
      await store.create({ workspace: WS, sessionId, tags: { shard: String(i % 7) } });
      const s = await store.open(WS, sessionId);
      const input = BigInt(i + 1);
      want += input;
      await s.append(
        message(
          Role.ASSISTANT,
          T0 + (i % 24) * H,
          "m1",
          {
            input,
            output: 1n,
            cacheRead: 0n,
            cacheWrite: 0n,
            reasoning: 0n,
          },
          undefined,
        ),
      );
    }
    const r = await report(engine, {
      start: T0,
      end: T0 + 24 * H,
      bucket: UsageBucket.DAY,
      groupByTags: ["shard"],
    });
    expect(r.sessions).toBe(BigInt(count));
    expect(r.total?.inputTokens).toBe(want);
    expect(r.total?.messages).toBe(BigInt(count));
    expect(r.rows.map((row) => row.tags.shard)).toEqual(["0", "1", "2", "3", "4", "5", "6"]);
    expect(r.rows.reduce((a, row) => a + row.sessions, 0n)).toBe(BigInt(count));
    await engine.close();
  }, 120_000);
});
