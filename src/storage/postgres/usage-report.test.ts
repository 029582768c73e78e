import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, afterEach, expect, it } from "vitest";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  UsageBucket,
  UsageReportRequestSchema,
} from "../../../gen/sessiond/v1/store_service_pb.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import type { Tags } from "../../core/tags.js";
import { type PriceTable, parsePriceTable } from "../../core/usage-sums.js";
import { SessionStore } from "../../store/session-store.js";
import { checkUsageQuery, usageReport } from "../../store/usage-report.js";
import type { StorageEngine } from "../engine.js";
import { MemoryEngine } from "../memory.js";
import { PostgresEngine } from "./postgres-engine.js";

/**
 * UsageReport on PostgreSQL groups the sessions' rows in SQL: the price
 * rule still rounds each (session, hour, model) sum on its own (half-up to
 * 10^-12), never the sum of a group of sessions. Half a unit per session,
 * two sessions in one group: 1 + 1 units, where rounding the group's sum
 * would give 1.
 */

const WS = "usage-sql";
const T0 = Date.UTC(2026, 4, 6);
const PRICES = parsePriceTable({
  prices: [
    {
      model: "m1",
      currency: "USD",
      // 1 input token costs 0.5 units of 10^-12.
      input_per_mtok: "0.0000005",
      output_per_mtok: "0",
      cache_read_per_mtok: "0",
      cache_write_per_mtok: "0",
    },
  ],
});

/** m1 at `perMTok` per million input tokens, m2 at 1 per million input tokens. */
function pricesAt(perMTok: string): PriceTable {
  const row = (model: string, input: string) => ({
    model,
    currency: "USD",
    input_per_mtok: input,
    output_per_mtok: "0",
    cache_read_per_mtok: "0",
    cache_write_per_mtok: "0",
  });
  return parsePriceTable({ prices: [row("m1", perMTok), row("m2", "1")] });
}

const H = 3_600_000;

/** One billed assistant message. */
function billed(ms: number, model: string, input: number, cost?: string) {
  return create(EntrySchema, {
    timestamp: timestampFromMs(ms),
    kind: {
      case: "message",
      value: {
        role: Role.ASSISTANT,
        content: [{ part: { case: "text", value: "a" } }],
        model,
        usage: {
          inputTokens: BigInt(input),
          cost: cost === undefined ? undefined : { amount: cost, currency: "EUR" },
        },
      },
    },
  });
}

/**
 * Sessions spread so that every rule of distinct sessions is reached: one
 * across hours and days with gaps and two models, two models in one hour,
 * a caller-set cost, a session without tags. `[session, tags, [hour,
 * model, input, cost?][]]`.
 */
const SPREAD: Array<[string, Tags, Array<[number, string, number, string?]>]> = [
  [
    "a",
    { team: "red" },
    [
      [0, "m1", 100],
      [0, "m2", 10],
      [2, "m1", 7],
      [3, "m2", 5, "0.5"],
      [26, "m1", 1],
    ],
  ],
  [
    "b",
    { team: "blue" },
    [
      [1, "m2", 3],
      [2, "m2", 4],
      [25, "m1", 9],
      [25, "m2", 9],
    ],
  ],
  ["c", { team: "red", proj: "x" }, [[2, "m1", 1000001]]],
  [
    "d",
    {},
    [
      [3, "m3", 50],
      [27, "m1", 2, "0.25"],
    ],
  ],
];

/** Writes SPREAD's messages [from, to) of each session through `store` (from 0: creating it). */
async function writeSpread(
  store: SessionStore,
  ws: string,
  from = 0,
  to = Infinity,
): Promise<void> {
  for (const [id, tags, msgs] of SPREAD) {
    if (from === 0) await store.create({ workspace: ws, sessionId: id, tags });
    const s = await store.open(ws, id);
    for (const [hour, model, input, cost] of msgs.slice(from, to)) {
      await s.append(billed(T0 + hour * H + 60_000, model, input, cost));
    }
  }
}

const WHOLE_HOUR_QUERIES: Array<[UsageBucket, boolean, string[], Tags, number, number]> = [];
for (const bucket of [UsageBucket.HOUR, UsageBucket.DAY, UsageBucket.UNSPECIFIED]) {
  for (const byModel of [true, false]) {
    for (const [from, to] of [
      [0, 48],
      [2, 26],
      [3, 4],
    ] as const) {
      WHOLE_HOUR_QUERIES.push([bucket, byModel, ["team"], {}, from, to]);
      WHOLE_HOUR_QUERIES.push([bucket, byModel, [], { team: "red" }, from, to]);
    }
  }
}
// Windows cutting hours: the per-session path, on the same sums.
WHOLE_HOUR_QUERIES.push([UsageBucket.DAY, true, ["team", "proj"], {}, 0.5, 25.5]);
WHOLE_HOUR_QUERIES.push([UsageBucket.HOUR, false, [], { team: "red" }, 2.01, 3.99]);

