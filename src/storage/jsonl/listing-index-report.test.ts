import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  UsageBucket,
  UsageReportRequestSchema,
  type UsageReportResponse,
} from "../../../gen/sessiond/v1/store_service_pb.js";
import type { Tags } from "../../core/tags.js";
import { parsePriceTable } from "../../core/usage-sums.js";
import { SessionStore } from "../../store/session-store.js";
import { checkUsageQuery, usageReport } from "../../store/usage-report.js";
import type { StorageEngine } from "../engine.js";
import { MemoryEngine } from "../memory.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { LoadedRecord } from "./listing-index-entries.js";

/**
 * UsageReport of whole hours on JSONL is summed by the engine
 * (JsonlEngine.usageGroups: numbers, read in place from the listing
 * index's usage rows after a restart). Each report here equals the
 * store's own per-session summing over the same messages on the memory
 * engine (which has no usageGroups; store/usage-report.test.ts checks that
 * path against sums computed from the messages), with prices whose cost
 * is rounded per (session, hour, model) group, caller-set costs, unpriced
 * models, and after a restart, sessions appended and made by another
 * process since the index was saved.
 */

const WS = "usage";
const H = 3_600_000;
const T0 = Date.UTC(2026, 4, 6);

const PRICES = parsePriceTable({
  prices: [
    // 0.5 × 10^-12 per input token: each session's group is rounded up on its own.
    {
      model: "fine",
      currency: "USD",
      input_per_mtok: "0.0000005",
      output_per_mtok: "0.0000003",
      cache_read_per_mtok: "0",
      cache_write_per_mtok: "0",
    },
    {
      model: "whole",
      currency: "USD",
      input_per_mtok: "3",
      output_per_mtok: "15",
      cache_read_per_mtok: "0.3",
      cache_write_per_mtok: "3.75",
    },
    {
      model: "whole",
      from: new Date(T0 + 2 * H).toISOString(),
      currency: "EUR",
      input_per_mtok: "1.25",
      output_per_mtok: "5",
      cache_read_per_mtok: "0.125",
      cache_write_per_mtok: "1",
    },
  ],
});

const QUERIES: Array<[string, Record<string, unknown>]> = [
  [
    "hour buckets by model and team",
    { bucket: UsageBucket.HOUR, byModel: true, groupByTags: ["team"] },
  ],
  ["day buckets", { bucket: UsageBucket.DAY }],
  ["one bucket, by model, two keys", { byModel: true, groupByTags: ["proj", "team"] }],
  ["a tag filter", { bucket: UsageBucket.HOUR, tags: { team: "t1" }, groupByTags: ["team"] }],
];

let n = 0;
function assistant(ms: number, model: string, input: bigint, output: bigint, cost?: string) {
  n++;
  return create(EntrySchema, {
    id: `e${n}`,
    timestamp: timestampFromMs(ms),
    kind: {
      case: "message",
      value: {
        role: Role.ASSISTANT,
        content: [{ part: { case: "text", value: `m${n}` } }],
        model,
        usage: {
          inputTokens: input,
          outputTokens: output,
          cacheReadTokens: 3n,
          cacheWriteTokens: 1n,
          reasoningTokens: 1n,
          cost: cost === undefined ? undefined : { amount: cost, currency: "USD" },
        },
      },
    },
  });
}

/** The same sessions and appends on every engine given. */
class Both {
  private readonly stores: SessionStore[];
  constructor(engines: StorageEngine[]) {
    this.stores = engines.map((e) => new SessionStore(e, { now: () => new Date(T0) }));
  }
  async create(sessionId: string, tags: Tags): Promise<void> {
    for (const s of this.stores) await s.create({ workspace: WS, sessionId, tags });
  }
  async append(sessionId: string, ...args: Parameters<typeof assistant>): Promise<void> {
    const e = assistant(...args);
    for (const s of this.stores) await (await s.open(WS, sessionId)).append(e);
  }
}

/** Twelve sessions: rounded prices, whole prices changing at T0 + 2 h, caller costs, no price. */
async function scenario(both: Both): Promise<void> {
  for (let i = 0; i < 12; i++) {
    const id = `s${String(i).padStart(2, "0")}`;
    await both.create(id, i % 4 === 0 ? { team: `t${i % 3}`, proj: "p" } : { team: `t${i % 3}` });
    await both.append(id, T0 + (i % 4) * H + 60_000, "fine", 1n, 1n);
    await both.append(id, T0 + (i % 4) * H + 120_000, "fine", 1n, 0n);
    await both.append(id, T0 + (i % 3) * H + 180_000, "whole", BigInt(1000 + i), 7n);
    if (i % 5 === 0) await both.append(id, T0 + H + 1, "whole", 10n, 10n, "0.25");
    if (i % 6 === 0) await both.append(id, T0 + 30 * H, "", 5n, 5n);
  }
}

