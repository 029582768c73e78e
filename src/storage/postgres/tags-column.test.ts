import { create } from "@bufbuild/protobuf";
import { afterAll, expect, it } from "vitest";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { SessionFilterSchema } from "../../../gen/sessiond/v1/store_service_pb.js";
import { recordSpans } from "../../../test/support/otel.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { SessionStore } from "../../store/session-store.js";
import { PostgresEngine } from "./postgres-engine.js";

/**
 * The folded tags of each session row (migration 7) follow every write
 * path (create, append alone, appends grouped into one statement),
 * and a listing's tag hint leaves out only sessions whose stored tags are
 * current and do not hold the filter's: a row whose tags were not folded
 * at its head (written before the migration, or by an older sessiond) is
 * always kept.
 */

const WS = "tags";
const retag = (tags: Record<string, string>) =>
  create(EntrySchema, { kind: { case: "sessionInfo", value: { tags } } });
const say = (text: string) =>
  create(EntrySchema, {
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL tags column tests (skipped: ${pgSkip})`, () => {});
} else {
  let engine: PostgresEngine | undefined;
  afterAll(() => engine?.close());

  it("the stored tags are the folded tags after creates and appends (alone and grouped)", async () => {
    const opened = await openPostgres();
    engine = opened.engine;
    const store = new SessionStore(engine);
    for (let i = 0; i < 12; i++) {
      await store.create({ workspace: WS, sessionId: `s${i}`, tags: { user: `u${i % 3}` } });
    }
    // Alone, and many at once (the append writer groups concurrent appends into one statement).
    await (await store.open(WS, "s0")).append(retag({ team: "t1" }));
    await (await store.open(WS, "s1")).append(retag({ user: "" }));
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const s = await store.open(WS, `s${i}`);
        await s.append(i % 2 === 0 ? retag({ user: `v${i}`, team: "t2" }) : say("hello"));
      }),
    );
    const rows = await opened.admin<{ session_id: string; tags: string; current: boolean }[]>`
      SELECT session_id, tags::text AS tags, tags_head = head_seq AS current
      FROM sessiond_sessions WHERE workspace = ${WS}`;
    expect(rows).toHaveLength(12);
    for (const r of rows) {
      // The tags folded from the session's whole log.
      const log = await engine.load({ workspace: WS, sessionId: r.session_id });
      expect(r.current).toBe(true);
      expect(JSON.parse(r.tags)).toEqual(log.tags);
      expect((await engine.list(WS, [r.session_id]))[0]?.tags).toEqual(log.tags);
    }
    expect(JSON.parse(rows.find((r) => r.session_id === "s1")?.tags ?? "")).toEqual({});
  });

  it("the tag hint keeps matching sessions and every session whose stored tags are not current", async () => {
    const opened = await openPostgres();
    await engine?.close();
    engine = opened.engine;
    const store = new SessionStore(engine);
    for (let i = 0; i < 6; i++) {
      await store.create({ workspace: WS, sessionId: `h${i}`, tags: { user: `u${i % 2}` } });
    }
    const hinted = async () =>
      (await engine?.listRoots(WS, { tags: { user: "u1" } }))?.map((r) => r.sessionId).sort();
    expect(await hinted()).toEqual(["h1", "h3", "h5"]);
    // A row written before migration 7, and one last written by an older sessiond (head moved on).
    await opened.admin`UPDATE sessiond_sessions SET tags = NULL, tags_head = NULL
      WHERE workspace = ${WS} AND session_id = 'h0'`;
    await opened.admin`UPDATE sessiond_sessions SET head_seq = head_seq + 1
      WHERE workspace = ${WS} AND session_id = 'h2'`;
    expect(await hinted()).toEqual(["h0", "h1", "h2", "h3", "h5"]);
    // Listing records fold the log's entries for a row not folded at its head.
    await (await store.open(WS, "h0")).append(retag({ team: "t0" }));
    await opened.admin`UPDATE sessiond_sessions SET tags = '{"stale":"x"}', tags_head = NULL
      WHERE workspace = ${WS} AND session_id = 'h0'`;
    expect((await engine.list(WS, ["h0"]))[0]?.tags).toEqual({ user: "u0", team: "t0" });
    // Without a hint, or an empty one, every root.
    expect((await engine.listRoots(WS)).length).toBe(6);
    expect((await engine.listRoots(WS, { tags: {} })).length).toBe(6);
  });

  it("an append that changes no tag is a HOT update of the session row, tags index and all", async () => {
    const opened = await openPostgres();
    await engine?.close();
    engine = opened.engine;
    const store = new SessionStore(engine);
    await store.create({ workspace: WS, sessionId: "hot", tags: { user: "u1" } });
    const s = await store.open(WS, "hot");
    for (let i = 0; i < 5; i++) await s.append(say(`m${i}`));
    // The row's live version is a heap-only tuple (t_infomask2 & 0x8000): made by a HOT update,
    // which PostgreSQL makes only when no indexed column (the GIN-indexed tags included) changed.
    await opened.admin`CREATE EXTENSION IF NOT EXISTS pageinspect`;
    const heapOnly = async () => {
      const [row] = await opened.admin<{ ctid: string }[]>`
        SELECT ctid::text FROM sessiond_sessions WHERE workspace = ${WS} AND session_id = 'hot'`;
      const [page, item] = (row?.ctid ?? "").slice(1, -1).split(",").map(Number);
      const [tuple] = await opened.admin<{ heap_only: boolean }[]>`
        SELECT (t_infomask2 & 32768) <> 0 AS heap_only
        FROM heap_page_items(get_raw_page('sessiond_sessions', ${page as number}))
        WHERE lp = ${item as number}`;
      return tuple?.heap_only;
    };
    expect(await heapOnly()).toBe(true);
    // A tag change rewrites the indexed column: not HOT (the check can fail).
    await s.append(retag({ team: "t9" }));
    expect(await heapOnly()).toBe(false);
  });

  it("a hinted listing reads its sessions' records with the roots: the list of them right after costs no query", async () => {
    const opened = await openPostgres();
    await engine?.close();
    engine = opened.engine;
    const store = new SessionStore(engine);
    for (let i = 0; i < 4; i++) {
      await store.create({ workspace: WS, sessionId: `m${i}`, tags: { user: `u${i % 2}` } });
    }
    const recorder = recordSpans();
    try {
      const queries = () => recorder.spans().filter((x) => x.name === "pg listing sessions").length;
      const roots = await engine.listRoots(WS, { tags: { user: "u1" } });
      expect(roots.map((r) => r.sessionId).sort()).toEqual(["m1", "m3"]);
      // In the same turn of the event loop, as the store's filtered listing calls it: some of those ids.
      const first = await engine.list(WS, ["m3"]);
      expect(first.map((r) => [r.sessionId, r.title, r.tags])).toEqual([
        ["m3", undefined, { user: "u1" }],
      ]);
      // The rows, then the roots this engine did not hold yet; the list: none.
      expect(queries()).toBe(2);
      // Consumed: the next list is a query, and sees a change made since.
      await opened.admin`UPDATE sessiond_sessions SET title = 'changed' WHERE workspace = ${WS} AND session_id = 'm3'`;
      expect((await engine.list(WS, ["m3"])).map((r) => r.title)).toEqual(["changed"]);
      expect(queries()).toBe(3);
      // Listed again: the rows only, the roots are held (and m3's record is current).
      const again = await engine.listRoots(WS, { tags: { user: "u1" } });
      expect(again.map((r) => r.sessionId).sort()).toEqual(["m1", "m3"]);
      expect(queries()).toBe(4);
      expect((await engine.list(WS, ["m3"])).map((r) => r.title)).toEqual(["changed"]);
      expect(queries()).toBe(4);
      // Ids it did not read (m0 does not hold the tags): a query.
      await engine.listRoots(WS, { tags: { user: "u1" } });
      expect((await engine.list(WS, ["m0", "m3"])).map((r) => r.sessionId).sort()).toEqual([
        "m0",
        "m3",
      ]);
      expect(queries()).toBe(6);
    } finally {
      await recorder.stop();
    }
  });

  it("a session deleted and created again under its id is listed with its new root, not the one held", async () => {
    const opened = await openPostgres();
    await engine?.close();
    engine = opened.engine;
    const store = new SessionStore(engine);
    await store.create({ workspace: WS, sessionId: "r0", title: "first", tags: { user: "u1" } });
    const before = await engine.listRoots(WS, { tags: { user: "u1" } });
    const first = before.find((r) => r.sessionId === "r0");
    expect(first?.root?.kind.case).toBe("sessionInfo");
    // Another replica's delete and create: this engine holds the old incarnation's root.
    await opened.admin`DELETE FROM sessiond_sessions WHERE workspace = ${WS} AND session_id = 'r0'`;
    const other = new SessionStore(await PostgresEngine.open({ url: opened.url }));
    try {
      await other.create({ workspace: WS, sessionId: "r0", title: "second", tags: { user: "u1" } });
    } finally {
      await other.close();
    }
    const after = await engine.listRoots(WS, { tags: { user: "u1" } });
    const second = after.find((r) => r.sessionId === "r0");
    expect(second?.root?.id).not.toBe(first?.root?.id);
    const filter = create(SessionFilterSchema, { tags: { user: "u1" } });
    const page = await store.list({ workspace: WS, filter });
    expect(page.sessions.find((m) => m.id === "r0")?.title).toBe("second");
  });
}