/** Every query of WHOLE_HOUR_QUERIES on `engine`, priced with `prices`. */
async function reports(engine: StorageEngine, ws: string, prices: PriceTable) {
  const out: unknown[] = [];
  for (const [bucket, byModel, groupByTags, tags, from, to] of WHOLE_HOUR_QUERIES) {
    const req = create(UsageReportRequestSchema, {
      workspace: ws,
      start: timestampFromMs(T0 + from * H),
      end: timestampFromMs(T0 + to * H),
      bucket,
      byModel,
      groupByTags,
      tags,
    });
    out.push(await usageReport(engine, checkUsageQuery(req, ws), prices));
  }
  return out;
}

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL usage report tests (skipped: ${pgSkip})`, () => {});
} else {
  let engine: PostgresEngine | undefined;
  afterAll(() => engine?.close());

  it("grouping sessions in SQL prices each (session, hour, model) sum and rounds it on its own", async () => {
    const opened = await openPostgres();
    engine = opened.engine;
    const store = new SessionStore(engine, { now: () => new Date(T0) });
    for (const id of ["s1", "s2"]) {
      await store.create({ workspace: WS, sessionId: id, tags: { team: "red" } });
      await (await store.open(WS, id)).append(
        create(EntrySchema, {
          timestamp: timestampFromMs(T0 + 10 * 60_000),
          kind: {
            case: "message",
            value: {
              role: Role.ASSISTANT,
              content: [{ part: { case: "text", value: "hi" } }],
              model: "m1",
              usage: { inputTokens: 1n },
            },
          },
        }),
      );
    }
    for (const bucket of [UsageBucket.HOUR, UsageBucket.DAY, UsageBucket.UNSPECIFIED]) {
      const req = create(UsageReportRequestSchema, {
        workspace: WS,
        start: timestampFromMs(T0),
        end: timestampFromMs(T0 + 86_400_000),
        bucket,
        byModel: true,
        groupByTags: ["team"],
      });
      const r = await usageReport(engine, checkUsageQuery(req, WS), PRICES);
      expect(r.sessions).toBe(2n);
      expect(r.total?.messages).toBe(2n);
      expect(r.total?.cost).toEqual([
        expect.objectContaining({ amount: "0.000000000002", currency: "USD" }),
      ]);
      expect(r.rows).toHaveLength(1);
      expect(r.rows[0]?.sessions).toBe(2n);
      expect(r.rows[0]?.tags).toEqual({ team: "red" });
      expect(r.rows[0]?.usage?.cost).toEqual([
        expect.objectContaining({ amount: "0.000000000002", currency: "USD" }),
      ]);
    }
  });

  /** The workspace's usage rows, heads and roll-up cells, counted; and the roll-up's sums against the rows'. */
  async function stored(admin: Awaited<ReturnType<typeof openPostgres>>["admin"], ws: string) {
    const [r] = await admin<
      { rows: string; heads: string; cells: string; rollup: string; sums: string }[]
    >`
      SELECT (SELECT count(*) FROM sessiond_usage WHERE workspace = ${ws})::text AS rows,
        (SELECT count(*) FROM sessiond_usage_heads WHERE workspace = ${ws})::text AS heads,
        (SELECT count(*) FROM sessiond_usage_rollup WHERE workspace = ${ws})::text AS cells,
        (SELECT coalesce(sum(n), 0) || '/' || coalesce(sum(messages), 0) || '/' || coalesce(sum(input), 0)
          FROM sessiond_usage_rollup WHERE workspace = ${ws} AND currency = '') AS rollup,
        (SELECT count(*) || '/' || coalesce(sum(messages), 0) || '/' || coalesce(sum(input), 0)
          FROM sessiond_usage WHERE workspace = ${ws}) AS sums`;
    return r;
  }

  let memory: MemoryEngine | undefined;
  afterEach(async () => {
    await memory?.close();
    memory = undefined;
  });

  it("the roll-up answers as the memory engine does, for every bucket, model grouping, tag and window; followed appends", async () => {
    const opened = await openPostgres();
    engine = opened.engine;
    memory = new MemoryEngine();
    const ws = "spread";
    const pg = new SessionStore(engine, { now: () => new Date(T0) });
    const mem = new SessionStore(memory, { now: () => new Date(T0) });
    const prices = pricesAt("3");
    // Part of each session first, reported (counted), then the rest appended.
    await writeSpread(pg, ws, 0, 2);
    await writeSpread(mem, ws, 0, 2);
    expect(await reports(engine, ws, prices)).toEqual(await reports(memory, ws, prices));
    await writeSpread(pg, ws, 2);
    await writeSpread(mem, ws, 2);
    const want = await reports(memory, ws, prices);
    // The whole-hour queries are answered from the roll-up, not by the per-session path.
    const q = { fromHour: T0, toHour: T0 + 48 * H, byModel: false, groupByTags: [], tags: {} };
    expect(await engine.usageGroups(ws, { ...q, bucket: "day" }, prices)).toBeDefined();
    expect(await reports(engine, ws, prices)).toEqual(want);
    // The sums were counted into the roll-up, and it holds exactly the rows' sums.
    const s = await stored(opened.admin, ws);
    expect(s?.rows).toBe("12");
    expect(s?.rollup).toBe(s?.sums);
    // The messages appended after the first report are in the second.
    const whole = want[0] as { total?: { messages: bigint } };
    expect(whole.total?.messages).toBe(12n);
  });

  it("a new price table prices the counted rows again, and the old one again after", async () => {
    const opened = await openPostgres();
    engine = opened.engine;
    memory = new MemoryEngine();
    const ws = "reprice";
    const pg = new SessionStore(engine, { now: () => new Date(T0) });
    const mem = new SessionStore(memory, { now: () => new Date(T0) });
    await writeSpread(pg, ws);
    await writeSpread(mem, ws);
    for (const price of ["3", "0.0000015", "7", "0.0000015"]) {
      const prices = pricesAt(price);
      expect(await reports(engine, ws, prices), price).toEqual(await reports(memory, ws, prices));
    }
    const [row] = await opened.admin<{ units: string }[]>`
      SELECT sum(units)::text AS units FROM sessiond_usage_rollup
      WHERE workspace = ${ws} AND currency = 'USD'`;
    // m1 at 1.5 units of 10^-12 per input token, each (session, hour) row rounded half up on
    // its own: 100, 7, 1 (a), 9 (b), 1000001 (c) -> 150 + 11 + 2 + 14 + 1500002 (the sum
    // rounded once would be 1500177); m2 at 10^6 units: 10 + 3 + 4 + 9 (a's hour-3 m2 row and
    // d's m1 row have caller-set EUR costs and are not priced).
    expect(row?.units).toBe(String(150 + 11 + 2 + 14 + 1500002 + 26_000_000));
  });

  it("deleting a session removes its usage rows and takes them out of the roll-up", async () => {
    const opened = await openPostgres();
    engine = opened.engine;
    const ws = "delete";
    const store = new SessionStore(engine, { now: () => new Date(T0) });
    await writeSpread(store, ws);
    const prices = pricesAt("3");
    const before = (await reports(engine, ws, prices))[0] as { sessions: bigint };
    expect(before.sessions).toBe(4n);
    await store.delete(ws, "a");
    let s = await stored(opened.admin, ws);
    expect(s?.rows).toBe("7");
    expect(s?.heads).toBe("3");
    expect(s?.rollup).toBe(s?.sums);
    const after = (await reports(engine, ws, prices))[0] as {
      sessions: bigint;
      total?: { messages: bigint };
    };
    expect(after.sessions).toBe(3n);
    expect(after.total?.messages).toBe(7n);
    // A session whose row went without its usage (deleted by an older sessiond): dropped by the next report.
    await opened.admin`DELETE FROM sessiond_sessions WHERE workspace = ${ws} AND session_id = 'b'`;
    const orphan = (await reports(engine, ws, prices))[0] as { sessions: bigint };
    expect(orphan.sessions).toBe(2n);
    s = await stored(opened.admin, ws);
    expect(s?.rows).toBe("3");
    expect(s?.heads).toBe("2");
    expect(s?.rollup).toBe(s?.sums);
    // The cells emptied are gone: only the remaining rows' are left (a token cell each, c's USD, d's EUR).
    expect(s?.cells).toBe("5");
  });

  it("two replicas counting the same sessions at once count each message once", async () => {
    const opened = await openPostgres();
    engine = opened.engine;
    const other = await PostgresEngine.open({ url: opened.url });
    memory = new MemoryEngine();
    try {
      const ws = "replicas";
      const pg = new SessionStore(engine, { now: () => new Date(T0) });
      const mem = new SessionStore(memory, { now: () => new Date(T0) });
      // More sessions than a report counts at once, sharing roll-up cells.
      for (let i = 0; i < 24; i++) {
        for (const store of [pg, mem]) {
          await store.create({ workspace: ws, sessionId: `r${i}`, tags: { team: `t${i % 2}` } });
          const s = await store.open(ws, `r${i}`);
          await s.append(billed(T0 + (i % 3) * H + 60_000, "m1", 10 + i));
          await s.append(billed(T0 + 2 * H + 60_000, i % 2 === 0 ? "m1" : "m2", 1));
        }
      }
      const prices = pricesAt("3");
      expect(await reports(engine, ws, prices)).toEqual(await reports(memory, ws, prices));
      // Every session moved on since it was counted: both replicas count the new messages at once.
      for (let i = 0; i < 24; i++) {
        for (const store of [pg, mem]) {
          await (await store.open(ws, `r${i}`)).append(billed(T0 + 2 * H + 120_000, "m1", 100));
        }
      }
      const want = await reports(memory, ws, prices);
      const [a, b] = await Promise.all([reports(engine, ws, prices), reports(other, ws, prices)]);
      expect(a).toEqual(want);
      expect(b).toEqual(want);
      const s = await stored(opened.admin, ws);
      // Rows (hour, model) per session: (i mod 3, m1), (2, m1 or m2 by parity), (2, m1).
      expect(s?.rows).toBe(String(4 * 1 + 8 * 2 + 4 * 2 + 8 * 3));
      expect(s?.rollup).toBe(s?.sums);
    } finally {
      await other.close();
    }
  });
}
