/**
 * GetUsage over any engine: the session's log rolled up (core/usage-rollup),
 * its subagent sessions found through the listing of each parent's
 * subagents, recursively, and every figure priced by the one rule
 * (core/usage-sums). The engines only read logs, so one code path serves
 * memory, JSONL and PostgreSQL alike.
 */
import { create } from "@bufbuild/protobuf";
import type { SessionMeta } from "../../gen/sessiond/v1/session_pb.js";
import {
  type GetUsageResponse,
  SubagentUsageSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";
import { isSessiondError } from "../core/errors.js";
import type { SessionLog } from "../core/session-log.js";
import { rollUpEntries, type SessionRollup, usageResponseOf } from "../core/usage-rollup.js";
import {
  addTotals,
  emptyTotals,
  NO_PRICES,
  type PriceTable,
  type Totals,
  totalsToProto,
} from "../core/usage-sums.js";
import type { SessionKey, StorageEngine } from "../storage/engine.js";
import type { StoreLimits } from "./limits.js";
import type { ListInput } from "./session-listing.js";

/**
 * What the roll-ups use of a SessionStore, said structurally so that
 * session-store.ts can import this file without an import cycle.
 */
export interface UsageStore {
  readonly engine: StorageEngine;
  readonly limits: StoreLimits;
  resolve(workspace: string | undefined, ref: string): Promise<SessionKey>;
  list(input: ListInput): Promise<{ sessions: SessionMeta[]; nextPageToken: string }>;
}

export interface UsageOptions {
  /** The operator's price table; default none (messages without a caller cost are unpriced). */
  prices?: PriceTable | undefined;
  /** Leave the subagent sessions out (a read per subagent). */
  skipSubagents?: boolean | undefined;
}

/** How deep subagents are followed: far beyond any spawn depth, a bound on a corrupt family. */
const MAX_SUBAGENT_DEPTH = 64;

/**
 * The usage of session `ref` of `workspace` (full id or unique prefix):
 * NOT_FOUND when it does not exist, DATA_LOSS when its log (or a
 * subagent's) is damaged.
 */
export async function sessionUsage(
  store: UsageStore,
  workspace: string | undefined,
  ref: string,
  opts: UsageOptions = {},
): Promise<GetUsageResponse> {
  const key = await store.resolve(workspace, ref);
  const prices = opts.prices ?? NO_PRICES;
  const r = rollUp(await store.engine.load(key));
  const tree = r.tree.price(prices);
  const response = usageResponseOf(key.sessionId, r, prices);
  const subagentsTotal = emptyTotals();
  if (opts.skipSubagents !== true) {
    const seen = new Set([key.sessionId]);
    for (const child of await subagentsOf(store, key)) {
      const usage = await familyTotals(store, child.key, prices, seen, 1);
      if (usage === undefined) continue;
      addTotals(subagentsTotal, usage);
      response.subagents.push(
        create(SubagentUsageSchema, {
          sessionId: child.key.sessionId,
          agentType: child.agentType,
          usage: totalsToProto(usage),
        }),
      );
    }
    response.subagentsTotal = totalsToProto(subagentsTotal);
  }
  const total = emptyTotals();
  addTotals(total, tree);
  addTotals(total, subagentsTotal);
  response.total = totalsToProto(total);
  return response;
}

/** A session's whole tree plus its subagents', recursively; undefined when it is gone. */
async function familyTotals(
  store: UsageStore,
  key: SessionKey,
  prices: PriceTable,
  seen: Set<string>,
  depth: number,
): Promise<Totals | undefined> {
  if (seen.has(key.sessionId) || depth > MAX_SUBAGENT_DEPTH) return undefined;
  seen.add(key.sessionId);
  let totals: Totals;
  try {
    totals = rollUp(await store.engine.load(key)).tree.price(prices);
  } catch (err) {
    // Deleted since it was listed: no longer a subagent.
    if (isSessiondError(err, "NOT_FOUND")) return undefined;
    throw err;
  }
  for (const child of await subagentsOf(store, key)) {
    const t = await familyTotals(store, child.key, prices, seen, depth + 1);
    if (t !== undefined) addTotals(totals, t);
  }
  return totals;
}

/** The direct subagents of a session, in creation order, through the listing. */
async function subagentsOf(
  store: UsageStore,
  key: SessionKey,
): Promise<Array<{ key: SessionKey; agentType: string }>> {
  const out: Array<{ key: SessionKey; agentType: string }> = [];
  let pageToken = "";
  do {
    const page = await store.list({
      workspace: key.workspace,
      parentSessionId: key.sessionId,
      order: "oldest",
      pageSize: store.limits.maxPageSize,
      pageToken,
    });
    for (const m of page.sessions) {
      out.push({
        key: { workspace: key.workspace, sessionId: m.id },
        agentType: m.agentType ?? "",
      });
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return out;
}

/** A log rolled up (core/usage-rollup.ts). */
function rollUp(log: SessionLog): SessionRollup {
  return rollUpEntries(log.entries(), log.leafId, (id) => log.get(id));
}
