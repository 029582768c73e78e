import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SessionState, View } from "../../gen/sessiond/v1/session_pb.js";
import { assistant, compaction, expectCode, user } from "../../test/support/fixtures.js";
import { ENGINE_FACTORIES, type EngineFixture } from "../../test/support/store-model.js";
import type { Session, StatePageRequest } from "./session.js";
import { SessionStore } from "./session-store.js";
import { encodeStateToken } from "./snapshot-token.js";

/**
 * GetState from_end: the pages of a state run backwards, so that a reader
 * of a long path (the viewer's context view) has its end from one call.
 * The first page holds the last messages, each next one the run before,
 * every page in path order and cut from the first page's snapshot.
 */

const CLOCK = new Date("2026-03-04T05:06:07.000Z");

/** Every page of a from_end reading, in the order read, with what each said. */
async function readBackwards(
  session: Session,
  req: StatePageRequest,
  between: () => Promise<unknown> = async () => {},
): Promise<{ pages: SessionState[]; counts: number[] }> {
  const pages: SessionState[] = [];
  const counts: number[] = [];
  let token = "";
  do {
    const page = await session.statePage({ ...req, fromEnd: true, pageToken: token });
    pages.push(page.state);
    counts.push(page.messageCount);
    token = page.nextPageToken;
    await between();
  } while (token !== "");
  return { pages, counts };
}

const idsOf = (s: SessionState) => s.messages.map((m) => m.entryId);

describe.each(ENGINE_FACTORIES)("GetState from the end on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let session: Session;

  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { now: () => CLOCK });
    await store.create({ sessionId: "sess", title: "Title" });
    session = await store.open(undefined, "sess");
    //   root ─ u1 ─ a1 ─ u2 ─ a2 ─ u3 ─ a3 ─ c1 ─ u4 ─ a4 (leaf); c1 compacts u1 .. a2.
    await session.append([
      user("u1", "one"),
      assistant("a1", "two"),
      user("u2", "three"),
      assistant("a2", "four"),
      user("u3", "five"),
      assistant("a3", "six"),
      compaction("c1", "summary", ["u1", "a1", "u2", "a2"]),
      user("u4", "seven"),
      assistant("a4", "eight"),
    ]);
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("the first page holds the last messages, each next one the run before, in path order", async () => {
    const sizes = { [View.CONTEXT]: [3, 2], [View.HISTORY]: [3, 3, 2] };
    for (const view of [View.CONTEXT, View.HISTORY] as const) {
      const whole = await session.state({ view });
      const { pages } = await readBackwards(session, { view, pageSize: 3 });
      const all = idsOf(whole);
      expect(idsOf(pages[0] as SessionState)).toEqual(all.slice(-3));
      expect(pages.map(idsOf).reverse().flat()).toEqual(all);
      expect(pages.map((p) => p.messages.length)).toEqual(sizes[view]);
      for (const page of pages) {
        expect({ ...page, messages: [] }).toEqual({ ...whole, messages: [] });
      }
    }
  });

  it("says on every page how many messages the whole state holds, in either direction", async () => {
    const whole = await session.state({ view: View.HISTORY });
    const { counts } = await readBackwards(session, { view: View.HISTORY, pageSize: 2 });
    expect(new Set(counts)).toEqual(new Set([whole.messages.length]));
    const forward = await session.statePage({ view: View.HISTORY, pageSize: 2 });
    expect(forward.messageCount).toBe(whole.messages.length);
  });

  it("ends at the entry folded to, and keeps the first page's snapshot while entries are appended", async () => {
    const before = await session.state({ atEntryId: "a3", view: View.HISTORY });
    const { pages } = await readBackwards(
      session,
      { atEntryId: "a3", view: View.HISTORY, pageSize: 2 },
      () => session.append(user(`late-${Math.random().toString(36).slice(2, 8)}`, "late")),
    );
    expect(idsOf(pages[0] as SessionState).at(-1)).toBe("a3");
    expect(pages.map(idsOf).reverse().flat()).toEqual(idsOf(before));
  });

  it("keeps a page within its byte budget, counting back from the end", async () => {
    const sizeOf = () => 10;
    const { pages } = await readBackwards(session, { view: View.HISTORY, maxBytes: 35, sizeOf });
    expect(pages.map((p) => p.messages.length)).toEqual([3, 3, 2]);
    expect(pages.map(idsOf).reverse().flat()).toEqual(
      idsOf(await session.state({ view: View.HISTORY })),
    );
  });

  it("answers a state without messages with one empty page", async () => {
    await store.create({ sessionId: "empty" });
    const empty = await store.open(undefined, "empty");
    const page = await empty.statePage({ fromEnd: true, pageSize: 5 });
    expect(page.state.messages).toEqual([]);
    expect([page.nextPageToken, page.messageCount]).toEqual(["", 0]);
  });

  it("refuses a from_end token read forwards, and a forward token read from the end", async () => {
    const back = await session.statePage({ view: View.HISTORY, pageSize: 1, fromEnd: true });
    await expectCode(
      () => session.statePage({ view: View.HISTORY, pageToken: back.nextPageToken }),
      "INVALID_ARGUMENT",
      "from_end",
    );
    const forward = await session.statePage({ view: View.HISTORY, pageSize: 1 });
    await expectCode(
      () =>
        session.statePage({ view: View.HISTORY, pageToken: forward.nextPageToken, fromEnd: true }),
      "INVALID_ARGUMENT",
      "from_end",
    );
  });

  it("refuses a forged from_end token that points at or past the end of the state", async () => {
    const { headSeq, leafId } = await session.tree();
    for (const offset of [8, 999]) {
      const pageToken = encodeStateToken(session.key, {
        headSeq,
        leafId,
        at: leafId,
        view: View.HISTORY,
        offset,
        fromEnd: true,
      });
      await expectCode(
        () => session.statePage({ view: View.HISTORY, pageToken, fromEnd: true }),
        "INVALID_ARGUMENT",
        "page_token",
      );
    }
  });
});