function request(q: Record<string, unknown>) {
  return checkUsageQuery(
    create(UsageReportRequestSchema, {
      workspace: WS,
      start: timestampFromMs(T0),
      end: timestampFromMs(T0 + 48 * H),
      ...q,
    }),
    WS,
  );
}

async function reports(engine: StorageEngine): Promise<UsageReportResponse[]> {
  const out: UsageReportResponse[] = [];
  for (const [, q] of QUERIES) out.push(await usageReport(engine, request(q), PRICES));
  return out;
}

const dirs: string[] = [];
const open: StorageEngine[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const e of open.splice(0)) await e.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function jsonl(dir?: string): Promise<{ dir: string; engine: JsonlEngine }> {
  const d = dir ?? (await mkdtemp(join(tmpdir(), "sessiond-usage-rows-")));
  if (dir === undefined) dirs.push(d);
  const engine = new JsonlEngine({ dataDir: d });
  open.push(engine);
  return { dir: d, engine };
}

async function close(engine: StorageEngine): Promise<void> {
  open.splice(open.indexOf(engine), 1);
  await engine.close();
}

describe("UsageReport on JSONL summed by the engine", () => {
  it("equals the store's per-session sums, rounding included, before and after a restart", async () => {
    const memory = new MemoryEngine();
    open.push(memory);
    const { dir, engine } = await jsonl();
    await scenario(new Both([memory, engine]));
    const want = await reports(memory);
    // The figures reach what the engine's summing must get right.
    const all = want[2] as UsageReportResponse;
    expect(all.total?.cost.map((c) => c.currency)).toEqual(["EUR", "USD"]);
    expect(all.total?.unpricedMessages).toBe(2n);
    expect(all.sessions).toBe(12n);

    const found = await engine.usageGroups(
      WS,
      {
        fromHour: T0,
        toHour: T0 + 48 * H,
        bucket: "hour",
        byModel: true,
        groupByTags: [],
        tags: {},
      },
      PRICES,
    );
    expect(found?.sessions).toBe(12);
    expect(await reports(engine)).toEqual(want);
    await close(engine);

    // After a restart: read in place from the index's usage rows; only
    // the sessions with caller-set costs (kept as JSON) decode their sums.
    const usage = vi.spyOn(LoadedRecord.prototype, "usage", "get");
    const again = (await jsonl(dir)).engine;
    expect(await reports(again)).toEqual(want);
    expect(usage.mock.instances.map((r) => (r as unknown as LoadedRecord).sessionId)).toEqual(
      expect.arrayContaining(["s00", "s05", "s10"]),
    );
    expect(new Set(usage.mock.instances).size).toBe(3);
  });

  it("counts what another process appended and created after the index was saved", async () => {
    const memory = new MemoryEngine();
    open.push(memory);
    const { dir, engine } = await jsonl();
    await scenario(new Both([memory, engine]));
    await reports(engine);
    await close(engine);

    // Another process: appends and creates, and saves no index meanwhile.
    const other = (await jsonl(dir)).engine;
    const both = new Both([memory, other]);
    await both.append("s03", T0 + 3 * H + 600_000, "fine", 1n, 1n);
    await both.append("s04", T0 + 5 * H, "whole", 2n, 2n);
    await both.create("s99", { team: "t1" });
    await both.append("s99", T0 + H, "fine", 3n, 0n);

    const restarted = (await jsonl(dir)).engine;
    expect(await reports(restarted)).toEqual(await reports(memory));
    await close(other);
  });

  it("leaves a report whose sums are not exact as numbers to the store", async () => {
    const memory = new MemoryEngine();
    open.push(memory);
    const { dir, engine } = await jsonl();
    const both = new Both([memory, engine]);
    await scenario(both);
    // Two sessions of 2^52 input tokens each: their sum is past 2^53.
    await both.append("s01", T0 + 5 * H, "whole", 2n ** 52n, 0n);
    await both.append("s02", T0 + 5 * H, "whole", 2n ** 52n + 1n, 0n);
    const q = { fromHour: T0, toHour: T0 + 48 * H, bucket: "none", byModel: false } as const;
    expect(await engine.usageGroups(WS, { ...q, groupByTags: [], tags: {} }, PRICES)).toBe(
      undefined,
    );
    const want = await reports(memory);
    expect(want[1]?.total?.inputTokens).toBeGreaterThan(2n ** 53n);
    expect(await reports(engine)).toEqual(want);
    await close(engine);
    expect(await reports((await jsonl(dir)).engine)).toEqual(want);
  });
});
