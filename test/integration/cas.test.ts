/**
 * Optimistic concurrency over the wire: two agents racing on one session
 * with expected_leaf_id / expected_seq never silently fork it.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TreeNode } from "../../gen/sessiond/v1/session_pb.js";
import type { SessiondClient } from "../../src/client/index.js";
import { user } from "./support/entries.js";
import { expectCode, expectNoLeak } from "./support/errors.js";
import { client, readAll, serverUnderTest, uniqueWorkspace } from "./support/server.js";

let srv: Awaited<ReturnType<typeof serverUnderTest>>;
let a: SessiondClient;
let b: SessiondClient;
const ws = uniqueWorkspace("cas");

beforeAll(async () => {
  srv = await serverUnderTest();
  // Two clients, two HTTP/2 connections: two independent agents.
  a = client(srv.url, "grpc");
  b = client(srv.url, "connect");
});

afterAll(async () => {
  await srv?.close();
});

function childrenOf(nodes: readonly TreeNode[], id: string): string[] {
  return nodes.filter((n) => n.parentId === id).map((n) => n.id);
}

/** Exactly one of two settled calls succeeded; the other failed with ABORTED. */
function oneWinner<T>(results: PromiseSettledResult<T>[]): {
  winner: number;
  value: T;
  error: ConnectError;
} {
  const ok = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
  expect(ok, `exactly one writer wins: ${results.map((r) => r.status).join(", ")}`).toHaveLength(1);
  const winner = ok[0] as number;
  const loser = results[1 - winner] as PromiseRejectedResult;
  const error = ConnectError.from(loser.reason);
  expect(Code[error.code], error.rawMessage).toBe(Code[Code.Aborted]);
  expectNoLeak(error.rawMessage);
  return { winner, value: (results[winner] as PromiseFulfilledResult<T>).value, error };
}

describe("optimistic concurrency", () => {
  test("expected_leaf_id: of two racing writers exactly one wins, the other is ABORTED, no fork (20 rounds)", async () => {
    const id = (await a.store.createSession({ workspace: ws, title: "race-leaf" })).session
      ?.id as string;
    for (let round = 0; round < 20; round++) {
      // Both agents read the same leaf...
      const [sa, sb] = await Promise.all([
        a.session.getState({ workspace: ws, session: id }),
        b.store.getSession({ workspace: ws, session: id }),
      ]);
      const leaf = sa.state?.currentLeafId as string;
      expect(sb.session?.leafId).toBe(leaf);
      const head = sa.state?.headSeq as bigint;
      // ...and both append on top of it.
      const ids = [`A${round}`, `B${round}`];
      const results = await Promise.allSettled([
        a.session.append({
          workspace: ws,
          session: id,
          entries: [user(ids[0] as string, { id: ids[0] })],
          expectedLeafId: leaf,
        }),
        b.session.append({
          workspace: ws,
          session: id,
          entries: [user(ids[1] as string, { id: ids[1] })],
          expectedLeafId: leaf,
        }),
      ]);
      const { winner, value, error } = oneWinner(results);
      expect(error.rawMessage).toContain(id);
      expect(error.rawMessage).toContain(leaf);
      expect(value.entries[0]).toMatchObject({ id: ids[winner], parentId: leaf, seq: head + 1n });
      expect(value.headSeq).toBe(head + 1n);

      const tree = await a.session.getTree({ workspace: ws, session: id });
      expect(childrenOf(tree.nodes, leaf), `round ${round}: one child of ${leaf}`).toEqual([
        ids[winner],
      ]);
      expect(tree.nodes.some((n) => n.id === ids[1 - winner])).toBe(false);
      expect(tree.leafId).toBe(ids[winner]);
      expect(tree.headSeq).toBe(head + 1n);
    }
    // The whole session is one chain: no entry has two children.
    const tree = await a.session.getTree({ workspace: ws, session: id });
    expect(tree.nodes).toHaveLength(21);
    for (const n of tree.nodes) expect(childrenOf(tree.nodes, n.id).length).toBeLessThanOrEqual(1);
    expect(tree.nodes.every((n) => n.onCurrentPath)).toBe(true);
  });

  test("expected_seq: of two racing writers exactly one wins (10 rounds)", async () => {
    const id = (await a.store.createSession({ workspace: ws, title: "race-seq" })).session
      ?.id as string;
    for (let round = 0; round < 10; round++) {
      const seen = (
        await b.session.getEntries({ workspace: ws, session: id, afterSeq: 0n, limit: 1 })
      ).headSeq;
      const ids = [`A${round}`, `B${round}`];
      const results = await Promise.allSettled(
        [a, b].map((c, i) =>
          c.session.append({
            workspace: ws,
            session: id,
            entries: [
              user(ids[i] as string, { id: ids[i] }),
              user(`${ids[i]}-2`, { id: `${ids[i]}-2` }),
            ],
            expectedSeq: seen,
          }),
        ),
      );
      const { winner, value, error } = oneWinner(results);
      expect(error.rawMessage).toContain(String(seen));
      expect(value.entries.map((e) => e.seq)).toEqual([seen + 1n, seen + 2n]);
      const loserIds = [ids[1 - winner] as string, `${ids[1 - winner]}-2`];
      const log = await readAll(a, ws, id);
      expect(
        log.some((e) => loserIds.includes(e.id)),
        "the losing batch wrote nothing",
      ).toBe(false);
      expect(log.map((e) => Number(e.seq))).toEqual(
        Array.from({ length: Number(seen) + 2 }, (_, i) => i + 1),
      );
    }
  });

  test("a stale expected_seq or expected_leaf_id is ABORTED and writes nothing", async () => {
    const id = (await a.store.createSession({ workspace: ws, title: "stale" })).session
      ?.id as string;
    const first = await a.session.append({
      workspace: ws,
      session: id,
      entries: [user("one", { id: "one" })],
    });
    expect(first.headSeq).toBe(2n);

    const err = await expectCode(
      b.session.append({
        workspace: ws,
        session: id,
        entries: [user("late", { id: "late" }), user("late2", { id: "late2" })],
        expectedSeq: 1n,
      }),
      Code.Aborted,
      id,
    );
    expect(err.rawMessage).toContain("1");
    await expectCode(
      b.session.append({
        workspace: ws,
        session: id,
        entries: [user("late", { id: "late" })],
        expectedLeafId: "not-the-leaf",
      }),
      Code.Aborted,
      "not-the-leaf",
    );
    await expectCode(
      b.session.append({
        workspace: ws,
        session: id,
        entries: [user("late", { id: "late" })],
        expectedLeafId: "one",
        expectedSeq: 5n,
      }),
      Code.Aborted,
      id,
    );
    const log = await readAll(a, ws, id);
    expect(log.map((e) => e.id).slice(1)).toEqual(["one"]);
    expect((await a.store.getSession({ workspace: ws, session: id })).session?.headSeq).toBe(2n);

    // With the right expectations the same append goes through.
    const ok = await b.session.append({
      workspace: ws,
      session: id,
      entries: [user("late", { id: "late" })],
      expectedLeafId: "one",
      expectedSeq: 2n,
    });
    expect(ok.entries[0]).toMatchObject({ id: "late", parentId: "one", seq: 3n });
  });
});
