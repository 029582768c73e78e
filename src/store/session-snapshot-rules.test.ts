/**
 * Rules of Session that the paging and state suites leave open: a page
 * token's snapshot must still be in the log (every id it names, at or
 * below its head seq, and the head itself), a forged offset at the end of
 * the messages is refused, the known-size shortcut only answers a first
 * page without a count, and the smaller refusals (a Leaf entry has no
 * state; entries() names the bad argument and honours its limit).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { expectCode, user } from "../../test/support/fixtures.js";
import { MemoryEngine } from "../storage/memory.js";
import type { Session } from "./session.js";
import { SessionStore } from "./session-store.js";
import { encodeStateToken } from "./snapshot-token.js";

let store: SessionStore;
let session: Session;

/** Deletes session "s" and creates it again with user entries of these ids (seqs 2, 3, ...). */
async function recreate(...ids: string[]): Promise<Session> {
  await store.delete(undefined, "s");
  await store.create({ sessionId: "s" });
  const again = await store.open(undefined, "s");
  if (ids.length > 0) await again.append(ids.map((id) => user(id)));
  return again;
}

beforeEach(async () => {
  store = new SessionStore(new MemoryEngine());
  await store.create({ sessionId: "s", workspace: "default" });
  session = await store.open(undefined, "s");
  await session.append([user("a"), user("b"), user("c")]); // seqs 2..4, leaf c
});

describe("Session", () => {
  it("names its workspace and id", () => {
    expect(session.workspace).toBe("default");
    expect(session.id).toBe("s");
  });

  describe("a page token's snapshot must still be in the log", () => {
    const statePage2 = async (atEntryId?: string) =>
      (await session.statePage({ view: View.HISTORY, pageSize: 1, atEntryId })).nextPageToken;
    const treePage2 = async () => (await session.treePage({ pageSize: 1 })).nextPageToken;

    it("ABORTED when the snapshot's leaf is gone, though the log is as long", async () => {
      const [state, tree] = [await statePage2(), await treePage2()];
      const again = await recreate("x", "y", "z"); // head 4 again, no c
      await expectCode(() => again.statePage({ view: View.HISTORY, pageToken: state }), "ABORTED");
      await expectCode(() => again.treePage({ pageToken: tree }), "ABORTED");
    });

    it("ABORTED when the entry folded to is gone, though the leaf is back", async () => {
      const state = await statePage2("b");
      const again = await recreate("x", "y", "c"); // c at seq 4 again, no b
      await expectCode(() => again.statePage({ view: View.HISTORY, pageToken: state }), "ABORTED");
    });

    it("ABORTED when the leaf is back but after the snapshot's head seq", async () => {
      const [state, tree] = [await statePage2(), await treePage2()];
      const again = await recreate("x", "y", "z", "c"); // c at seq 5
      await expectCode(() => again.statePage({ view: View.HISTORY, pageToken: state }), "ABORTED");
      await expectCode(() => again.treePage({ pageToken: tree }), "ABORTED");
    });

    it("ABORTED when the log is now shorter than the snapshot, though its ids are there", async () => {
      const [state, tree] = [await statePage2(), await treePage2()];
      const again = await recreate("c"); // c at seq 2, head 2
      await expectCode(() => again.statePage({ view: View.HISTORY, pageToken: state }), "ABORTED");
      await expectCode(() => again.treePage({ pageToken: tree }), "ABORTED");
    });

    it("a page token of an unchanged log goes on", async () => {
      const state = await statePage2("b");
      const page = await session.statePage({ view: View.HISTORY, pageToken: state });
      expect(page.state.messages.map((m) => m.entryId)).toEqual(["b"]);
    });
  });

  it("refuses a forged state token whose offset is at the end of the messages", async () => {
    const at = { headSeq: 4, leafId: "c", at: "c", view: View.HISTORY as const };
    const last = encodeStateToken(session.key, { ...at, offset: 2 });
    const page = await session.statePage({ view: View.HISTORY, pageToken: last });
    expect(page.state.messages.map((m) => m.entryId)).toEqual(["c"]);
    await expectCode(
      () =>
        session.statePage({
          view: View.HISTORY,
          pageToken: encodeStateToken(session.key, { ...at, offset: 3 }),
        }),
      "INVALID_ARGUMENT",
      "page_token",
    );
  });

  describe("the known-size shortcut", () => {
    const knownSize = () => 1; // always fits

    it("does not answer a request with a page size", async () => {
      const page = await session.statePage({ pageSize: 1, maxBytes: 100, knownSize });
      expect(page.state.messages.map((m) => m.entryId)).toEqual(["a"]);
      expect(page.nextPageToken).not.toBe("");
    });

    it("does not answer a later page", async () => {
      const first = await session.statePage({ pageSize: 1 });
      const second = await session.statePage({
        pageToken: first.nextPageToken,
        maxBytes: 100,
        knownSize,
      });
      expect(second.state.messages.map((m) => m.entryId)).toEqual(["b", "c"]);
    });
  });

  it("answers a state at a Leaf entry with INVALID_ARGUMENT saying it has no state", async () => {
    const moved = await session.rewind("a");
    const leafId = moved.entries[0]?.id as string;
    await expectCode(
      () => session.state({ atEntryId: leafId }),
      "INVALID_ARGUMENT",
      `entry "${leafId}" is a Leaf entry and has no state`,
    );
  });

  it("entries() honours its limit and names a bad after_seq or limit", async () => {
    expect((await session.entries(0, 2)).entries.map((e) => e.id).slice(1)).toEqual(["a"]);
    await expectCode(
      () => session.entries(-1, 10),
      "INVALID_ARGUMENT",
      "after_seq -1 is out of range",
    );
    await expectCode(
      () => session.entries(0, -5),
      "INVALID_ARGUMENT",
      "limit -5 is out of range (max page size 1000)",
    );
  });
});
