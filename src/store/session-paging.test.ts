import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type SessionState,
  type StateMessage,
  type TreeNode,
  View,
} from "../../gen/sessiond/v1/session_pb.js";
import {
  assistant,
  compaction,
  expectCode,
  label,
  modelChange,
  toolResult,
  user,
} from "../../test/support/fixtures.js";
import { ENGINE_FACTORIES, type EngineFixture } from "../../test/support/store-model.js";
import type { PageRequest } from "./page-fill.js";
import type { Session, StatePageRequest } from "./session.js";
import { SessionStore } from "./session-store.js";
import { encodeStateToken, encodeTreeToken } from "./snapshot-token.js";

const CLOCK = new Date("2026-03-04T05:06:07.000Z");

/** Runs `between` after each page, so the log changes while it is being read. */
type Between = (page: number) => Promise<unknown>;

async function readTreePages(
  session: Session,
  req: PageRequest<TreeNode>,
  between: Between = async () => {},
): Promise<{ nodes: TreeNode[]; pages: TreeNode[][]; leafId: string; headSeq: number }> {
  const pages: TreeNode[][] = [];
  let first: { leafId: string; headSeq: number } | undefined;
  let token = "";
  do {
    const page = await session.treePage({ ...req, pageToken: token });
    first ??= page;
    expect([page.leafId, page.headSeq]).toEqual([first.leafId, first.headSeq]);
    pages.push(page.nodes);
    token = page.nextPageToken;
    await between(pages.length);
  } while (token !== "");
  return { nodes: pages.flat(), pages, leafId: first.leafId, headSeq: first.headSeq };
}

async function readStatePages(
  session: Session,
  req: StatePageRequest,
  between: Between = async () => {},
): Promise<{ state: SessionState; pages: SessionState[] }> {
  const pages: SessionState[] = [];
  let token = "";
  do {
    const page = await session.statePage({ ...req, pageToken: token });
    pages.push(page.state);
    token = page.nextPageToken;
    await between(pages.length);
  } while (token !== "");
  const first = pages[0] as SessionState;
  return { state: { ...first, messages: pages.flatMap((p) => p.messages) }, pages };
}

