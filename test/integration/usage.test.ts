/**
 * GetUsage over a real server started with `--prices`, on both fronts
 * (native gRPC by grpc-js, Connect by connect-node; both run the handler of
 * src/server/rpc): the scenario of test/support/usage-scenario.ts built
 * through the RPCs, with subagents two levels deep, answers the sums
 * computed by hand; a bad price table stops `serve` naming the row; and the
 * CLI's `sessiond usage`.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { SessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { user } from "../support/fixtures.js";
import { getH1, parseScrape, sampleOf } from "../support/prometheus.js";
import {
  expectedTotals,
  plainTotals,
  type Reply,
  reply,
  SCENARIO_CONTEXT_TOKENS,
  SCENARIO_PRICES,
  scenarioReplies,
  scenarioSteps,
  subagentReply,
  sumReplies,
} from "../support/usage-scenario.js";
import {
  client,
  EXTERNAL,
  serverUnderTest,
  skipExternal,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";

const ALL = ["a1", "a2", "a3", "a4", "a5"];
const SUB = [subagentReply("x1", "05:40:00", { input: 70, output: 7 })];
const GRAND = [
  subagentReply("y1", "06:50:00", { input: 11, output: 3 }, { amount: "0.02", currency: "USD" }),
];

const dir = mkdtempSync(join(tmpdir(), "sessiond-usage-"));
const pricesFile = join(dir, "prices.json");
writeFileSync(pricesFile, JSON.stringify(SCENARIO_PRICES));

let srv: Awaited<ReturnType<typeof serverUnderTest>>;

if (EXTERNAL) skipExternal("GetUsage needs a server started with --prices");

beforeAll(async () => {
  if (!EXTERNAL) srv = await serverUnderTest({ args: ["--prices", pricesFile] });
});

afterAll(async () => {
  await srv?.close();
});

/** The scenario's session and its family, made through the RPCs. */
async function buildScenario(c: SessiondClient, ws: string): Promise<void> {
  await c.store.createSession({ workspace: ws, sessionId: "sess" });
  for (const step of scenarioSteps()) {
    if ("append" in step) {
      await c.session.append({ workspace: ws, session: "sess", entries: step.append });
    } else if ("rewind" in step) {
      await c.session.rewind({ workspace: ws, session: "sess", target: step.rewind });
    } else {
      await c.session.redactEntries({
        workspace: ws,
        session: "sess",
        entryIds: step.redact,
        by: "t",
      });
    }
  }
  const family: Array<[string, string, Reply[]]> = [
    ["c1", "sess", SUB],
    ["g1", "c1", GRAND],
  ];
  for (const [id, parent, replies] of family) {
    await c.store.createSession({
      workspace: ws,
      sessionId: id,
      parentSessionId: parent,
      agentType: "helper",
    });
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [user(`${id}-ask`), ...replies.map((r) => reply(r))],
    });
  }
}

