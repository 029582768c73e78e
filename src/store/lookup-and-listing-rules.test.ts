/**
 * Finding and listing sessions, rule by rule: what a malformed parent or a
 * page token of another listing is told, when a page says more follow,
 * how an ambiguous prefix names its candidates, a session that vanishes
 * between finding and reading it, and which id an import takes.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { expectCode, user } from "../../test/support/fixtures.js";
import { SESSION_ID_PATTERN } from "../core/ids.js";
import { MemoryEngine } from "../storage/memory.js";
import { SessionStore } from "./session-store.js";

function storeOf(engine = new MemoryEngine()): SessionStore {
  return new SessionStore(engine);
}

describe("listing sessions", () => {
  it("refuses a parent_session_id outside the id pattern, naming the field", async () => {
    await expectCode(
      storeOf().list({ parentSessionId: "../p" }),
      "INVALID_ARGUMENT",
      "parent_session_id",
    );
  });

  it("refuses a page token of another listing (other order or other parent), saying so", async () => {
    const store = storeOf();
    for (const id of ["a1", "a2", "a3"]) await store.create({ sessionId: id });
    const { nextPageToken } = await store.list({ pageSize: 1 });
    expect(nextPageToken).not.toBe("");
    await expectCode(
      store.list({ pageSize: 1, pageToken: nextPageToken, order: "oldest" }),
      "INVALID_ARGUMENT",
      "belongs to a different listing",
    );
    await expectCode(
      store.list({ pageSize: 1, pageToken: nextPageToken, parentSessionId: "a1" }),
      "INVALID_ARGUMENT",
      "belongs to a different listing",
    );
  });

  it("gives no next page token when the sessions fill the page exactly", async () => {
    const store = storeOf();
    for (const id of ["a1", "a2", "a3"]) await store.create({ sessionId: id });
    const page = await store.list({ pageSize: 3 });
    expect(page.sessions).toHaveLength(3);
    expect(page.nextPageToken).toBe("");
    const short = await store.list({ pageSize: 2 });
    expect(short.nextPageToken).not.toBe("");
  });
});

describe("finding a session by prefix", () => {
  it("an ambiguous prefix names its candidates in id order, and '…' only when more than five match", async () => {
    const store = storeOf();
    for (const id of ["abcd-5", "abcd-3", "abcd-1", "abcd-4", "abcd-2"]) {
      await store.create({ sessionId: id });
    }
    const five = await expectCode(store.get(undefined, "abcd"), "FAILED_PRECONDITION");
    expect(five.message).toContain("it matches abcd-1, abcd-2, abcd-3, abcd-4, abcd-5 (give more");
    await store.create({ sessionId: "abcd-0" });
    const six = await expectCode(store.get(undefined, "abcd"), "FAILED_PRECONDITION");
    expect(six.message).toContain(
      "it matches abcd-0, abcd-1, abcd-2, abcd-3, abcd-4, … (give more",
    );
  });

  it("a session found but gone when its record is read is NOT_FOUND, naming it and its workspace", async () => {
    const engine = new MemoryEngine();
    const store = storeOf(engine);
    await store.create({ sessionId: "vanishing", workspace: "ws" });
    engine.list = async () => []; // deleted between the lookup and the read
    await expectCode(store.get("ws", "vanishing"), "NOT_FOUND", '"vanishing"', '"ws"');
  });
});

describe("the id an import takes", () => {
  const root = (sessionId: string) =>
    create(EntrySchema, { id: "root", kind: { case: "sessionInfo", value: { sessionId } } });

  it("is the one its SessionInfo root records, when the caller names none", async () => {
    const store = storeOf();
    const { session: meta } = await store.import(undefined, [
      root("recorded-id"),
      user("u1", "hi", "root"),
    ]);
    expect(meta.id).toBe("recorded-id");
  });

  it("is a new generated id when the root records none", async () => {
    const store = storeOf();
    const { session: meta } = await store.import(undefined, [root("")]);
    expect(meta.id).toMatch(SESSION_ID_PATTERN);
    expect(meta.id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/);
  });

  it("a first entry that is not a SessionInfo is refused by the import's own rule, not as a bad id", async () => {
    const store = storeOf();
    const err = await expectCode(store.import(undefined, [user("u1", "hi")]), "INVALID_ARGUMENT");
    expect(err.message).not.toContain("session id");
    expect(err.message).toContain("u1");
  });
});