describe.each(ENGINE_FACTORIES)("Session paging on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let session: Session;
  /** Numbers the entries appended while a read is under way. */
  let late = 0;

  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { now: () => CLOCK });
    await store.create({ sessionId: "sess", title: "Title" });
    session = await store.open(undefined, "sess");
    //   root ─ m1 ─ u1 ─ a1 ─ u2 ─ a2 ─ lbl ─ u3 ─ a3 ─ u4 ─ c1 ─ u5   (leaf)
    // c1 compacts u1 .. a2 away in CONTEXT.
    await session.append([
      modelChange("m1", "model-a"),
      user("u1", "one"),
      assistant("a1", "two"),
      user("u2", "three"),
      assistant("a2", "four"),
      label("lbl", "mark"),
      user("u3", "five"),
      assistant("a3", "six"),
      user("u4", "seven"),
      compaction("c1", "summary", ["u1", "a1", "u2", "a2"]),
      user("u5", "eight"),
    ]);
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  describe("tree", () => {
    it("read in pages of 5 gives the whole tree, in seq order, split as asked", async () => {
      const whole = await session.tree();
      const read = await readTreePages(session, { pageSize: 5 });
      expect(read.nodes).toEqual(whole.nodes);
      expect(read.pages.map((p) => p.length)).toEqual([5, 5, 2]);
    });

    it("leaves out entries appended between pages and keeps the first page's path after a rewind", async () => {
      const before = await session.tree();
      const read = await readTreePages(session, { pageSize: 4 }, async (page) => {
        if (page === 1) {
          await session.append([assistant("late1", "x"), user("late2", "y")]);
          await session.rewind("u2", { allowBeforeCompaction: true });
          await session.append(assistant("branch", "z"));
        }
      });
      expect(read.nodes).toEqual(before.nodes);
      expect([read.leafId, read.headSeq]).toEqual([before.leafId, before.headSeq]);
      const now = await session.tree();
      expect(now.nodes.find((n) => n.id === "u5")?.onCurrentPath).toBe(false);
    });

    it("keeps a page within its byte budget, and sends an entry bigger than the budget alone", async () => {
      await session.append(user("huge", "h".repeat(70)));
      const sizeOf = (n: TreeNode) => n.preview.length + 10;
      const read = await readTreePages(session, { maxBytes: 40, sizeOf });
      expect(read.nodes).toEqual((await session.tree()).nodes);
      for (const page of read.pages) {
        const bytes = page.reduce((sum, n) => sum + sizeOf(n), 0);
        if (page.length > 1) expect(bytes).toBeLessThanOrEqual(40);
      }
      expect(read.pages.find((p) => p.some((n) => n.id === "huge"))).toHaveLength(1);
    });

    it("answers a garbage page token with INVALID_ARGUMENT", async () => {
      const garbage = [
        "garbage!",
        "bm90IGpzb24",
        Buffer.from("[1,2]").toString("base64url"),
        encodeTreeToken(session.key, { headSeq: 12, leafId: "u5", afterSeq: 12 }),
        encodeStateToken(session.key, {
          headSeq: 12,
          leafId: "u5",
          at: "u5",
          view: View.CONTEXT,
          offset: 1,
        }),
      ];
      for (const pageToken of garbage) {
        await expectCode(() => session.treePage({ pageToken }), "INVALID_ARGUMENT", "page_token");
      }
    });

    it("answers a page token of another session with INVALID_ARGUMENT", async () => {
      await store.create({ sessionId: "other" });
      const other = await store.open(undefined, "other");
      const { nextPageToken } = await session.treePage({ pageSize: 1 });
      await expectCode(
        () => other.treePage({ pageToken: nextPageToken }),
        "INVALID_ARGUMENT",
        "another session",
      );
    });

    it("answers a page token of a session deleted and re-created since with ABORTED", async () => {
      const { nextPageToken } = await session.treePage({ pageSize: 2 });
      await store.delete(undefined, "sess");
      await store.create({ sessionId: "sess", title: "Title" });
      const again = await store.open(undefined, "sess");
      await expectCode(() => again.treePage({ pageToken: nextPageToken }), "ABORTED", "first page");
    });

    it("answers a negative page size with INVALID_ARGUMENT", async () => {
      await expectCode(() => session.treePage({ pageSize: -1 }), "INVALID_ARGUMENT", "page_size");
    });
  });

  describe("state", () => {
    it("read in pages of 2 gives the whole fold, every page carrying the fold's other fields", async () => {
      for (const view of [View.CONTEXT, View.HISTORY]) {
        const whole = await session.state({ view });
        const read = await readStatePages(session, { view, pageSize: 2 });
        expect(read.state).toEqual(whole);
        expect(read.pages.length).toBe(Math.ceil(whole.messages.length / 2));
        for (const page of read.pages) {
          expect({ ...page, messages: [] }).toEqual({ ...whole, messages: [] });
        }
      }
    });

    it("gives the first page's fold while entries are appended and the leaf moves between pages", async () => {
      const before = await session.state({ view: View.HISTORY });
      const read = await readStatePages(session, { view: View.HISTORY, pageSize: 3 }, async () => {
        await session.append(user(`late${++late}`, "late"));
        await session.rewind("a1", { allowBeforeCompaction: true });
      });
      expect(read.state).toEqual(before);
    });

    it("a time-travel read stays on its entry while entries are appended between pages", async () => {
      const before = await session.state({ atEntryId: "a3", view: View.HISTORY });
      const read = await readStatePages(
        session,
        { atEntryId: "a3", view: View.HISTORY, pageSize: 2 },
        () => session.append(user(`late${++late}`, "late")),
      );
      expect(read.state).toEqual(before);
    });

    it("keeps a page within its byte budget after the fold's other fields, a message bigger than it alone", async () => {
      const big = "b".repeat(500);
      await session.append([user("big", big), assistant("after", "small")]);
      const sizeOf = (m: StateMessage) => m.entryId.length * 10 + (m.entryId === "big" ? 500 : 0);
      const sizeOfRest = () => 30;
      const req = { view: View.HISTORY, maxBytes: 80, sizeOf, sizeOfRest };
      const read = await readStatePages(session, req);
      expect(read.state).toEqual(await session.state({ view: View.HISTORY }));
      for (const page of read.pages) {
        const bytes = page.messages.reduce((sum, m) => sum + sizeOf(m), 0);
        if (page.messages.length > 1) expect(bytes).toBeLessThanOrEqual(80 - 30);
      }
      const alone = read.pages.find((p) => p.messages.some((m) => m.entryId === "big"));
      expect(alone?.messages).toHaveLength(1);
    });

    it("answers a page token used with another view or at_entry_id with INVALID_ARGUMENT", async () => {
      const { nextPageToken: pageToken } = await session.statePage({
        view: View.HISTORY,
        pageSize: 1,
      });
      await expectCode(
        () => session.statePage({ view: View.CONTEXT, pageToken }),
        "INVALID_ARGUMENT",
        "page_token",
      );
      await expectCode(
        () => session.statePage({ view: View.HISTORY, atEntryId: "a1", pageToken }),
        "INVALID_ARGUMENT",
        "page_token",
      );
    });

    it("answers a garbage or forged page token with INVALID_ARGUMENT", async () => {
      const forged = [
        "garbage!",
        encodeTreeToken(session.key, { headSeq: 12, leafId: "u5", afterSeq: 3 }),
        encodeStateToken(session.key, {
          headSeq: 12,
          leafId: "u5",
          at: "u5",
          view: View.HISTORY,
          offset: 999,
        }),
      ];
      for (const pageToken of forged) {
        await expectCode(
          () => session.statePage({ view: View.HISTORY, pageToken }),
          "INVALID_ARGUMENT",
          "page_token",
        );
      }
    });

    it("answers a page token of a session deleted and re-created since with ABORTED", async () => {
      const { nextPageToken } = await session.statePage({ view: View.HISTORY, pageSize: 1 });
      await store.delete(undefined, "sess");
      await store.create({ sessionId: "sess" });
      const again = await store.open(undefined, "sess");
      await expectCode(
        () => again.statePage({ view: View.HISTORY, pageToken: nextPageToken }),
        "ABORTED",
      );
    });

    it("answers a state whose known size fits whole, without sizing its messages", async () => {
      let sized = 0;
      const sizeOf = () => ++sized;
      const page = await session.statePage({ maxBytes: 100, sizeOf, knownSize: () => 100 });
      expect(page.nextPageToken).toBe("");
      expect(page.state).toBe(await session.state());
      expect(sized).toBe(0);
    });

    it("still pages a state whose known size is over the budget", async () => {
      const sizeOf = () => 10;
      const page = await session.statePage({ maxBytes: 25, sizeOf, knownSize: () => 26 });
      expect(page.state.messages).toHaveLength(2);
      expect(page.nextPageToken).not.toBe("");
    });

    it("without a count or budget is one page: the whole state", async () => {
      await session.append([assistant("t0", "calls", ["call-1"]), toolResult("t1", "call-1")]);
      const page = await session.statePage({ view: View.HISTORY });
      expect(page.nextPageToken).toBe("");
      expect(page.state).toBe(await session.state({ view: View.HISTORY }));
    });
  });
});
