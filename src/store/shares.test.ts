import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import { assistant, expectCode, toolResult, user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import type { Session } from "./session.js";
import { SessionStore } from "./session-store.js";
import { DEFAULT_SHARE_MS, MAX_SHARE_MS, newShareToken, shareDigest } from "./shares.js";

/**
 * Share links on every engine, through the store: what a share reads (the
 * path root -> entry, read when asked, omissions applied), what makes it
 * unreadable (revoke, expiry, delete, erase: one NOT_FOUND for all), the
 * refusals, listing and paging, and that the token is never stored.
 */

const T0 = Date.parse("2026-03-04T05:06:07.000Z");
const DAY = 24 * 60 * 60 * 1000;
const NO_SHARE = "share not found";

function thinkingAnswer(id: string, parentId: string): Entry {
  return create(EntrySchema, {
    id,
    parentId,
    kind: {
      case: "message",
      value: {
        role: Role.ASSISTANT,
        content: [
          { part: { case: "thinking", value: { thinking: "THINKING-SECRET" } } },
          { part: { case: "text", value: "the answer" } },
        ],
      },
    },
  });
}

describe("newShareToken", () => {
  // One base64url token in 64 would start with "-"; 2,000 draws hold one
  // with probability 1 - (63/64)^2000 (all but 1e-14).
  it("never starts with a dash (a pasted id after --revoke would read as a flag), and stays 43 URL-safe characters, all distinct", () => {
    const tokens = Array.from({ length: 2000 }, newShareToken);
    for (const t of tokens) expect(t).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
  });
});

describe.each(STORE_ENGINE_FACTORIES)("share links on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let session: Session;
  let nowMs: number;
  const ws = "team";

  //   root ─ u1 ─ a1(call c1) ─ t1 ─ u2 ─ a2(thinking)
  //                              └─ x1 (another branch)
  beforeEach(async () => {
    nowMs = T0;
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { now: () => new Date(nowMs) });
    await store.create({ workspace: ws, sessionId: "sess", title: "Shared title" });
    session = await store.open(ws, "sess");
    await session.append([
      user("u1", "question one"),
      assistant("a1", "let me call", ["c1"]),
      toolResult("t1", "c1"),
    ]);
    await session.append([user("x1", "a branch", "t1")]);
    await session.append([user("u2", "question two", "t1"), thinkingAnswer("a2", "u2")]);
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  const ids = (entries: readonly Entry[]) => entries.map((e) => e.id);
  const rootId = async () => (await session.entries(0, 1)).entries[0]?.id as string;

  it("a share of the current leaf reads the path root -> leaf, with the session's title", async () => {
    const share = await store.shares.create({ workspace: ws, session: "sess", by: "ana" });
    expect(share.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(share.path).toBe(`/share/${share.token}`);
    expect(share).toMatchObject({ workspace: ws, sessionId: "sess", entryId: "a2", by: "ana" });
    expect(Number(share.expiresAt?.seconds) * 1000).toBe(T0 + DEFAULT_SHARE_MS);
    const snap = await store.shares.read(share.token);
    expect(ids(snap.entries)).toEqual([await rootId(), "u1", "a1", "t1", "u2", "a2"]);
    expect(snap.title).toBe("Shared title");
    expect(snap.share.token).toBe("");
    expect(snap.share.path).toBe("");
    expect(snap.tokenAfter(snap.entries.length)).toBe("");
  });

  it("a share of an earlier entry reads only its path: no later entries, no other branch", async () => {
    const share = await store.shares.create({ workspace: ws, session: "sess", entryId: "t1" });
    const snap = await store.shares.read(share.token);
    expect(ids(snap.entries)).toEqual([await rootId(), "u1", "a1", "t1"]);
    const x = await store.shares.create({ workspace: ws, session: "sess", entryId: "x1" });
    expect(ids((await store.shares.read(x.token)).entries)).not.toContain("u2");
  });

  it("refusals: unknown session or entry NOT_FOUND naming it, a Leaf entry, an expiry in the past or over 365 days, a long by", async () => {
    await expectCode(
      store.shares.create({ workspace: ws, session: "ghost" }),
      "NOT_FOUND",
      '"ghost"',
    );
    await expectCode(
      store.shares.create({ workspace: ws, session: "sess", entryId: "nope" }),
      "NOT_FOUND",
      '"nope"',
    );
    const moved = await session.rewind("u1");
    await expectCode(
      store.shares.create({ workspace: ws, session: "sess", entryId: lastId(moved) }),
      "INVALID_ARGUMENT",
      "Leaf",
    );
    await expectCode(
      store.shares.create({ workspace: ws, session: "sess", expiresAt: timestampFromMs(T0 - 1) }),
      "INVALID_ARGUMENT",
      "expires_at",
    );
    await expectCode(
      store.shares.create({ workspace: ws, session: "sess", expiresAt: timestampFromMs(T0) }),
      "INVALID_ARGUMENT",
      "not in the future",
    );
    await expectCode(
      store.shares.create({
        workspace: ws,
        session: "sess",
        expiresAt: timestampFromMs(T0 + MAX_SHARE_MS + 1),
      }),
      "INVALID_ARGUMENT",
      "365 days",
    );
    await store.shares.create({
      workspace: ws,
      session: "sess",
      expiresAt: timestampFromMs(T0 + MAX_SHARE_MS),
    });
    await expectCode(
      store.shares.create({ workspace: ws, session: "sess", by: "x".repeat(257) }),
      "INVALID_ARGUMENT",
      "256",
    );
    expect((await store.shares.list({ workspace: ws })).shares).toHaveLength(1);
  });

  it("revoke: NOT_FOUND at once, idempotent, by token or by id; an unknown share or another workspace's is NOT_FOUND", async () => {
    const a = await store.shares.create({ workspace: ws, session: "sess" });
    const b = await store.shares.create({ workspace: ws, session: "sess" });
    await store.shares.read(a.token);
    const revoked = await store.shares.revoke(ws, a.token);
    expect(revoked.revoked).toBe(true);
    expect(revoked.token).toBe(a.token.slice(0, 12));
    await expectCode(store.shares.read(a.token), "NOT_FOUND", NO_SHARE);
    expect((await store.shares.revoke(ws, a.token)).revoked).toBe(true);
    await store.shares.read(b.token);
    await store.shares.revoke(ws, b.token.slice(0, 12));
    await expectCode(store.shares.read(b.token), "NOT_FOUND", NO_SHARE);
    const c = await store.shares.create({ workspace: ws, session: "sess" });
    await expectCode(store.shares.revoke("elsewhere", c.token), "NOT_FOUND", "elsewhere");
    await store.shares.read(c.token);
    const unknown = "A".repeat(43);
    const err = await expectCode(store.shares.revoke(ws, unknown), "NOT_FOUND");
    expect(err.message).not.toContain(unknown);
    await expectCode(store.shares.revoke(ws, "short"), "INVALID_ARGUMENT");
  });

  it("expiry: readable until expires_at, NOT_FOUND from then on with the message of an unknown token", async () => {
    const share = await store.shares.create({
      workspace: ws,
      session: "sess",
      expiresAt: timestampFromMs(T0 + DAY),
    });
    nowMs = T0 + DAY - 1;
    await store.shares.read(share.token);
    nowMs = T0 + DAY;
    const expired = await expectCode(store.shares.read(share.token), "NOT_FOUND");
    const unknown = await expectCode(store.shares.read("B".repeat(43)), "NOT_FOUND");
    const malformed = await expectCode(store.shares.read("../etc/passwd"), "NOT_FOUND");
    expect(expired.message).toBe(unknown.message);
    expect(malformed.message).toBe(unknown.message);
    // Listed, not revoked: its expiry says it is over.
    const [listed] = (await store.shares.list({ workspace: ws })).shares;
    expect(listed?.revoked).toBe(false);
  });

  it("deleting the session revokes its shares; a session made again under the id is not readable through them", async () => {
    const share = await store.shares.create({ workspace: ws, session: "sess" });
    await store.delete(ws, "sess");
    await expectCode(store.shares.read(share.token), "NOT_FOUND", NO_SHARE);
    expect((await store.shares.list({ workspace: ws })).shares[0]?.revoked).toBe(true);
    await store.create({ workspace: ws, sessionId: "sess" });
    await expectCode(store.shares.read(share.token), "NOT_FOUND", NO_SHARE);
  });

  it("a session deleted behind the store's back (retention, another path) is NOT_FOUND too", async () => {
    const share = await store.shares.create({ workspace: ws, session: "sess" });
    await fixture.engine.delete({ workspace: ws, sessionId: "sess" });
    await expectCode(store.shares.read(share.token), "NOT_FOUND", NO_SHARE);
    await store.create({ workspace: ws, sessionId: "sess" });
    await expectCode(store.shares.read(share.token), "NOT_FOUND", NO_SHARE);
  });

  it("erasing the session revokes its shares", async (ctx) => {
    if (fixture.engine.erase === undefined) ctx.skip(); // erasure itself is not built on this engine
    const share = await store.shares.create({ workspace: ws, session: "sess" });
    await store.erase({ workspace: ws, sessionIds: ["sess"], by: "ops" });
    await expectCode(store.shares.read(share.token), "NOT_FOUND", NO_SHARE);
    expect((await store.shares.list({ workspace: ws })).shares[0]?.revoked).toBe(true);
  });

  it("a redaction done after sharing shows in the share as its marker", async () => {
    const share = await store.shares.create({ workspace: ws, session: "sess" });
    await session.redact(["u1"], { by: "ops", why: "pasted key" });
    const snap = await store.shares.read(share.token);
    const u1 = snap.entries.find((e) => e.id === "u1");
    expect(u1?.withheld?.reason).toBe(WithheldReason.REDACTED);
    expect(
      JSON.stringify(u1?.kind.value, (_k, v) => (typeof v === "bigint" ? String(v) : v)),
    ).not.toContain("question one");
  });

  it("omissions: tool outputs and thinking left out, the rest kept", async () => {
    const plain = await store.shares.read(
      (await store.shares.create({ workspace: ws, session: "sess" })).token,
    );
    const omitted = await store.shares.read(
      (
        await store.shares.create({
          workspace: ws,
          session: "sess",
          omitToolOutput: true,
          omitThinking: true,
        })
      ).token,
    );
    const msg = (entries: Entry[], id: string) => {
      const e = entries.find((x) => x.id === id);
      return e?.kind.case === "message" ? e.kind.value : undefined;
    };
    expect(msg(plain.entries, "t1")?.content).toHaveLength(1);
    expect(msg(omitted.entries, "t1")).toMatchObject({
      toolCallId: "c1",
      toolName: "calc",
      content: [],
    });
    expect(msg(plain.entries, "a2")?.content.map((p) => p.part.case)).toEqual(["thinking", "text"]);
    expect(msg(omitted.entries, "a2")?.content.map((p) => p.part.case)).toEqual(["text"]);
    expect(msg(omitted.entries, "a1")?.content.map((p) => p.part.case)).toEqual([
      "text",
      "toolCall",
    ]);
    expect(omitted.share).toMatchObject({ omitToolOutput: true, omitThinking: true });
    // The stored log is untouched.
    expect(msg((await session.entries()).entries, "t1")?.content).toHaveLength(1);
  });

  it("pages: page_size entries a page, the pages together the whole path; a forged page token is INVALID_ARGUMENT", async () => {
    const share = await store.shares.create({ workspace: ws, session: "sess" });
    const seen: string[] = [];
    let token = "";
    let pages = 0;
    do {
      const snap = await store.shares.read(share.token, { pageSize: 4, pageToken: token });
      seen.push(...ids(snap.entries));
      token = snap.tokenAfter(snap.entries.length);
      pages++;
    } while (token !== "");
    expect(pages).toBe(2);
    expect(seen).toEqual([await rootId(), "u1", "a1", "t1", "u2", "a2"]);
    await expectCode(
      store.shares.read(share.token, { pageToken: "bm9wZQ" }),
      "INVALID_ARGUMENT",
      "page_token",
    );
    // A budget cuts the page short (at least one entry).
    const small = await store.shares.read(share.token, { budgetBytes: 1 });
    expect(small.entries).toHaveLength(1);
  });

  it("list: newest first, paged, by session, revoked marked, ids instead of tokens", async () => {
    await store.create({ workspace: ws, sessionId: "other" });
    const made = [];
    for (let i = 0; i < 5; i++) {
      nowMs = T0 + i * 1000;
      made.push(await store.shares.create({ workspace: ws, session: i === 4 ? "other" : "sess" }));
    }
    await store.shares.revoke(ws, made[1]?.token as string);
    const first = await store.shares.list({ workspace: ws, pageSize: 3 });
    const second = await store.shares.list({
      workspace: ws,
      pageSize: 3,
      pageToken: first.nextPageToken,
    });
    expect(second.nextPageToken).toBe("");
    const all = [...first.shares, ...second.shares];
    expect(all.map((s) => s.token)).toEqual(made.map((s) => s.token.slice(0, 12)).reverse());
    expect(all.map((s) => s.revoked)).toEqual([false, false, false, true, false]);
    expect(all.every((s) => s.path === "")).toBe(true);
    const ofSess = await store.shares.list({ workspace: ws, session: "sess" });
    expect(ofSess.shares).toHaveLength(4);
    await expectCode(
      store.shares.list({ workspace: ws, session: "sess", pageToken: first.nextPageToken }),
      "INVALID_ARGUMENT",
    );
  });

  it("JSONL: a file at the data dir's top level named like a workspace does not break the lookup", async () => {
    const dataDir = (fixture.engine as unknown as { dataDir?: string }).dataDir;
    const share = await store.shares.create({ workspace: ws, session: "sess" });
    if (dataDir !== undefined) {
      await writeFile(join(dataDir, "aaa-keyring.json"), "{}");
      await writeFile(join(dataDir, "zzz-notes.txt"), "notes");
    }
    // A fresh engine on the same storage has no memory of where the share is: it looks in each workspace.
    if (fixture.reopen !== undefined) {
      store = new SessionStore(await fixture.reopen(), { now: () => new Date(nowMs) });
    }
    expect(ids((await store.shares.read(share.token)).entries)).toHaveLength(6);
    await expectCode(store.shares.read("C".repeat(43)), "NOT_FOUND", NO_SHARE);
  });

  it("the token is stored nowhere (its SHA-256 only); a share outlives a reopen", async () => {
    const share = await store.shares.create({ workspace: ws, session: "sess" });
    const records = await fixture.engine.shares?.list(ws);
    expect(records?.map((r) => r.digest)).toEqual([shareDigest(share.token)]);
    expect(JSON.stringify(records)).not.toContain(share.token);
    const dataDir = (fixture.engine as unknown as { dataDir?: string }).dataDir;
    if (dataDir !== undefined) {
      const files = await listFiles(dataDir);
      expect(files.some((f) => f.includes("/shares/"))).toBe(true);
      for (const f of files) {
        expect((await readFile(f)).includes(share.token), f).toBe(false);
      }
    }
    if (fixture.reopen !== undefined) {
      store = new SessionStore(await fixture.reopen(), { now: () => new Date(nowMs) });
      expect(ids((await store.shares.read(share.token)).entries)).toHaveLength(6);
      await store.shares.revoke(ws, share.token);
      store = new SessionStore(await fixture.reopen(), { now: () => new Date(nowMs) });
      await expectCode(store.shares.read(share.token), "NOT_FOUND", NO_SHARE);
    }
  });
});

function lastId(moved: { write: readonly Entry[] }): string {
  return moved.write[moved.write.length - 1]?.id as string;
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const d of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...(await listFiles(p)));
    else out.push(p);
  }
  return out;
}
