/**
 * Retention on every engine: a policy removes exactly what it says (with
 * subagents), a dry run removes nothing, a session written to after it was
 * judged is kept (compare-and-delete on its head seq), an append in flight
 * is never lost under the sweep, and watchers of the workspace see each
 * removal.
 */
import { afterEach, describe, expect, it } from "vitest";
import { expectCode, user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { unavailable } from "../core/errors.js";
import { expireSessions } from "./retention.js";
import { SessionStore } from "./session-store.js";

const DAY = 86_400_000;
const T0 = Date.parse("2026-06-01T00:00:00.000Z");

describe.each(STORE_ENGINE_FACTORIES)("retention ($name)", (factory) => {
  let fixture: EngineFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });
  let clock = T0;
  const open = async () => {
    fixture = await factory.open();
    clock = T0;
    return new SessionStore(fixture.engine, { now: () => new Date(clock) });
  };
  const ids = async (store: SessionStore, parentSessionId?: string) =>
    (await store.list({ parentSessionId, pageSize: 100 })).sessions.map((s) => s.id).sort();

  /** old-1 (40 days), old-2 (35 days, with a subagent tree), mid (10 days), new (today). */
  async function populate(store: SessionStore) {
    for (const [id, daysAgo] of [
      ["old-1", 40],
      ["old-2", 35],
      ["mid-1", 10],
      ["new-1", 0],
    ] as const) {
      clock = T0 - daysAgo * DAY;
      await store.create({ sessionId: id });
      await (await store.open(undefined, id)).append(user(`${id}-u`));
    }
    clock = T0 - 35 * DAY;
    await store.create({ sessionId: "sub-a", parentSessionId: "old-2", agentType: "x" });
    await store.create({ sessionId: "sub-b", parentSessionId: "sub-a", agentType: "x" });
    clock = T0;
  }

  it("max age removes the sessions not updated for that long, each with its subagents", async () => {
    const store = await open();
    await populate(store);
    const report = await expireSessions(store, "default", { maxAgeMs: 30 * DAY }, { nowMs: T0 });
    expect(report.expired.map((e) => [e.id, e.reason, [...e.removed].sort()])).toEqual([
      ["old-2", "max-age", ["old-2", "sub-a", "sub-b"]],
      ["old-1", "max-age", ["old-1"]],
    ]);
    expect(report.changed).toEqual([]);
    expect(await ids(store)).toEqual(["mid-1", "new-1"]);
    expect(await ids(store, "old-2")).toEqual([]);
    await expectCode(store.get(undefined, "sub-b"), "NOT_FOUND");
  });

  it("keep newest keeps the N most recently updated; an old session written to today counts as new", async () => {
    const store = await open();
    await populate(store);
    await (await store.open(undefined, "old-1")).append(user("today"));
    const report = await expireSessions(store, "default", { keepNewest: 2 }, { nowMs: T0 });
    expect(report.expired.map((e) => e.id).sort()).toEqual(["mid-1", "old-2"]);
    expect(await ids(store)).toEqual(["new-1", "old-1"]);
  });

  it("a dry run judges the same and removes nothing", async () => {
    const store = await open();
    await populate(store);
    const report = await expireSessions(
      store,
      "default",
      { maxAgeMs: 30 * DAY },
      { nowMs: T0, dryRun: true },
    );
    expect(report.expired.map((e) => e.id).sort()).toEqual(["old-1", "old-2"]);
    expect(report.expired.every((e) => e.removed.length === 0)).toBe(true);
    expect(await ids(store)).toEqual(["mid-1", "new-1", "old-1", "old-2"]);
  });

  it("compare-and-delete: a session written to since it was judged is ABORTED and kept whole", async () => {
    const store = await open();
    await populate(store);
    const judged = await store.get(undefined, "old-2");
    await (await store.open(undefined, "old-2")).append(user("late"));
    await expectCode(
      store.delete(undefined, "old-2", {
        includeSubagents: true,
        ifHeadSeq: Number(judged.headSeq),
      }),
      "ABORTED",
      `expected head seq ${judged.headSeq}, but it is ${judged.headSeq + 1n}`,
    );
    expect(await ids(store)).toContain("old-2");
    expect(await ids(store, "old-2")).toEqual(["sub-a"]);
    const gone = await store.delete(undefined, "old-2", {
      includeSubagents: true,
      ifHeadSeq: Number(judged.headSeq) + 1,
    });
    expect(gone).toEqual(["old-2", "sub-a", "sub-b"]);
    // Without subagents, compare-and-delete removes the session alone.
    await store.create({ sessionId: "p2" });
    await store.create({ sessionId: "c2", parentSessionId: "p2", agentType: "x" });
    expect(await store.delete(undefined, "p2", { ifHeadSeq: 1 })).toEqual(["p2"]);
    expect(await ids(store, "p2")).toEqual(["c2"]);
    await expectCode(
      store.delete(undefined, "mid-1", { ifHeadSeq: 0 }),
      "INVALID_ARGUMENT",
      "expected_head_seq 0",
    );
  });

  it("an append in flight during a sweep is acknowledged and kept: the session is never removed under it", async () => {
    const store = await open();
    await populate(store);
    const session = await store.open(undefined, "old-1");
    const appending = session.append(user("in-flight"));
    const report = await expireSessions(store, "default", { maxAgeMs: 30 * DAY }, { nowMs: T0 });
    await appending;
    // Judged before the append landed: its delete found the head moved (kept, "changed");
    // judged after: it is no longer old. Either way it stays, with the entry.
    expect(report.expired.map((e) => e.id)).not.toContain("old-1");
    const page = await session.entries(0);
    expect(page.entries.map((e) => e.id)).toContain("in-flight");
    expect((await store.get(undefined, "old-1")).headSeq).toBe(3n);
    expect(await ids(store)).toEqual(["mid-1", "new-1", "old-1"]);
  });

  it("sweeps the workspace it is given, over as many listing pages as it takes", async () => {
    fixture = await factory.open();
    clock = T0 - 40 * DAY;
    const store = new SessionStore(fixture.engine, {
      now: () => new Date(clock),
      limits: { maxPageSize: 2, defaultPageSize: 2 },
    });
    for (let i = 0; i < 5; i++) await store.create({ workspace: "team", sessionId: `t${i}` });
    await store.create({ sessionId: "d0" });
    clock = T0;
    const report = await expireSessions(store, "team", { maxAgeMs: 30 * DAY }, { nowMs: T0 });
    expect(report.expired.map((e) => e.id).sort()).toEqual(["t0", "t1", "t2", "t3", "t4"]);
    expect((await store.list({ workspace: "team" })).sessions).toEqual([]);
    expect((await store.list({})).sessions.map((s) => s.id)).toEqual(["d0"]);
  });

  it("a session written to, or deleted, between judging and removing: kept and reported, or skipped", async () => {
    fixture = await factory.open();
    /** Does `race` to the session right before each delete, as another client would. */
    class RacyStore extends SessionStore {
      race: "append" | "delete" | "fail" = "append";
      override async delete(
        ws: string | undefined,
        ref: string,
        opts: Parameters<SessionStore["delete"]>[2] = {},
      ): Promise<string[]> {
        if (this.race === "fail") throw unavailable("the disk went away");
        if (this.race === "append") await (await this.open(ws, ref)).append(user(`late-${ref}`));
        else await super.delete(ws, ref, { includeSubagents: true });
        return super.delete(ws, ref, opts);
      }
    }
    clock = T0 - 40 * DAY;
    const store = new RacyStore(fixture.engine, { now: () => new Date(clock) });
    await store.create({ sessionId: "old-a" });
    await store.create({ sessionId: "old-b" });
    clock = T0;
    const raced = await expireSessions(store, "default", { maxAgeMs: 30 * DAY }, { nowMs: T0 });
    expect(raced.expired).toEqual([]);
    expect([...raced.changed].sort()).toEqual(["old-a", "old-b"]);
    expect((await store.get(undefined, "old-a")).headSeq).toBe(2n);
    store.race = "delete";
    clock = T0 + 40 * DAY;
    const gone = await expireSessions(store, "default", { maxAgeMs: 30 * DAY }, { nowMs: clock });
    expect(gone.expired).toEqual([]);
    expect(gone.changed).toEqual([]);
    expect((await store.list({})).sessions).toEqual([]);
    // Any other failure ends the sweep with it (the server logs it and tries again later).
    await store.create({ sessionId: "old-c" });
    store.race = "fail";
    await expectCode(
      expireSessions(store, "default", { maxAgeMs: 1 }, { nowMs: clock + 40 * DAY }),
      "UNAVAILABLE",
      "the disk went away",
    );
  });

  it("watchers of the workspace see a DELETED event for every session removed", async () => {
    const store = await open();
    await populate(store);
    const ac = new AbortController();
    const seen: string[] = [];
    const watch = (async () => {
      try {
        for await (const ev of store.watchSessions({ signal: ac.signal, heartbeatMs: 60_000 })) {
          if (ev.type === "deleted") seen.push(ev.sessionId);
          if (seen.length === 4) break;
        }
      } catch {
        // aborted
      }
    })();
    await new Promise((r) => setTimeout(r, 50));
    await expireSessions(store, "default", { maxAgeMs: 30 * DAY }, { nowMs: T0 });
    const timer = setTimeout(() => ac.abort(), 5000);
    await watch;
    clearTimeout(timer);
    expect(seen.sort()).toEqual(["old-1", "old-2", "sub-a", "sub-b"]);
  });
});
