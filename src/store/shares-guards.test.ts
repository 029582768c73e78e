import { type Timestamp, timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import { expectCode, user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { withMembers } from "../../test/support/with-members.js";
import { dataLoss } from "../core/errors.js";
import { withheldMarker } from "../core/withheld.js";
import type { StorageEngine } from "../storage/engine.js";
import type { ShareRecord } from "../storage/shares.js";
import { SessionStore } from "./session-store.js";
import { MAX_SHARE_MS, shareDigest } from "./shares.js";

/**
 * What guards a share, on every engine: the exact refusals of CreateShare
 * (expiry bounds with the times they name, the length of `by` in
 * characters), RevokeShare by an id (unknown, naming two shares, not an id),
 * `live` (the web page's check), the shares ReadShare will not read (a
 * token not of the token's form, a session made again with the same entry
 * ids, a session erased behind the store's back), a damaged session, and an
 * engine without share links.
 */

const T0 = Date.parse("2026-03-04T05:06:07.000Z");
const DAY = 24 * 60 * 60 * 1000;
const NO_SHARE = "share not found (the link is wrong, revoked or expired)";

describe.each(STORE_ENGINE_FACTORIES)("share guards on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let nowMs: number;
  const ws = "team";

  beforeEach(async () => {
    nowMs = T0;
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { now: () => new Date(nowMs) });
    await store.create({ workspace: ws, sessionId: "sess", title: "t" });
    await (await store.open(ws, "sess")).append([user("u1", "question"), user("u2", "more")]);
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  const storedRecord = async (token: string): Promise<ShareRecord> =>
    (await fixture.engine.shares?.byDigest(shareDigest(token))) as ShareRecord;

  describe("CreateShare refusals", () => {
    it("an expires_at in the past names it and now, both as ISO times", async () => {
      const err = await expectCode(
        store.shares.create({ workspace: ws, session: "sess", expiresAt: timestampFromMs(T0 - 1) }),
        "INVALID_ARGUMENT",
      );
      expect(err.message).toBe(
        "expires_at 2026-03-04T05:06:06.999Z is not in the future (now 2026-03-04T05:06:07.000Z)",
      );
    });

    it("an expires_at over 365 days away names it and the latest allowed", async () => {
      const err = await expectCode(
        store.shares.create({
          workspace: ws,
          session: "sess",
          expiresAt: timestampFromMs(T0 + MAX_SHARE_MS + 1),
        }),
        "INVALID_ARGUMENT",
      );
      expect(err.message).toBe(
        "expires_at 2027-03-04T05:06:07.001Z is more than 365 days from now (at most 2027-03-04T05:06:07.000Z)",
      );
    });

    it("an expires_at past what a date can hold is named by its raw value", async () => {
      // 1e13 s is beyond the ±8.64e15 ms a JavaScript Date holds.
      const expiresAt = { ...timestampFromMs(0), seconds: 10_000_000_000_000n };
      await expectCode(
        store.shares.create({ workspace: ws, session: "sess", expiresAt }),
        "INVALID_ARGUMENT",
        "expires_at NaN is not in the future",
      );
    });

    it("an expires_at at the last instant a date holds is named as its ISO time", async () => {
      const expiresAt = { ...timestampFromMs(0), seconds: 8_640_000_000_000n };
      await expectCode(
        store.shares.create({ workspace: ws, session: "sess", expiresAt }),
        "INVALID_ARGUMENT",
        "expires_at +275760-09-13T00:00:00.000Z is more than 365 days from now",
      );
    });

    it("by may be 256 characters (counted as code points, not UTF-16 units), not 257", async () => {
      const full = await store.shares.create({
        workspace: ws,
        session: "sess",
        by: "b".repeat(256),
      });
      expect(full.by).toHaveLength(256);
      const emoji = "\u{1F600}".repeat(256);
      expect((await store.shares.create({ workspace: ws, session: "sess", by: emoji })).by).toBe(
        emoji,
      );
      const err = await expectCode(
        store.shares.create({ workspace: ws, session: "sess", by: "b".repeat(257) }),
        "INVALID_ARGUMENT",
      );
      expect(err.message).toBe("by is longer than 256 characters");
    });

    it("a share made without expires_at lives 7 days", async () => {
      const share = await store.shares.create({ workspace: ws, session: "sess" });
      expect(timestampDate(share.expiresAt as Timestamp).toISOString()).toBe(
        "2026-03-11T05:06:07.000Z",
      );
      nowMs = T0 + 7 * DAY - 1;
      expect(await store.shares.live(share.token)).toBe(true);
      nowMs = T0 + 7 * DAY;
      expect(await store.shares.live(share.token)).toBe(false);
    });

    it("a share made without by has an empty by, listed and stored", async () => {
      const share = await store.shares.create({ workspace: ws, session: "sess" });
      expect(share.by).toBe("");
      expect((await store.shares.list({ workspace: ws })).shares[0]?.by).toBe("");
      expect((await storedRecord(share.token)).by).toBe("");
    });
  });

  describe("RevokeShare by id", () => {
    it("an id no share has is NOT_FOUND naming the id and the workspace", async () => {
      await store.shares.create({ workspace: ws, session: "sess" });
      const err = await expectCode(store.shares.revoke(ws, "Zzzzzzzzzzzz"), "NOT_FOUND");
      expect(err.message).toBe(`share "Zzzzzzzzzzzz" not found in workspace "${ws}"`);
    });

    it("an id two shares of the workspace start with is FAILED_PRECONDITION; the whole token still revokes", async () => {
      const share = await store.shares.create({ workspace: ws, session: "sess" });
      const record = await storedRecord(share.token);
      const twin = `${share.token.slice(0, 12)}${"Q".repeat(31)}`;
      await fixture.engine.shares?.put({ ...record, digest: shareDigest(twin) });
      const id = share.token.slice(0, 12);
      const err = await expectCode(store.shares.revoke(ws, id), "FAILED_PRECONDITION");
      expect(err.message).toBe(
        `share id "${id}" names 2 shares in workspace "${ws}": give the whole token`,
      );
      await store.shares.read(share.token);
      expect((await store.shares.revoke(ws, share.token)).revoked).toBe(true);
      await expectCode(store.shares.read(share.token), "NOT_FOUND", NO_SHARE);
      await store.shares.read(twin);
    });

    it("a string that is neither a token nor an id is INVALID_ARGUMENT quoting only its first 12 characters", async () => {
      const short = await expectCode(store.shares.revoke(ws, "short"), "INVALID_ARGUMENT");
      expect(short.message).toBe(
        'token "short"… is neither a share token (43 characters) nor a share id (12)',
      );
      const long = `abcdefghijkl${"m".repeat(40)}`;
      const err = await expectCode(
        store.shares.revoke(ws, long),
        "INVALID_ARGUMENT",
        '"abcdefghijkl"…',
      );
      expect(err.message).not.toContain("mm");
    });
  });

  describe("the token's form", () => {
    // Random tokens hold each of these only by chance: this one holds every edge of the alphabet.
    const edges = `${"AZaz09_-".repeat(5)}Mmm`;

    it("a token with every edge of the base64url alphabet (A Z a z 0 9 _ -) is live, reads and revokes", async () => {
      const share = await store.shares.create({ workspace: ws, session: "sess" });
      await fixture.engine.shares?.put({
        ...(await storedRecord(share.token)),
        digest: shareDigest(edges),
        id: edges.slice(0, 12),
      });
      expect(await store.shares.live(edges)).toBe(true);
      expect((await store.shares.read(edges)).entries).toHaveLength(3);
      expect((await store.shares.revoke(ws, edges)).revoked).toBe(true);
    });

    it("a token with a character more, before or after, is neither a token nor an id", async () => {
      for (const t of [`${edges}A`, `A${edges}`]) {
        await expectCode(
          store.shares.revoke(ws, t),
          "INVALID_ARGUMENT",
          "is neither a share token",
        );
      }
    });
  });

  describe("live (the share page's check)", () => {
    it("true for a share made; false once revoked", async () => {
      const share = await store.shares.create({ workspace: ws, session: "sess" });
      expect(await store.shares.live(share.token)).toBe(true);
      await store.shares.revoke(ws, share.token);
      expect(await store.shares.live(share.token)).toBe(false);
    });

    it("true until the last millisecond before expires_at, false at it", async () => {
      const share = await store.shares.create({
        workspace: ws,
        session: "sess",
        expiresAt: timestampFromMs(T0 + DAY),
      });
      nowMs = T0 + DAY - 1;
      expect(await store.shares.live(share.token)).toBe(true);
      nowMs = T0 + DAY;
      expect(await store.shares.live(share.token)).toBe(false);
    });

    it("false for an unknown token and for one not of the token's form", async () => {
      expect(await store.shares.live("D".repeat(43))).toBe(false);
      expect(await store.shares.live("../etc/passwd")).toBe(false);
    });
  });

  describe("what ReadShare will not read", () => {
    it("a string not of the token's form, even when a record carries its digest", async () => {
      const share = await store.shares.create({ workspace: ws, session: "sess" });
      const forged = "not-a-token";
      await fixture.engine.shares?.put({
        ...(await storedRecord(share.token)),
        digest: shareDigest(forged),
      });
      await expectCode(store.shares.read(forged), "NOT_FOUND", NO_SHARE);
      expect(await store.shares.live(forged)).toBe(false);
    });

    it("a session deleted behind the store's back and made again with the shared entry's id", async () => {
      const share = await store.shares.create({ workspace: ws, session: "sess", entryId: "u1" });
      await fixture.engine.delete({ workspace: ws, sessionId: "sess" });
      await store.create({ workspace: ws, sessionId: "sess" });
      await (await store.open(ws, "sess")).append([user("u1", "another question")]);
      await expectCode(store.shares.read(share.token), "NOT_FOUND", NO_SHARE);
    });

    it("a session erased behind the store's back (its shares still live)", async (ctx) => {
      const erase = fixture.engine.erase?.bind(fixture.engine);
      if (erase === undefined) ctx.skip(); // erasure itself is not built on this engine
      const share = await store.shares.create({ workspace: ws, session: "sess" });
      await erase?.(
        { workspace: ws, sessionId: "sess" },
        withheldMarker(WithheldReason.ERASED, "ops", timestampFromMs(T0), "gdpr"),
      );
      expect(await store.shares.live(share.token)).toBe(true);
      await expectCode(store.shares.read(share.token), "NOT_FOUND", NO_SHARE);
    });
  });

  describe("a session that cannot be read", () => {
    let failure: Error | undefined;

    beforeEach(() => {
      failure = undefined;
      const engine = fixture.engine;
      const failing = withMembers(engine, {
        load: async (...args: Parameters<StorageEngine["load"]>) => {
          if (failure !== undefined) throw failure;
          return engine.load(...args);
        },
      });
      store = new SessionStore(failing, { now: () => new Date(nowMs) });
    });

    it("damaged (DATA_LOSS): DATA_LOSS saying the shared session is damaged, no more", async () => {
      const share = await store.shares.create({ workspace: ws, session: "sess" });
      failure = dataLoss(`line 3 of session "sess" in workspace "${ws}" is corrupt`);
      const err = await expectCode(store.shares.read(share.token), "DATA_LOSS");
      expect(err.message).toBe("the shared session is damaged");
    });

    it("any other failure comes through as it is", async () => {
      const share = await store.shares.create({ workspace: ws, session: "sess" });
      failure = new Error("disk on fire");
      await expect(store.shares.read(share.token)).rejects.toBe(failure);
    });
  });

  describe("an engine without share links", () => {
    beforeEach(() => {
      store = new SessionStore(withMembers(fixture.engine, { shares: undefined }), {
        now: () => new Date(nowMs),
      });
    });

    it("CreateShare, ListShares, RevokeShare and ReadShare are UNIMPLEMENTED naming the engine", async () => {
      const msg = `share links are not built for the ${fixture.engine.kind} engine`;
      for (const call of [
        () => store.shares.create({ workspace: ws, session: "sess" }),
        () => store.shares.list({ workspace: ws }),
        () => store.shares.revoke(ws, "E".repeat(43)),
        () => store.shares.read("E".repeat(43)),
      ]) {
        const err = await expectCode(call, "UNIMPLEMENTED");
        expect(err.message).toBe(msg);
      }
    });

    it("no link is live, and deleting a session has nothing to revoke", async () => {
      expect(await store.shares.live("E".repeat(43))).toBe(false);
      expect(await store.delete(ws, "sess")).toEqual(["sess"]);
      expect(await store.shares.revokeSessions(ws, ["sess"])).toBe(0);
    });
  });
});
