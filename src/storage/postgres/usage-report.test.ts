import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, expect, it } from "vitest";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  UsageBucket,
  UsageReportRequestSchema,
} from "../../../gen/sessiond/v1/store_service_pb.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { parsePriceTable } from "../../core/usage-sums.js";
import { SessionStore } from "../../store/session-store.js";
import { checkUsageQuery, usageReport } from "../../store/usage-report.js";
import type { PostgresEngine } from "./postgres-engine.js";

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
}
