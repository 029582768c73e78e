import type { Counter, Registry } from "prom-client";
import { Counter as PromCounter } from "prom-client";
import type { Entry, Message } from "../../../gen/sessiond/v1/entry_pb.js";
import { amountUnits } from "../../core/cost.js";
import { timestampMillis } from "../../core/entry.js";
import { billedUsage } from "../../core/usage-rollup.js";
import { type PriceTable, priceRowFor } from "../../core/usage-sums.js";
import { CounterSeries } from "./metrics.js";

const byRegistry = new WeakMap<Registry, UsageMetrics>();

/**
 * The usage counters of a registry, made on first use: a ServerMetrics
 * given to several servers registers them once (with the first server's
 * price table).
 */
export function usageMetricsOf(registry: Registry, prices: PriceTable | undefined): UsageMetrics {
  let m = byRegistry.get(registry);
  if (m === undefined) {
    m = new UsageMetrics(registry, prices);
    byRegistry.set(registry, m);
  }
  return m;
}

/** Distinct workspaces with series of their own; the rest count as "other". */
export const MAX_USAGE_WORKSPACES = 1000;
/** Distinct models per workspace with series of their own; the rest count as "other". */
export const MAX_USAGE_MODELS = 100;

const KINDS = ["input", "output", "cache_read", "cache_write", "reasoning"] as const;
const UNITS_PER_AMOUNT = 1e12;

/** The series of one (workspace, model): a counter per token kind, one per currency. */
interface ModelSeries {
  readonly tokens: readonly CounterSeries[];
  readonly cost: Map<string, CounterSeries>;
  readonly labels: { workspace: string; model: string };
}

/**
 * Token and cost counters of acknowledged appends, by workspace and model:
 * sessiond_usage_tokens_total{workspace,model,kind} and
 * sessiond_usage_cost_total{workspace,model,currency}. Model names come
 * from callers, so the labels are capped: MAX_USAGE_WORKSPACES workspaces,
 * MAX_USAGE_MODELS models in each, the rest under "other". An entry
 * without usage costs one property test; the series objects are made once.
 * Costs: the caller's, or priced from the price table by the message's
 * model and time (per message; GetUsage's exact sums round per group).
 */
export class UsageMetrics {
  private readonly tokens: Counter<"workspace" | "model" | "kind">;
  private readonly cost: Counter<"workspace" | "model" | "currency">;
  private readonly workspaces = new Map<string, Map<string, ModelSeries>>();

  constructor(
    registry: Registry,
    private readonly prices: PriceTable | undefined,
  ) {
    const registers = [registry];
    this.tokens = new PromCounter({
      name: "sessiond_usage_tokens_total",
      help: `Tokens of appended assistant messages by workspace, model and kind (input, output, cache_read, cache_write, reasoning: a part of output); at most ${MAX_USAGE_WORKSPACES} workspaces and ${MAX_USAGE_MODELS} models per workspace, the rest as "other".`,
      labelNames: ["workspace", "model", "kind"],
      registers,
    });
    this.cost = new PromCounter({
      name: "sessiond_usage_cost_total",
      help: "Cost of appended assistant messages by workspace, model and currency: set by the caller, or priced from --prices (others are not counted).",
      labelNames: ["workspace", "model", "currency"],
      registers,
    });
  }

  /** Counts the usage of the entries an append wrote (`AppendResult.write`). */
  readonly count = (workspace: string, written: readonly Entry[]): void => {
    for (const e of written) {
      const usage = billedUsage(e);
      if (usage === undefined) continue;
      const model = (e.kind.value as Message).model ?? "";
      const s = this.series(workspace, model);
      const amounts = [
        usage.inputTokens,
        usage.outputTokens,
        usage.cacheReadTokens,
        usage.cacheWriteTokens,
        usage.reasoningTokens,
      ];
      for (let i = 0; i < amounts.length; i++) {
        const n = amounts[i] as bigint;
        if (n > 0n) (s.tokens[i] as CounterSeries).inc(Number(n));
      }
      if (usage.cost !== undefined) {
        this.addCost(s, usage.cost.currency, amountUnits(usage.cost.amount));
        continue;
      }
      const row =
        this.prices === undefined
          ? undefined
          : priceRowFor(this.prices, model, timestampMillis(e.timestamp));
      if (row === undefined) continue;
      const perMillion =
        usage.inputTokens * row.inputPerMTok +
        usage.outputTokens * row.outputPerMTok +
        usage.cacheReadTokens * row.cacheReadPerMTok +
        usage.cacheWriteTokens * row.cacheWritePerMTok;
      this.addCost(s, row.currency, perMillion / 1_000_000n);
    }
  };

  private addCost(s: ModelSeries, currency: string, units: bigint): void {
    if (units === 0n) return;
    let c = s.cost.get(currency);
    if (c === undefined) {
      c = new CounterSeries(this.cost, { ...s.labels, currency });
      s.cost.set(currency, c);
    }
    c.inc(Number(units) / UNITS_PER_AMOUNT);
  }

  private series(workspaceIn: string, modelIn: string): ModelSeries {
    let workspace = workspaceIn;
    let models = this.workspaces.get(workspace);
    if (models === undefined) {
      if (this.workspaces.size >= MAX_USAGE_WORKSPACES) workspace = "other";
      models = this.workspaces.get(workspace);
      if (models === undefined) {
        models = new Map();
        this.workspaces.set(workspace, models);
      }
    }
    let model = modelIn === "" ? "unknown" : modelIn;
    let s = models.get(model);
    if (s === undefined) {
      if (models.size >= MAX_USAGE_MODELS) model = "other";
      s = models.get(model);
      if (s === undefined) {
        const labels = { workspace, model };
        s = {
          labels,
          tokens: KINDS.map((kind) => new CounterSeries(this.tokens, { ...labels, kind })),
          cost: new Map(),
        };
        models.set(model, s);
      }
    }
    return s;
  }
}
