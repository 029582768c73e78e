import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { user } from "../../../test/support/fixtures.js";
import { parseScrape, sampleOf } from "../../../test/support/prometheus.js";
import { reply, SCENARIO_PRICES } from "../../../test/support/usage-scenario.js";
import { parsePriceTable } from "../../core/usage-sums.js";
import { MAX_USAGE_MODELS, MAX_USAGE_WORKSPACES, UsageMetrics } from "./usage-metrics.js";

const prices = parsePriceTable(SCENARIO_PRICES);

async function scrape(registry: Registry) {
  return parseScrape(await registry.metrics());
}

const tokens = "sessiond_usage_tokens_total";
const cost = "sessiond_usage_cost_total";

describe("usage metrics", () => {
  it("counts tokens by workspace, model and kind, and costs by currency (caller-set and priced)", async () => {
    const registry = new Registry();
    const m = new UsageMetrics(registry, prices);
    m.count("ws", [
      user("u1"),
      reply({
        id: "a1",
        model: "sonnet",
        at: "05:10:00",
        tokens: { input: 100, output: 20, cacheRead: 1000, cacheWrite: 50, reasoning: 5 },
      }),
      reply({
        id: "a2",
        model: "sonnet",
        at: "06:10:00",
        tokens: { input: 1, output: 1 },
        cost: { amount: "0.25", currency: "EUR" },
      }),
    ]);
    const s = await scrape(registry);
    const at = (kind: string) => sampleOf(s, tokens, { workspace: "ws", model: "sonnet", kind });
    expect([
      at("input"),
      at("output"),
      at("cache_read"),
      at("cache_write"),
      at("reasoning"),
    ]).toEqual([101, 21, 1000, 50, 5]);
    // a1 priced at 05:10: (100*3 + 20*15 + 1000*0.3 + 50*3.75) / 1e6 USD.
    expect(sampleOf(s, cost, { workspace: "ws", model: "sonnet", currency: "USD" })).toBeCloseTo(
      0.0010875,
      12,
    );
    expect(sampleOf(s, cost, { workspace: "ws", model: "sonnet", currency: "EUR" })).toBe(0.25);
  });

  it("counts no cost for a message without a caller cost and without a price", async () => {
    const registry = new Registry();
    new UsageMetrics(registry, undefined).count("ws", [
      reply({ id: "a1", model: "sonnet", at: "05:10:00", tokens: { input: 7, output: 1 } }),
    ]);
    const s = await scrape(registry);
    expect(sampleOf(s, tokens, { kind: "input" })).toBe(7);
    expect(s.filter((x) => x.name === cost)).toEqual([]);
  });

  it("makes no series for entries without usage", async () => {
    const registry = new Registry();
    new UsageMetrics(registry, prices).count("ws", [user("u1"), user("u2")]);
    expect((await scrape(registry)).filter((x) => x.name === tokens)).toEqual([]);
  });

  it(`caps models per workspace at ${MAX_USAGE_MODELS}: the rest count as "other"`, async () => {
    const registry = new Registry();
    const m = new UsageMetrics(registry, undefined);
    const n = MAX_USAGE_MODELS + 20;
    for (let i = 0; i < n; i++) {
      m.count("ws", [
        reply({ id: `a${i}`, model: `m${i}`, at: "05:00:00", tokens: { input: 1, output: 0 } }),
      ]);
    }
    const s = (await scrape(registry)).filter(
      (x) => x.name === tokens && x.labels.kind === "input",
    );
    expect(new Set(s.map((x) => x.labels.model)).size).toBe(MAX_USAGE_MODELS + 1);
    expect(sampleOf(s, tokens, { model: "other" })).toBe(20);
    expect(sampleOf(s, tokens, {})).toBe(n);
  });

  it(`caps workspaces at ${MAX_USAGE_WORKSPACES}: the rest count as "other"`, async () => {
    const registry = new Registry();
    const m = new UsageMetrics(registry, undefined);
    const n = MAX_USAGE_WORKSPACES + 5;
    for (let i = 0; i < n; i++) {
      m.count(`w${i}`, [
        reply({ id: "a", model: "m", at: "05:00:00", tokens: { input: 1, output: 0 } }),
      ]);
    }
    const s = (await scrape(registry)).filter((x) => x.name === tokens);
    expect(new Set(s.map((x) => x.labels.workspace)).size).toBe(MAX_USAGE_WORKSPACES + 1);
    expect(sampleOf(s, tokens, { workspace: "other" })).toBe(5);
  });
});
