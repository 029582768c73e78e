import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
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
} from "../../test/support/usage-scenario.js";
import { isSessiondError } from "../core/errors.js";
import { parsePriceTable } from "../core/usage-sums.js";
import { SessionStore } from "./session-store.js";
import { sessionUsage } from "./usage.js";

/**
 * GetUsage's roll-ups on every engine equal the sums computed by hand over
 * the entries of the test: a tree with abandoned branches, a redacted
 * message, subagents two levels deep.
 */

const prices = parsePriceTable(SCENARIO_PRICES);
const ALL = ["a1", "a2", "a3", "a4", "a5"];

//   sess ─ c1 (explorer) ─ g1
//        └ c2 (critic)
const C1 = [
  subagentReply("x1", "05:40:00", { input: 70, output: 7 }),
  subagentReply("x2", "06:40:00", { input: 1, output: 1 }, { amount: "0.25", currency: "USD" }),
];
const G1 = [subagentReply("y1", "06:50:00", { input: 11, output: 3, cacheWrite: 9 })];
const C2: Reply[] = [
  { id: "z1", model: "mystery", at: "07:00:00", tokens: { input: 5, output: 5 } },
  subagentReply("z2", "07:10:00", { input: 13, output: 2, cacheRead: 100 }),
];

describe.each(STORE_ENGINE_FACTORIES)("GetUsage on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;

  beforeEach(async () => {
    fixture = await factory.open();
    let clock = Date.parse("2026-03-04T05:00:00Z");
    const now = () => {
      clock += 1000;
      return new Date(clock);
    };
    store = new SessionStore(fixture.engine, { now });
    await store.create({ sessionId: "sess" });
    const session = await store.open(undefined, "sess");
    for (const step of scenarioSteps()) {
      if ("append" in step) await session.append(step.append);
      else if ("rewind" in step) await session.rewind(step.rewind);
      else await session.redact(step.redact, { by: "test" });
    }
    const family: Array<[string, string, string, Reply[]]> = [
      ["c1", "sess", "explorer", C1],
      ["g1", "c1", "reader", G1],
      ["c2", "sess", "critic", C2],
    ];
    for (const [id, parent, agentType, replies] of family) {
      await store.create({ sessionId: id, parentSessionId: parent, agentType });
      const s = await store.open(undefined, id);
      await s.append([user(`${id}-ask`), ...replies.map((r) => reply(r))]);
    }
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("the tree, the current path and every branch equal the hand-made sums", async () => {
    const u = await sessionUsage(store, undefined, "sess", { prices });
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
    expect(u.contextTokens).toBe(BigInt(SCENARIO_CONTEXT_TOKENS));
    const session = await store.open(undefined, "sess");
    expect(u.headSeq).toBe(BigInt((await session.tree()).headSeq));
  });

  it("subagents two levels deep: each with its own subagents, in creation order, and the totals", async () => {
    const u = await sessionUsage(store, undefined, "sess", { prices });
    expect(u.subagents.map((s) => [s.sessionId, s.agentType, plainTotals(s.usage)])).toEqual([
      ["c1", "explorer", sumReplies([...C1, ...G1])],
      ["c2", "critic", sumReplies(C2)],
    ]);
    expect(plainTotals(u.subagentsTotal)).toEqual(sumReplies([...C1, ...G1, ...C2]));
    expect(plainTotals(u.total)).toEqual(
      sumReplies([...scenarioReplies(ALL), ...C1, ...G1, ...C2]),
    );
  });

  it("a subagent's own GetUsage counts its subagent", async () => {
    const u = await sessionUsage(store, undefined, "c1", { prices });
    expect(plainTotals(u.tree)).toEqual(sumReplies(C1));
    expect(u.subagents.map((s) => s.sessionId)).toEqual(["g1"]);
    expect(plainTotals(u.total)).toEqual(sumReplies([...C1, ...G1]));
  });

  it("skip_subagents leaves subagents and their total empty, total = tree", async () => {
    const u = await sessionUsage(store, undefined, "sess", { prices, skipSubagents: true });
    expect(u.subagents).toEqual([]);
    expect(u.subagentsTotal).toBeUndefined();
    expect(plainTotals(u.total)).toEqual(expectedTotals(ALL));
  });

  it("store.usage prices with the store's price table (openStore({ prices }))", async () => {
    const priced = new SessionStore(fixture.engine, { prices });
    const u = await priced.usage(undefined, "sess", { skipSubagents: true });
    expect(plainTotals(u.tree)).toEqual(expectedTotals(ALL));
    expect(
      plainTotals((await store.usage(undefined, "sess", { skipSubagents: true })).tree),
    ).toEqual(
      plainTotals((await sessionUsage(store, undefined, "sess", { skipSubagents: true })).tree),
    );
  });

  it("without a price table every message without a caller cost is unpriced", async () => {
    const u = await sessionUsage(store, undefined, "sess", { skipSubagents: true });
    const t = plainTotals(u.tree);
    expect(t.unpriced).toBe(3);
    expect(t.cost).toEqual([
      ["EUR", "0.5"],
      ["USD", "0.01"],
    ]);
  });

  it("a fork counts only its own messages; ForkSession's copies are in forked, billed in the source", async () => {
    await store.fork(undefined, "sess", { sessionId: "fk", entry: "a4" });
    const fk = await store.open(undefined, "fk");
    const own: Reply = { id: "f1", model: "big", at: "08:00:00", tokens: { input: 9, output: 4 } };
    await fk.append([user("f-ask"), reply(own)]);
    const u = await sessionUsage(store, undefined, "fk", { prices });
    expect(plainTotals(u.tree)).toEqual(sumReplies([own]));
    expect(plainTotals(u.currentPath)).toEqual(sumReplies([own]));
    expect(plainTotals(u.total)).toEqual(sumReplies([own]));
    // a1 (redacted, its usage kept), a3 and a4: the path root -> a4 of the source.
    expect(plainTotals(u.forked)).toEqual(expectedTotals(["a1", "a3", "a4"]));
    // Rewound into the copies, a branch of copies counts nothing either.
    await fk.rewind("a3");
    const again = await sessionUsage(store, undefined, "fk", { prices });
    expect(again.branches.map((b) => [b.leafEntryId, plainTotals(b.usage)])).toEqual([
      ["a3", sumReplies([])],
      ["f1", sumReplies([own])],
    ]);
    // The source is as it was.
    const src = await sessionUsage(store, undefined, "sess", { prices, skipSubagents: true });
    expect(plainTotals(src.tree)).toEqual(expectedTotals(ALL));
    expect(plainTotals(src.forked)).toEqual(sumReplies([]));
  });

  it("a fork of a session's root copies nothing: every message appended to it counts", async () => {
    const root = (await store.engine.load(await store.resolve(undefined, "c2"))).root.id;
    await store.fork(undefined, "c2", { sessionId: "fk0", entry: root });
    const fk = await store.open(undefined, "fk0");
    const own: Reply = { id: "f2", model: "big", at: "08:10:00", tokens: { input: 3, output: 2 } };
    await fk.append([user("f-ask"), reply(own)]);
    const u = await sessionUsage(store, undefined, "fk0", { prices });
    expect(plainTotals(u.tree)).toEqual(sumReplies([own]));
    expect(plainTotals(u.forked)).toEqual(sumReplies([]));
  });

  it("an unknown session is NOT_FOUND naming it", async () => {
    const err = await sessionUsage(store, undefined, "nosuch").catch((e: unknown) => e);
    expect(isSessiondError(err, "NOT_FOUND")).toBe(true);
    expect(String(err)).toContain("nosuch");
  });
});
