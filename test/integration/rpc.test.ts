/**
 * Every RPC of StoreService and SessionService, over each protocol of the
 * Connect client (gRPC, Connect, gRPC-Web), against the real `sessiond serve`
 * process (or SESSIOND_URL). Each protocol works in its own workspace.
 */
import { create } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { EntryKind, Health, View } from "../../gen/sessiond/v1/session_pb.js";
import type { WatchEntriesResponse } from "../../gen/sessiond/v1/session_service_pb.js";
import {
  SessionEventType,
  SortOrder,
  type WatchSessionsResponse,
} from "../../gen/sessiond/v1/store_service_pb.js";
import type { SessiondClient } from "../../src/client/index.js";
import {
  assistant,
  compaction,
  custom,
  label,
  modelChange,
  retitle,
  textOf,
  thinking,
  toolResult,
  user,
} from "./support/entries.js";
import { expectCode } from "./support/errors.js";
import {
  client,
  PROTOCOLS,
  rawStoreClient,
  readAll,
  SESSION_ID_RE,
  serverUnderTest,
  timeOfSessionId,
  uniqueWorkspace,
} from "./support/server.js";
import { collect } from "./support/stream.js";

let srv: Awaited<ReturnType<typeof serverUnderTest>>;

beforeAll(async () => {
  srv = await serverUnderTest();
});

afterAll(async () => {
  await srv?.close();
});

