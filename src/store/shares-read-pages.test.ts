import { toBinary } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ContentPart, type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { expectCode, user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { encodeToken } from "./page-token.js";
import type { Session } from "./session.js";
import { SessionStore } from "./session-store.js";

/**
 * ReadShare's pages, on every engine: the page tokens it takes (only its
 * own, for this share, with a start inside the path), page_size, the byte
 * budget of a page (each entry's encoded size plus 8), and the blobs it
 * inlines (those of at most half the budget; one whose bytes are gone stays
 * a reference), without touching the stored log.
 */

const T0 = Date.parse("2026-03-04T05:06:07.000Z");
const BLOB_TEXT = "x".repeat(300);

const ids = (entries: readonly Entry[]) => entries.map((e) => e.id);

/** The content parts of message entry `id` of `entries`. */
function partsOf(entries: readonly Entry[], id: string): ContentPart[] {
  const e = entries.find((x) => x.id === id);
  return e?.kind.case === "message" ? e.kind.value.content : [];
}

describe.each(STORE_ENGINE_FACTORIES)("share pages on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let session: Session;
  const ws = "team";
  let token: string;
  let id: string;

  // root ─ u1 ─ u2 ─ b1 (a 300-byte text, stored as a blob: the threshold is 64 bytes)
  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, {
      now: () => new Date(T0),
      limits: { blobThresholdBytes: 64 },
    });
    await store.create({ workspace: ws, sessionId: "sess", title: "t" });
    session = await store.open(ws, "sess");
    await session.append([user("u1", "one"), user("u2", "two"), user("b1", BLOB_TEXT)]);
    token = (await store.shares.create({ workspace: ws, session: "sess" })).token;
    id = token.slice(0, 12);
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  /** A page token of this share starting at `start` (as the server issues them). */
  const at = (start: number) => encodeToken(["share", id, start]);

  it("a session without a title reads an empty title", async () => {
    await store.create({ workspace: ws, sessionId: "untitled" });
    const share = await store.shares.create({ workspace: ws, session: "untitled" });
    const snap = await store.shares.read(share.token);
    expect(snap.title).toBe("");
    expect(snap.entries).toHaveLength(1);
  });

  describe("page tokens", () => {
    it("a token issued for the page after n entries starts there", async () => {
      const first = await store.shares.read(token, { pageSize: 2 });
      expect(first.tokenAfter(2)).toBe(at(2));
      const rest = await store.shares.read(token, { pageToken: first.tokenAfter(2) });
      expect(ids(rest.entries)).toEqual(["u2", "b1"]);
      expect(rest.tokenAfter(2)).toBe("");
    });

    it("start 0 reads the whole path; start at the path's end reads an empty last page", async () => {
      expect(ids((await store.shares.read(token, { pageToken: at(0) })).entries)).toHaveLength(4);
      const end = await store.shares.read(token, { pageToken: at(4) });
      expect(end.entries).toEqual([]);
      expect(end.tokenAfter(0)).toBe("");
    });

    it("a token of another share of the same session is INVALID_ARGUMENT", async () => {
      const other = (await store.shares.create({ workspace: ws, session: "sess" })).token;
      const page = await store.shares.read(other, { pageSize: 1 });
      await expectCode(
        store.shares.read(token, { pageToken: page.tokenAfter(1) }),
        "INVALID_ARGUMENT",
        "page_token",
      );
    });

    it.each([
      ["a field too many", ["share", "ID", 1, "x"]],
      ["a field too few", ["share", "ID"]],
      ["a listing's kind", ["shares", "ID", 1]],
      ["a start that is a string", ["share", "ID", "1"]],
      ["a negative start", ["share", "ID", -1]],
      ["a fractional start", ["share", "ID", 1.5]],
      ["a start past the path's end", ["share", "ID", 5]],
    ])("a forged token with %s is INVALID_ARGUMENT", async (_what, fields) => {
      const forged = encodeToken(fields.map((f) => (f === "ID" ? id : f)));
      await expectCode(
        store.shares.read(token, { pageToken: forged }),
        "INVALID_ARGUMENT",
        "page_token",
      );
    });
  });

  describe("page_size", () => {
    it("a negative one is INVALID_ARGUMENT naming it", async () => {
      const err = await expectCode(store.shares.read(token, { pageSize: -1 }), "INVALID_ARGUMENT");
      expect(err.message).toBe("page_size -1 is out of range");
    });

    it("a fractional one is INVALID_ARGUMENT naming it", async () => {
      await expectCode(
        store.shares.read(token, { pageSize: 1.5 }),
        "INVALID_ARGUMENT",
        "page_size 1.5 is out of range",
      );
    });
  });

  describe("the byte budget", () => {
    /** What root and u1 take of a budget: their encoded sizes plus 8 each. */
    const twoEntries = async () => {
      const [root, u1] = (await store.shares.read(token)).entries as [Entry, Entry];
      return toBinary(EntrySchema, root).length + 8 + toBinary(EntrySchema, u1).length + 8;
    };

    it("a page holds the entries whose sizes plus 8 bytes each fit exactly", async () => {
      const budget = await twoEntries();
      const page = await store.shares.read(token, { budgetBytes: budget });
      expect(ids(page.entries)).toEqual([expect.any(String), "u1"]);
      expect(page.tokenAfter(page.entries.length)).toBe(at(2));
    });

    it("one byte less and the second entry waits for the next page", async () => {
      const budget = await twoEntries();
      const page = await store.shares.read(token, { budgetBytes: budget - 1 });
      expect(page.entries).toHaveLength(1);
    });
  });

  describe("blobs", () => {
    /** The page that starts at b1, with this budget. */
    const b1Page = (budgetBytes?: number) =>
      store.shares.read(token, { pageToken: at(3), budgetBytes });

    it("the blob is a reference in the stored log", async () => {
      const stored = (await session.entries()).entries;
      expect(partsOf(stored, "b1").map((p) => p.part.case)).toEqual(["blob"]);
    });

    it("a blob of half the budget is inlined as the part it stands for", async () => {
      const page = await b1Page(600);
      expect(partsOf(page.entries, "b1").map((p) => p.part)).toEqual([
        { case: "text", value: BLOB_TEXT },
      ]);
    });

    it("a blob of more than half the budget stays a reference", async () => {
      const page = await b1Page(599);
      const [part] = partsOf(page.entries, "b1");
      expect(part?.part.case).toBe("blob");
      expect(part?.part.case === "blob" && part.part.value.size).toBe(300n);
    });

    it("without a budget every blob is inlined", async () => {
      const page = await store.shares.read(token);
      expect(partsOf(page.entries, "b1").map((p) => p.part.case)).toEqual(["text"]);
      expect(partsOf(page.entries, "u1").map((p) => p.part)).toEqual([
        { case: "text", value: "one" },
      ]);
    });

    it("inlining leaves the stored log as it was", async () => {
      await b1Page(600);
      expect(partsOf((await session.entries()).entries, "b1").map((p) => p.part.case)).toEqual([
        "blob",
      ]);
      expect(partsOf((await b1Page(599)).entries, "b1").map((p) => p.part.case)).toEqual(["blob"]);
    });

    it("a blob whose bytes are gone stays a reference", async () => {
      const [ref] = partsOf((await session.entries()).entries, "b1");
      if (ref?.part.case !== "blob") throw new Error("b1 is not a blob reference");
      const removed = await fixture.engine.blobs.delete(
        ws,
        ref.part.value.sha256,
        false,
        Number.MAX_SAFE_INTEGER,
      );
      expect(removed).toBe(true);
      const page = await b1Page();
      expect(partsOf(page.entries, "b1")).toEqual([ref]);
    });
  });
});