describe.skipIf(EXTERNAL).each(["grpc", "connect"] as const)("GetUsage over %s", (protocol) => {
  test("answers the hand-made sums: tree, path, branches, subagents, total, context", async () => {
    const c = client(srv.url, protocol);
    const ws = uniqueWorkspace("usage");
    await buildScenario(c, ws);
    const u = await c.session.getUsage({ workspace: ws, session: "sess" });
    expect(u.sessionId).toBe("sess");
    expect(plainTotals(u.tree)).toEqual(expectedTotals(ALL));
    expect(plainTotals(u.currentPath)).toEqual(expectedTotals(["a1", "a3", "a4"]));
    expect(
      u.branches.map((b) => [b.leafEntryId, b.current, b.forkEntryId, plainTotals(b.usage)]),
    ).toEqual([
      ["u5", true, "", expectedTotals(["a1", "a3", "a4"])],
      ["a2", false, "a1", expectedTotals(["a2"])],
      ["a5", false, "u3", expectedTotals(["a5"])],
    ]);
    expect(u.subagents.map((s) => [s.sessionId, s.agentType, plainTotals(s.usage)])).toEqual([
      ["c1", "helper", sumReplies([...SUB, ...GRAND])],
    ]);
    expect(plainTotals(u.total)).toEqual(sumReplies([...scenarioReplies(ALL), ...SUB, ...GRAND]));
    expect(u.contextTokens).toBe(BigInt(SCENARIO_CONTEXT_TOKENS));
    expect(u.headSeq).toBeGreaterThan(0n);
  });

  test("the usage counters on /metrics count what the appends acknowledged", async () => {
    const c = client(srv.url, protocol);
    const ws = uniqueWorkspace("usage-metrics");
    await buildScenario(c, ws);
    const res = await getH1(srv.url, "/metrics");
    expect(res.status).toBe(200);
    const s = parseScrape(res.body);
    const every = [...scenarioReplies(ALL), ...SUB, ...GRAND];
    const sonnet = sumReplies(every.filter((r) => r.model === "sonnet"));
    const mystery = sumReplies(every.filter((r) => r.model === "mystery"));
    const tokens = (model: string, kind: string) =>
      sampleOf(s, "sessiond_usage_tokens_total", { workspace: ws, model, kind });
    expect([
      tokens("sonnet", "input"),
      tokens("sonnet", "output"),
      tokens("sonnet", "cache_read"),
      tokens("sonnet", "cache_write"),
      tokens("sonnet", "reasoning"),
      tokens("mystery", "input"),
    ]).toEqual([
      sonnet.input,
      sonnet.output,
      sonnet.cacheRead,
      sonnet.cacheWrite,
      sonnet.reasoning,
      mystery.input,
    ]);
    for (const [currency, amount] of sonnet.cost) {
      const counted = sampleOf(s, "sessiond_usage_cost_total", {
        workspace: ws,
        model: "sonnet",
        currency,
      });
      expect(counted).toBeCloseTo(Number(amount), 9);
    }
    expect(sampleOf(s, "sessiond_usage_cost_total", { workspace: ws, model: "mystery" })).toBe(0);
  });

  test("an unknown session is NOT_FOUND naming it", async () => {
    const c = client(srv.url, protocol);
    const err = await c.session
      .getUsage({ workspace: uniqueWorkspace("usage"), session: "nosuch" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect((err as ConnectError).rawMessage).toContain("nosuch");
  });
});

describe.skipIf(EXTERNAL)("sessiond usage and serve --prices", () => {
  test("the CLI prints the table, and --json the response", async () => {
    const c = client(srv.url);
    const ws = uniqueWorkspace("usage-cli");
    await buildScenario(c, ws);
    const text = await runCli(["usage", "sess", "--server", srv.url, "--workspace", ws]);
    expect(text.code, text.stderr).toBe(0);
    const tree = expectedTotals(ALL);
    const treeLine = text.stdout.split("\n").find((l) => l.startsWith("tree"));
    expect(treeLine?.split(/\s+/).slice(1, 7)).toEqual(
      [tree.messages, tree.input, tree.output, tree.cacheRead, tree.cacheWrite, tree.reasoning].map(
        String,
      ),
    );
    expect(text.stdout).toContain("branch a2 from a1");
    expect(text.stdout).toContain("subagent c1 (helper)");
    expect(text.stdout).toContain(`context: about ${SCENARIO_CONTEXT_TOKENS} tokens`);

    const json = await runCli(["usage", "sess", "--server", srv.url, "--workspace", ws, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      tree: { cost: Array<{ amount: string; currency: string }> };
    };
    expect(parsed.tree.cost.map((x) => [x.currency, x.amount])).toEqual(tree.cost);
  });

  test("a price table with a bad row stops serve, naming the row", async () => {
    const bad = join(dir, "bad-prices.json");
    writeFileSync(
      bad,
      JSON.stringify({
        prices: [
          SCENARIO_PRICES.prices[0],
          { ...SCENARIO_PRICES.prices[1], from: "2026-03-04T06:30:00Z" },
        ],
      }),
    );
    const err = await startSessiond({ args: ["--prices", bad], timeoutMs: 20_000 }).then(
      async (p) => {
        await p.stop();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(String(err)).toContain('price table row 1 (model "sonnet")');
    expect(String(err)).toContain("not a whole UTC hour");
  });
});