describe.each(PROTOCOLS)("every RPC over %s", (protocol) => {
  let c: SessiondClient;
  let ws: string;

  beforeAll(() => {
    c = client(srv.url, protocol);
    ws = uniqueWorkspace(`rpc-${protocol}`);
  });

  /** A new session in this protocol's workspace; returns its id and root entry id. */
  async function newSession(title = "t"): Promise<{ id: string; root: string }> {
    const { session } = await c.store.createSession({ workspace: ws, title });
    if (session === undefined) throw new Error("no session in CreateSession response");
    return { id: session.id, root: session.leafId };
  }

  test("CreateSession: generated id, client id, idempotent create, invalid ids", async () => {
    // Server-generated id (a bare client, no id interceptor).
    const raw = rawStoreClient(srv.url, protocol);
    const gen = await raw.createSession({ workspace: ws, title: "generated", cwd: "/w" });
    expect(gen.created).toBe(true);
    const meta = gen.session;
    expect(meta?.id).toMatch(SESSION_ID_RE);
    expect(Math.abs(timeOfSessionId(meta?.id ?? "") - Date.now())).toBeLessThan(120_000);
    expect(meta).toMatchObject({
      workspace: ws,
      title: "generated",
      cwd: "/w",
      headSeq: 1n,
      entryCount: 1n,
      messageCount: 0n,
      spawnDepth: 0,
      health: Health.OK,
    });
    expect(meta?.leafId).not.toBe("");
    expect(meta?.createdAt).toBeDefined();

    // The sessiond client assigns the id itself (same format) so a retried create is idempotent.
    const assigned = await c.store.createSession({ workspace: ws });
    expect(assigned.session?.id).toMatch(SESSION_ID_RE);

    // Client-chosen id, then an identical create (idempotent) and a conflicting one.
    const params = {
      workspace: ws,
      sessionId: "agent-A_1",
      title: "mine",
      cwd: "/src/x",
      metadata: { team: "blue", n: 1 },
    };
    const mine = await c.store.createSession(params);
    expect(mine.created).toBe(true);
    expect(mine.session?.id).toBe("agent-A_1");
    expect(mine.session?.metadata).toEqual({ team: "blue", n: 1 });
    const again = await c.store.createSession(params);
    expect(again.created).toBe(false);
    expect(again.session?.id).toBe("agent-A_1");
    expect(again.session?.leafId).toBe(mine.session?.leafId);
    expect(again.session?.headSeq).toBe(1n);
    await expectCode(
      c.store.createSession({ ...params, title: "other" }),
      Code.AlreadyExists,
      "agent-A_1",
    );

    for (const bad of ["../x", "a/b", "a.b", "", "x".repeat(129), "a\u0000b", "-lead"]) {
      await expectCode(
        c.store.createSession({ workspace: ws, sessionId: bad }),
        Code.InvalidArgument,
      );
    }
    await expectCode(
      c.store.createSession({ workspace: "bad/ws", sessionId: "ok-id" }),
      Code.InvalidArgument,
      "bad/ws",
    );
    await expectCode(
      c.store.createSession({ workspace: ws, parentSessionId: "no-such-parent" }),
      Code.NotFound,
      "no-such-parent",
    );
  });

  test("GetSession: full id, unique prefix, short / unknown / ambiguous refs", async () => {
    for (const id of ["pfx-alpha-1", "pfx-alpha-2", "pfxbeta-1"]) {
      await c.store.createSession({ workspace: ws, sessionId: id, title: id });
    }
    const full = await c.store.getSession({ workspace: ws, session: "pfx-alpha-2" });
    expect(full.session).toMatchObject({ id: "pfx-alpha-2", title: "pfx-alpha-2", workspace: ws });
    const byPrefix = await c.store.getSession({ workspace: ws, session: "pfxb" });
    expect(byPrefix.session?.id).toBe("pfxbeta-1");

    const gen = await newSession("gen");
    const prefix = gen.id.slice(0, gen.id.length - 2);
    expect((await c.store.getSession({ workspace: ws, session: prefix })).session?.id).toBe(gen.id);

    const amb = await expectCode(
      c.store.getSession({ workspace: ws, session: "pfx-alpha" }),
      Code.FailedPrecondition,
      "pfx-alpha",
    );
    expect(amb.rawMessage).toContain("pfx-alpha-1");
    expect(amb.rawMessage).toContain("pfx-alpha-2");
    await expectCode(
      c.store.getSession({ workspace: ws, session: "nope-404" }),
      Code.NotFound,
      "nope-404",
    );
    await expectCode(
      c.store.getSession({ workspace: ws, session: "pf" }),
      Code.InvalidArgument,
      "pf",
    );
    await expectCode(
      c.store.getSession({ workspace: ws, session: "../etc/passwd" }),
      Code.InvalidArgument,
    );
    // Workspaces are isolated.
    await expectCode(
      c.store.getSession({ workspace: `${ws}-other`, session: "pfx-alpha-1" }),
      Code.NotFound,
      "pfx-alpha-1",
    );
  });

  test("ListSessions: pages with tokens, both orders, subagents by parent", async () => {
    const lw = uniqueWorkspace(`list-${protocol}`);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await c.store.createSession({ workspace: lw, title: `s${i}` });
      created.push(r.session?.id ?? "");
    }
    const all = await c.store.listSessions({ workspace: lw });
    expect(all.nextPageToken).toBe("");
    expect(new Set(all.sessions.map((s) => s.id))).toEqual(new Set(created));

    const walk = async (order: SortOrder) => {
      const ids: string[] = [];
      const sizes: number[] = [];
      let pageToken = "";
      for (let guard = 0; guard < 10; guard++) {
        const page = await c.store.listSessions({ workspace: lw, pageSize: 2, pageToken, order });
        ids.push(...page.sessions.map((s) => s.id));
        sizes.push(page.sessions.length);
        pageToken = page.nextPageToken;
        if (pageToken === "") break;
      }
      return { ids, sizes };
    };
    const newest = await walk(SortOrder.NEWEST_FIRST);
    expect(newest.sizes).toEqual([2, 2, 1]);
    expect(newest.ids).toEqual(all.sessions.map((s) => s.id));
    const oldest = await walk(SortOrder.OLDEST_FIRST);
    expect(oldest.sizes).toEqual([2, 2, 1]);
    expect(oldest.ids).toEqual([...newest.ids].reverse());
    // Newest first really is by creation time.
    const times = all.sessions.map((s) => Number(s.createdAt?.seconds ?? 0n) * 1000);
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    // Subagents: listed under their parent only.
    const parent = created[0] as string;
    const sub = await c.store.createSession({
      workspace: lw,
      parentSessionId: parent,
      agentType: "coder",
      title: "sub",
    });
    expect(sub.session).toMatchObject({
      parentSessionId: parent,
      agentType: "coder",
      spawnDepth: 1,
    });
    const subId = sub.session?.id ?? "";
    const subsub = await c.store.createSession({ workspace: lw, parentSessionId: subId });
    expect(subsub.session?.spawnDepth).toBe(2);
    const top = await c.store.listSessions({ workspace: lw, pageSize: 100 });
    expect(top.sessions.map((s) => s.id).sort()).toEqual([...created].sort());
    const kids = await c.store.listSessions({ workspace: lw, parentSessionId: parent });
    expect(kids.sessions.map((s) => s.id)).toEqual([subId]);
    const grandkids = await c.store.listSessions({ workspace: lw, parentSessionId: subId });
    expect(grandkids.sessions.map((s) => s.id)).toEqual([subsub.session?.id]);

    await expectCode(
      c.store.createSession({ workspace: lw, agentType: "coder" }),
      Code.InvalidArgument,
      "agent_type",
    );
    await expectCode(
      c.store.listSessions({ workspace: lw, pageToken: "not!a!token" }),
      Code.InvalidArgument,
      "page_token",
    );
    const firstPage = await c.store.listSessions({ workspace: lw, pageSize: 2 });
    await expectCode(
      c.store.listSessions({
        workspace: lw,
        pageSize: 2,
        pageToken: firstPage.nextPageToken,
        order: SortOrder.OLDEST_FIRST,
      }),
      Code.InvalidArgument,
      "page_token",
    );
    await expectCode(
      c.store.listSessions({ workspace: lw, pageSize: 1_000_000 }),
      Code.InvalidArgument,
      "page_size",
    );
  });

  test("Append: single, batch, parent defaulting, explicit parent, idempotent retry, conflicts", async () => {
    const { id, root } = await newSession();
    const one = await c.session.append({
      workspace: ws,
      session: id,
      entries: [user("hello", { id: "u1" })],
    });
    expect(one.entries).toHaveLength(1);
    expect(one.entries[0]).toMatchObject({ id: "u1", parentId: root, seq: 2n });
    expect(one.entries[0]?.timestamp).toBeDefined();
    expect(one).toMatchObject({ leafId: "u1", headSeq: 2n, deduplicated: false });

    const batchReq = {
      workspace: ws,
      session: id,
      entries: [
        assistant("hi", { id: "a1" }),
        user("q2", { id: "u2" }),
        assistant("a2", { id: "a2" }),
      ],
    };
    const batch = await c.session.append(batchReq);
    expect(batch.entries.map((e) => [e.id, e.parentId, e.seq])).toEqual([
      ["a1", "u1", 3n],
      ["u2", "a1", 4n],
      ["a2", "u2", 5n],
    ]);
    expect(batch).toMatchObject({ leafId: "a2", headSeq: 5n, deduplicated: false });

    // Explicit parent: a branch off u1.
    const branch = await c.session.append({
      workspace: ws,
      session: id,
      entries: [user("alt", { id: "u1b", parentId: "u1" })],
    });
    expect(branch.entries[0]).toMatchObject({ id: "u1b", parentId: "u1", seq: 6n });
    expect(branch.leafId).toBe("u1b");

    // Idempotent retry of the batch: stored entries returned, nothing written.
    const retry = await c.session.append(batchReq);
    expect(retry.deduplicated).toBe(true);
    expect(retry.entries.map((e) => [e.id, e.seq])).toEqual([
      ["a1", 3n],
      ["u2", 4n],
      ["a2", 5n],
    ]);
    expect(retry.headSeq).toBe(6n);
    expect(await readAll(c, ws, id)).toHaveLength(6);

    // Server-assigned ids and parents when the client leaves them empty (bare client path:
    // the sessiond client fills ids itself, so check it did).
    const auto = await c.session.append({ workspace: ws, session: id, entries: [user("auto")] });
    expect(auto.entries[0]?.id).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(auto.entries[0]?.parentId).toBe("u1b");

    // Tool call and its result.
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [
        assistant("calling", { id: "a3" }, [{ id: "call-1", name: "ls", arguments: { dir: "." } }]),
        toolResult("call-1", "file.txt", { id: "t1" }),
      ],
    });

    await expectCode(
      c.session.append({ workspace: ws, session: id, entries: [user("other text", { id: "u2" })] }),
      Code.AlreadyExists,
      "u2",
    );
    await expectCode(
      c.session.append({
        workspace: ws,
        session: id,
        entries: [user("orphan", { id: "o1", parentId: "ghost" })],
      }),
      Code.InvalidArgument,
      "ghost",
    );
    await expectCode(
      c.session.append({
        workspace: ws,
        session: id,
        entries: [toolResult("call-404", "x", { id: "t2" })],
      }),
      Code.InvalidArgument,
      "t2",
    );
    await expectCode(
      c.session.append({
        workspace: ws,
        session: id,
        entries: [{ id: "lf", kind: { case: "leaf", value: { leafId: "u1" } } }],
      }),
      Code.InvalidArgument,
      "lf",
    );
    await expectCode(
      c.session.append({ workspace: ws, session: id, entries: [{ id: "nokind" }] }),
      Code.InvalidArgument,
      "nokind",
    );
    await expectCode(
      c.session.append({ workspace: ws, session: id, entries: [user("x", { id: "bad id!" })] }),
      Code.InvalidArgument,
      "bad id!",
    );
    await expectCode(
      c.session.append({ workspace: ws, session: id, entries: [] }),
      Code.InvalidArgument,
    );
    await expectCode(
      c.session.append({ workspace: ws, session: "missing-session", entries: [user("x")] }),
      Code.NotFound,
      "missing-session",
    );
    // Valid on the wire, but with no JSON form (the log format): refused, not "outcome unknown".
    const noValue = {
      id: "a-novalue",
      kind: {
        case: "message" as const,
        value: {
          role: Role.ASSISTANT,
          content: [
            {
              part: {
                case: "toolCall" as const,
                value: { id: "c-nv", name: "x", arguments: create(ValueSchema, {}) },
              },
            },
          ],
        },
      },
    };
    await expectCode(
      c.session.append({ workspace: ws, session: id, entries: [noValue] }),
      Code.InvalidArgument,
      "a-novalue",
    );
    await expectCode(
      c.session.append({
        workspace: ws,
        session: id,
        entries: [custom("ns", { x: Number.NaN }, { id: "nan" })],
      }),
      Code.InvalidArgument,
      "nan",
    );
    // Refused appends wrote nothing.
    const after = await readAll(c, ws, id);
    expect(after.map((e) => Number(e.seq))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test("Rewind: by id, by label, compaction floor, allow_before_compaction, retry", async () => {
    const { id, root } = await newSession();
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [
        user("u1", { id: "u1" }),
        assistant("a1", { id: "a1" }),
        label("before-refactor", { id: "lbl" }),
        user("u2", { id: "u2" }),
        assistant("a2", { id: "a2" }),
        compaction("summary", ["u1", "a1"], { id: "C" }),
        user("u3", { id: "u3" }),
      ],
    });
    // The floor is a2 (parent of C): u2 and the label lie before it.
    const fp = await expectCode(
      c.session.rewind({ workspace: ws, session: id, target: "u2" }),
      Code.FailedPrecondition,
      "u2",
    );
    expect(fp.rawMessage).toContain("a2");
    await expectCode(
      c.session.rewind({ workspace: ws, session: id, target: "before-refactor" }),
      Code.FailedPrecondition,
      id,
    );
    const head = (await c.store.getSession({ workspace: ws, session: id })).session?.headSeq;
    expect(head).toBe(8n); // refused rewinds wrote nothing

    // The floor itself and entries after it are fine.
    const toC = await c.session.rewind({ workspace: ws, session: id, target: "C" });
    expect(toC).toMatchObject({ leafId: "C", headSeq: 9n });
    expect(toC.leafEntryId).not.toBe("");
    const toFloor = await c.session.rewind({ workspace: ws, session: id, target: "a2" });
    expect(toFloor.leafId).toBe("a2");

    // Back to u3, then force past the floor.
    await c.session.rewind({ workspace: ws, session: id, target: "u3" });
    const forced = await c.session.rewind({
      workspace: ws,
      session: id,
      target: "u2",
      allowBeforeCompaction: true,
    });
    expect(forced.leafId).toBe("u2");

    // No compaction on the path any more: the label resolves to the Label entry.
    const byLabel = await c.session.rewind({
      workspace: ws,
      session: id,
      target: "before-refactor",
    });
    expect(byLabel.leafId).toBe("lbl");
    const st = await c.session.getState({ workspace: ws, session: id });
    expect(st.state?.label).toBe("before-refactor");
    expect(st.state?.leafId).toBe("lbl");

    // A retried rewind (same Leaf entry id) is de-duplicated.
    const req = { workspace: ws, session: id, target: "u1", entryId: "rw-1" };
    const r1 = await c.session.rewind(req);
    const r2 = await c.session.rewind(req);
    expect(r1.leafEntryId).toBe("rw-1");
    expect(r2).toEqual(r1);

    await expectCode(
      c.session.rewind({ workspace: ws, session: id, target: "nowhere" }),
      Code.NotFound,
      "nowhere",
    );
    await expectCode(
      c.session.rewind({ workspace: ws, session: id, target: "rw-1" }),
      Code.InvalidArgument,
      "rw-1",
    );
    await expectCode(
      c.session.rewind({ workspace: ws, session: id, target: root, expectedLeafId: "a1" }),
      Code.Aborted,
      "a1",
    );
  });

  test("Reset: leaf to the root, empty context, history kept", async () => {
    const { id, root } = await newSession();
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [user("u1", { id: "u1" }), assistant("a1", { id: "a1" })],
    });
    const r = await c.session.reset({ workspace: ws, session: id });
    expect(r).toMatchObject({ leafId: root, headSeq: 4n });
    const st = await c.session.getState({ workspace: ws, session: id });
    expect(st.state?.messages).toEqual([]);
    expect(st.state?.leafId).toBe(root);
    const log = await readAll(c, ws, id);
    expect(log.map((e) => e.id).slice(1, 3)).toEqual(["u1", "a1"]);
    const leafEntry = log[3];
    expect(leafEntry?.id).toBe(r.leafEntryId);
    expect(leafEntry?.kind.case).toBe("leaf");
    expect(leafEntry?.kind.value).toMatchObject({ leafId: root });
    const next = await c.session.append({
      workspace: ws,
      session: id,
      entries: [user("fresh", { id: "f" })],
    });
    expect(next.entries[0]?.parentId).toBe(root);
    await expectCode(
      c.session.reset({ workspace: ws, session: id, expectedSeq: 1n }),
      Code.Aborted,
      id,
    );
  });

  test("GetState: CONTEXT folds compactions, HISTORY keeps every message, fold fields, time travel", async () => {
    const { id } = await newSession("original");
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [
        modelChange("m-big", "prov", { id: "mc" }),
        thinking("high", { id: "th" }),
        user("u1", { id: "u1" }),
        assistant("a1", { id: "a1" }),
        custom("ns", { a: 1 }, { id: "cu" }),
        user("u2", { id: "u2" }),
        assistant("a2", { id: "a2" }),
        compaction("the summary", ["u1", "a1"], { id: "C" }),
        label("L1", { id: "lb" }),
        retitle("New title", { id: "ti" }),
        user("u3", { id: "u3" }),
      ],
    });
    const ctx = (await c.session.getState({ workspace: ws, session: id, view: View.CONTEXT }))
      .state;
    expect(ctx?.messages.map((m) => m.entryId)).toEqual(["C", "u2", "a2", "u3"]);
    expect(ctx?.messages[0]?.message?.role).toBe(Role.USER);
    expect(textOf(ctx?.messages[0]?.message)).toBe("Previous conversation summary:\nthe summary");
    expect(textOf(ctx?.messages[3]?.message)).toBe("u3");
    expect(ctx).toMatchObject({
      model: "m-big",
      provider: "prov",
      thinkingLevel: "high",
      label: "L1",
      title: "New title",
      custom: { ns: { a: 1 } },
      leafId: "u3",
      currentLeafId: "u3",
      compactionFloorId: "a2",
      headSeq: 12n,
      view: View.CONTEXT,
    });
    const dflt = (await c.session.getState({ workspace: ws, session: id })).state;
    expect(dflt?.messages.map((m) => m.entryId)).toEqual(["C", "u2", "a2", "u3"]);

    const hist = (await c.session.getState({ workspace: ws, session: id, view: View.HISTORY }))
      .state;
    expect(hist?.messages.map((m) => m.entryId)).toEqual(["u1", "a1", "u2", "a2", "u3"]);
    expect(hist?.view).toBe(View.HISTORY);

    // Time travel: the fold at a1, before the compaction, model change kept.
    const past = (await c.session.getState({ workspace: ws, session: id, atEntryId: "a1" })).state;
    expect(past?.messages.map((m) => m.entryId)).toEqual(["u1", "a1"]);
    expect(past).toMatchObject({
      leafId: "a1",
      currentLeafId: "u3",
      model: "m-big",
      title: "original",
    });
    expect(past?.compactionFloorId).toBeUndefined();
    expect(past?.label).toBeUndefined();

    await expectCode(
      c.session.getState({ workspace: ws, session: id, atEntryId: "no-such-entry" }),
      Code.NotFound,
      "no-such-entry",
    );
    const rw = await c.session.rewind({ workspace: ws, session: id, target: "u3" });
    await expectCode(
      c.session.getState({ workspace: ws, session: id, atEntryId: rw.leafEntryId }),
      Code.InvalidArgument,
      rw.leafEntryId,
    );
  });

  test("GetEntries: pages of the raw log", async () => {
    const { id } = await newSession();
    const ids = Array.from({ length: 9 }, (_, i) => `e${i}`);
    await c.session.append({
      workspace: ws,
      session: id,
      entries: ids.map((e) => user(e, { id: e })),
    });
    const seen: bigint[] = [];
    let after = 0n;
    for (let guard = 0; guard < 10; guard++) {
      const page = await c.session.getEntries({
        workspace: ws,
        session: id,
        afterSeq: after,
        limit: 3,
      });
      expect(page.headSeq).toBe(10n);
      if (page.entries.length === 0) break;
      expect(page.entries.length).toBeLessThanOrEqual(3);
      seen.push(...page.entries.map((e) => e.seq));
      after = page.entries[page.entries.length - 1]?.seq ?? after;
    }
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i + 1)));
    const whole = await c.session.getEntries({ workspace: ws, session: id });
    expect(whole.entries.map((e) => e.id)).toEqual([whole.entries[0]?.id, ...ids]);
    expect(whole.entries[0]?.kind.case).toBe("sessionInfo");
    expect(whole.entries[1]).toMatchObject({ id: "e0", parentId: whole.entries[0]?.id, seq: 2n });
    expect(whole.entries[1]?.timestamp).toBeDefined();
    const mid = await c.session.getEntries({ workspace: ws, session: id, afterSeq: 7n });
    expect(mid.entries.map((e) => e.seq)).toEqual([8n, 9n, 10n]);
    const end = await c.session.getEntries({ workspace: ws, session: id, afterSeq: 10n });
    expect(end.entries).toEqual([]);
    await expectCode(
      c.session.getEntries({ workspace: ws, session: id, limit: 1_000_000 }),
      Code.InvalidArgument,
      "limit",
    );
    await expectCode(
      c.session.getEntries({ workspace: ws, session: "gone-gone" }),
      Code.NotFound,
      "gone-gone",
    );
  });

  test("GetTree: every entry, current path marked", async () => {
    const { id, root } = await newSession();
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [
        user("u1", { id: "u1" }),
        assistant("a1", { id: "a1" }),
        label("mark", { id: "lb" }),
        user("u2", { id: "u2" }),
      ],
    });
    const rw = await c.session.rewind({ workspace: ws, session: id, target: "lb" });
    await c.session.append({ workspace: ws, session: id, entries: [user("u2b", { id: "u2b" })] });
    const tree = await c.session.getTree({ workspace: ws, session: id });
    expect(tree.leafId).toBe("u2b");
    expect(tree.headSeq).toBe(7n);
    const shape = tree.nodes.map((n) => [
      n.id,
      n.parentId ?? null,
      n.kind,
      Number(n.seq),
      n.onCurrentPath,
    ]);
    expect(shape).toEqual([
      [root, null, EntryKind.SESSION_INFO, 1, true],
      ["u1", root, EntryKind.MESSAGE, 2, true],
      ["a1", "u1", EntryKind.MESSAGE, 3, true],
      ["lb", "a1", EntryKind.LABEL, 4, true],
      ["u2", "lb", EntryKind.MESSAGE, 5, false],
      [rw.leafEntryId, "u2", EntryKind.LEAF, 6, false],
      ["u2b", "lb", EntryKind.MESSAGE, 7, true],
    ]);
    const byId = new Map(tree.nodes.map((n) => [n.id, n]));
    expect(byId.get("lb")?.label).toBe("mark");
    expect(byId.get(rw.leafEntryId)?.leafId).toBe("lb");
    expect(byId.get("u1")?.role).toBe(Role.USER);
    expect(byId.get("a1")?.role).toBe(Role.ASSISTANT);
    expect(byId.get("u2b")?.preview).toContain("u2b");
    await expectCode(
      c.session.getTree({ workspace: ws, session: "treeless" }),
      Code.NotFound,
      "treeless",
    );
  });

  test("ForkSession: path copied with ids kept, forked_from set, source untouched", async () => {
    const { id } = await newSession("source");
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [
        user("u1", { id: "u1" }),
        assistant("a1", { id: "a1" }),
        label("fork-here", { id: "lb" }),
        user("u2", { id: "u2" }),
        assistant("a2", { id: "a2" }),
      ],
    });
    const before = await readAll(c, ws, id);

    const fork = (
      await c.store.forkSession({ workspace: ws, session: id, entry: "a1", title: "forked" })
    ).session;
    expect(fork?.id).not.toBe(id);
    expect(fork?.id).toMatch(SESSION_ID_RE);
    expect(fork).toMatchObject({
      title: "forked",
      headSeq: 3n,
      leafId: "a1",
      forkedFrom: { sessionId: id, entryId: "a1" },
      workspace: ws,
    });
    const copied = await readAll(c, ws, fork?.id ?? "");
    const newRoot = copied[0];
    expect(newRoot?.kind.case).toBe("sessionInfo");
    expect(newRoot?.kind.value).toMatchObject({
      sessionId: fork?.id,
      forkedFrom: { sessionId: id, entryId: "a1" },
    });
    expect(copied.slice(1).map((e) => [e.id, e.parentId, e.seq])).toEqual([
      ["u1", newRoot?.id, 2n],
      ["a1", "u1", 3n],
    ]);
    const srcAtA1 = await c.session.getState({ workspace: ws, session: id, atEntryId: "a1" });
    const forkState = await c.session.getState({ workspace: ws, session: fork?.id ?? "" });
    expect(forkState.state?.messages).toEqual(srcAtA1.state?.messages);

    // By label (the Label entry is the fork point), and at the current leaf.
    const byLabel = (await c.store.forkSession({ workspace: ws, session: id, entry: "fork-here" }))
      .session;
    expect(byLabel).toMatchObject({
      headSeq: 4n,
      leafId: "lb",
      forkedFrom: { entryId: "lb" },
      title: "source",
    });
    const atLeaf = (await c.store.forkSession({ workspace: ws, session: id })).session;
    expect(atLeaf).toMatchObject({
      headSeq: 6n,
      leafId: "a2",
      forkedFrom: { sessionId: id, entryId: "a2" },
    });

    // Client-chosen id: a retry is idempotent, a different fork point conflicts.
    const req = { workspace: ws, session: id, entry: "u2", sessionId: "my-fork-1" };
    const f1 = (await c.store.forkSession(req)).session;
    const f2 = (await c.store.forkSession(req)).session;
    expect(f1?.id).toBe("my-fork-1");
    expect(f2?.id).toBe("my-fork-1");
    expect(f2?.headSeq).toBe(f1?.headSeq);
    await expectCode(c.store.forkSession({ ...req, entry: "a2" }), Code.AlreadyExists, "my-fork-1");

    // The source is untouched.
    expect(await readAll(c, ws, id)).toEqual(before);

    await expectCode(
      c.store.forkSession({ workspace: ws, session: id, entry: "nope" }),
      Code.NotFound,
      "nope",
    );
    const rw = await c.session.rewind({ workspace: ws, session: id, target: "u1" });
    await expectCode(
      c.store.forkSession({ workspace: ws, session: id, entry: rw.leafEntryId }),
      Code.InvalidArgument,
      rw.leafEntryId,
    );
  });

  test("DeleteSession: alone, or with its subagents (recursively)", async () => {
    const p = await newSession("parent");
    const s1 = (
      await c.store.createSession({ workspace: ws, parentSessionId: p.id, agentType: "a" })
    ).session?.id as string;
    const s2 = (await c.store.createSession({ workspace: ws, parentSessionId: s1, agentType: "b" }))
      .session?.id as string;
    const deleted = await c.store.deleteSession({
      workspace: ws,
      session: p.id,
      includeSubagents: true,
    });
    expect([...deleted.deletedSessionIds].sort()).toEqual([p.id, s1, s2].sort());
    for (const gone of [p.id, s1, s2]) {
      await expectCode(c.store.getSession({ workspace: ws, session: gone }), Code.NotFound, gone);
    }
    await expectCode(
      c.session.append({ workspace: ws, session: p.id, entries: [user("late")] }),
      Code.NotFound,
      p.id,
    );

    const q = await newSession("q");
    const qs = (
      await c.store.createSession({ workspace: ws, parentSessionId: q.id, agentType: "a" })
    ).session?.id as string;
    const alone = await c.store.deleteSession({ workspace: ws, session: q.id });
    expect(alone.deletedSessionIds).toEqual([q.id]);
    const orphan = await c.store.getSession({ workspace: ws, session: qs });
    expect(orphan.session?.parentSessionId).toBe(q.id);
    await expectCode(c.store.deleteSession({ workspace: ws, session: q.id }), Code.NotFound, q.id);
  });

  test("WatchSessions: created / updated / deleted events, resume with a cursor", async () => {
    const ww = uniqueWorkspace(`watch-${protocol}`);
    const ac1 = new AbortController();
    const w1 = collect<WatchSessionsResponse>(
      c.store.watchSessions({ workspace: ww }, { signal: ac1.signal }),
    );
    try {
      await w1.waitFor((xs) => xs.some((x) => x.cursor !== ""), 5000, "first heartbeat");
      const is = (t: SessionEventType, sid: string) => (x: WatchSessionsResponse) =>
        x.type === t && x.sessionId === sid;
      const a = (await c.store.createSession({ workspace: ww, title: "A" })).session?.id as string;
      await w1.waitFor((xs) => xs.some(is(SessionEventType.CREATED, a)), 5000, "CREATED A");
      await c.session.append({ workspace: ww, session: a, entries: [user("x")] });
      await w1.waitFor((xs) => xs.some(is(SessionEventType.UPDATED, a)), 5000, "UPDATED A");
      const b = (await c.store.createSession({ workspace: ww, title: "B" })).session?.id as string;
      await c.store.deleteSession({ workspace: ww, session: b });
      await w1.waitFor((xs) => xs.some(is(SessionEventType.DELETED, b)), 5000, "DELETED B");
      // Another workspace's sessions do not show up.
      const other = (await c.store.createSession({ workspace: ws, title: "elsewhere" })).session
        ?.id;

      const events = w1.items.filter((x) => x.type !== SessionEventType.UNSPECIFIED);
      expect(events.some((x) => x.sessionId === other)).toBe(false);
      const created = events.find(is(SessionEventType.CREATED, a));
      expect(created?.session).toMatchObject({ id: a, title: "A", workspace: ww });
      const updated = events.find(is(SessionEventType.UPDATED, a));
      expect(updated?.session?.headSeq).toBe(2n);
      const deletedB = events.find(is(SessionEventType.DELETED, b));
      expect(deletedB?.session).toBeUndefined();
      const order = events.map((x) => `${SessionEventType[x.type]}:${x.sessionId}`);
      expect(order.indexOf(`CREATED:${b}`)).toBeLessThan(order.indexOf(`DELETED:${b}`));
      expect(new Set(events.map((x) => x.cursor)).size).toBe(events.length);
      const resumeCursor = events[events.length - 1]?.cursor as string;
      ac1.abort();
      await w1.waitEnd(5000);

      // While nobody watches: A updated, C created, D created and deleted.
      await c.session.append({ workspace: ww, session: a, entries: [user("y")] });
      const cId = (await c.store.createSession({ workspace: ww, title: "C" })).session
        ?.id as string;
      const d = (await c.store.createSession({ workspace: ww, title: "D" })).session?.id as string;
      await c.store.deleteSession({ workspace: ww, session: d });

      const ac2 = new AbortController();
      const w2 = collect<WatchSessionsResponse>(
        c.store.watchSessions({ workspace: ww, afterCursor: resumeCursor }, { signal: ac2.signal }),
      );
      try {
        await w2.waitFor(
          (xs) =>
            xs.some((x) => is(SessionEventType.UPDATED, a)(x) && x.session?.headSeq === 3n) &&
            xs.some(is(SessionEventType.CREATED, cId)) &&
            xs.some(is(SessionEventType.DELETED, d)),
          3000,
          "the missed events after the cursor (UPDATED A, CREATED C, DELETED D)",
        );
        const replayed = w2.items.filter((x) => x.type !== SessionEventType.UNSPECIFIED);
        expect(replayed.some((x) => x.sessionId === b)).toBe(false);
        expect(replayed.some(is(SessionEventType.CREATED, a))).toBe(false);
      } finally {
        ac2.abort();
        await w2.waitEnd(5000);
      }

      await expectCode(
        (async () => {
          for await (const _ of c.store.watchSessions({ workspace: ww, afterCursor: "garbage" })) {
            // no event expected
          }
        })(),
        Code.InvalidArgument,
        "after_cursor",
      );
    } finally {
      ac1.abort();
    }
  });

  test("WatchEntries: replay, then live entries, heartbeat with the head seq", async () => {
    const { id } = await newSession();
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [user("u1", { id: "u1" }), assistant("a1", { id: "a1" }), user("u2", { id: "u2" })],
    });
    const ac = new AbortController();
    const w = collect<WatchEntriesResponse>(
      c.session.watchEntries({ workspace: ws, session: id, afterSeq: 0n }, { signal: ac.signal }),
    );
    const w2 = collect<WatchEntriesResponse>(
      c.session.watchEntries({ workspace: ws, session: id, afterSeq: 2n }, { signal: ac.signal }),
    );
    const entries = (xs: readonly WatchEntriesResponse[]) =>
      xs.flatMap((x) => (x.event.case === "entry" ? [x.event.value] : []));
    try {
      await w.waitFor((xs) => entries(xs).length >= 4, 5000, "replay of 4 entries");
      await w.waitFor(
        (xs) => xs.some((x) => x.event.case === "heartbeat"),
        5000,
        "heartbeat after replay",
      );
      const hb = w.items.find((x) => x.event.case === "heartbeat");
      expect(hb?.event.case === "heartbeat" && hb.event.value.headSeq).toBe(4n);
      await c.session.append({
        workspace: ws,
        session: id,
        entries: [assistant("a2", { id: "a2" }), user("u3", { id: "u3" })],
      });
      await w.waitFor((xs) => entries(xs).length >= 6, 5000, "live entries 5 and 6");
      const got = entries(w.items);
      expect(got.map((e) => Number(e.seq))).toEqual([1, 2, 3, 4, 5, 6]);
      expect(got.slice(1).map((e) => e.id)).toEqual(["u1", "a1", "u2", "a2", "u3"]);
      expect(got[4]?.kind.case).toBe("message");
      await w2.waitFor((xs) => entries(xs).length >= 4, 5000, "entries 3..6 from after_seq 2");
      expect(entries(w2.items).map((e) => Number(e.seq))).toEqual([3, 4, 5, 6]);
    } finally {
      ac.abort();
      await w.waitEnd(5000);
      await w2.waitEnd(5000);
    }
    const drain = async (req: { session: string; afterSeq?: bigint }) => {
      for await (const _ of c.session.watchEntries({ workspace: ws, ...req })) {
        // an error is expected before any event
      }
    };
    await expectCode(drain({ session: id, afterSeq: 100n }), Code.InvalidArgument, "100");
    await expectCode(drain({ session: "no-watch-here" }), Code.NotFound, "no-watch-here");
  });
});

test("the server survived every call (no crash, no restart)", async () => {
  const proc = srv.local?.proc;
  if (proc === undefined) return; // external server: nothing to inspect
  const alive = proc.exitCode === null && proc.signalCode === null;
  expect(
    alive,
    `server exited (${proc.exitCode ?? proc.signalCode}):\n${srv.local?.stderr().slice(-3000)}`,
  ).toBe(true);
  expect(srv.local?.stderr()).not.toMatch(/"code":"Internal"/);
});
