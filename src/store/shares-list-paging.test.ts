import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectCode } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import type { ShareRecord } from "../storage/shares.js";
import { encodeToken } from "./page-token.js";
import { SessionStore } from "./session-store.js";
import { shareDigest } from "./shares.js";

/**
 * ListShares' pages, on every engine: page_size shares a page and a next
 * token only when more follow, shares made in the same millisecond ordered
 * by digest (so a page boundary among them loses none), and the page
 * tokens it refuses.
 */

const T0 = Date.parse("2026-03-04T05:06:07.000Z");

describe.each(STORE_ENGINE_FACTORIES)("share listing pages on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let nowMs: number;
  const ws = "team";

  beforeEach(async () => {
    nowMs = T0;
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { now: () => new Date(nowMs) });
    await store.create({ workspace: ws, sessionId: "sess", title: "t" });
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  /** `n` shares, one a second from T0; their tokens, oldest first. */
  const makeShares = async (n: number, stepMs = 1000): Promise<string[]> => {
    const tokens: string[] = [];
    for (let i = 0; i < n; i++) {
      nowMs = T0 + i * stepMs;
      tokens.push((await store.shares.create({ workspace: ws, session: "sess" })).token);
    }
    return tokens;
  };

  /** The ids of every share, listed one a page (at most 10 pages). */
  const oneByOne = async (): Promise<string[]> => {
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await store.shares.list({ workspace: ws, pageSize: 1, pageToken });
      seen.push(...page.shares.map((s) => s.token));
      pageToken = page.nextPageToken;
    } while (pageToken !== "" && seen.length < 10);
    return seen;
  };

  it("a page holds page_size shares, the newest, and a token for the rest", async () => {
    const tokens = await makeShares(5);
    const page = await store.shares.list({ workspace: ws, pageSize: 3 });
    expect(page.shares.map((s) => s.token)).toEqual(
      tokens
        .slice(2)
        .reverse()
        .map((t) => t.slice(0, 12)),
    );
    expect(page.nextPageToken).not.toBe("");
  });

  it("a page that takes exactly the shares left is the last: no next token", async () => {
    await makeShares(3);
    const page = await store.shares.list({ workspace: ws, pageSize: 3 });
    expect(page.shares).toHaveLength(3);
    expect(page.nextPageToken).toBe("");
  });

  it("shares of the same millisecond list by digest, highest first, and page one by one without a loss", async () => {
    const tokens = await makeShares(5, 0);
    const expected = [...tokens]
      .sort((a, b) => (shareDigest(a) < shareDigest(b) ? 1 : -1))
      .map((t) => t.slice(0, 12));
    expect((await store.shares.list({ workspace: ws })).shares.map((s) => s.token)).toEqual(
      expected,
    );
    expect(await oneByOne()).toEqual(expected);
  });

  it("newer lists first whatever the digests; in one millisecond the higher digest first", async () => {
    const [token] = await makeShares(1);
    const made = (await fixture.engine.shares?.byDigest(
      shareDigest(token as string),
    )) as ShareRecord;
    // Put oldest first: neither the order of putting nor that of the digests is the listing's.
    for (const [digest, id, createdAtMs] of [
      ["f".repeat(64), "f-oldest", T0 - 2000],
      ["0".repeat(64), "0-newer", T0 - 1000],
      ["8".repeat(64), "8-newer", T0 - 1000],
    ] as const) {
      await fixture.engine.shares?.put({ ...made, digest, id, createdAtMs });
    }
    const expected = [made.id, "8-newer", "0-newer", "f-oldest"];
    expect((await store.shares.list({ workspace: ws })).shares.map((s) => s.token)).toEqual(
      expected,
    );
    expect(await oneByOne()).toEqual(expected);
  });

  it("a token issued by the listing takes the next page", async () => {
    const tokens = await makeShares(3);
    const first = await store.shares.list({ workspace: ws, pageSize: 2 });
    const last = tokens[0] as string;
    expect(first.nextPageToken).toBe(
      encodeToken(["shares", "", T0 + 1000, shareDigest(tokens[1] as string)]),
    );
    const second = await store.shares.list({
      workspace: ws,
      pageSize: 2,
      pageToken: first.nextPageToken,
    });
    expect(second.shares.map((s) => s.token)).toEqual([last.slice(0, 12)]);
  });

  it.each([
    ["a field too many", ["shares", "", T0, "DIGEST", "x"]],
    ["a field too few", ["shares", "", T0]],
    ["a snapshot's kind", ["share", "", T0, "DIGEST"]],
    ["a time that is a string", ["shares", "", String(T0), "DIGEST"]],
    ["a digest that is a number", ["shares", "", T0, 7]],
  ])("a forged token with %s is INVALID_ARGUMENT", async (_what, fields) => {
    const [token] = await makeShares(2);
    const digest = shareDigest(token as string);
    const forged = encodeToken(fields.map((f) => (f === "DIGEST" ? digest : f)));
    await expectCode(
      store.shares.list({ workspace: ws, pageSize: 1, pageToken: forged }),
      "INVALID_ARGUMENT",
      "page_token",
    );
  });
});
