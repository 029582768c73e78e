import { toJsonString } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EntrySchema, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { assistant, compaction, custom, toolResult, user } from "../../test/support/fixtures.js";
import { expectRefused, storedSessions } from "../../test/support/refusals.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { textOf } from "../core/message-text.js";
import type { Session } from "./session.js";
import { SessionStore } from "./session-store.js";

/**
 * Redaction (Session.redact, RedactEntries) on every engine: each refusal
 * gets its code, names the offending id and writes nothing; a redaction
 * keeps the tree and the kind, empties the content (everywhere: reads,
 * CONTEXT, search, the stored form after a reopen), and a retry writes
 * nothing new.
 */

const CLOCK = new Date("2026-03-04T05:06:07.000Z");
const SECRET = "sk-live-SECRETMARKER-4242";
const SECRET2 = "SUMMARYMARKER-7777";
const SECRET3 = "CUSTOMMARKER-9999";

describe.each(STORE_ENGINE_FACTORIES)("redaction rules on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let session: Session;

  //   root ─ u1 ─ a1(call c1) ─ t1 ─ u2 ─ k1 ─ cp1
  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { now: () => CLOCK });
    await store.create({ sessionId: "sess" });
    session = await store.open(undefined, "sess");
    await session.append([
      user("u1", `my key is ${SECRET}`),
      assistant("a1", `calling with ${SECRET}`, ["c1"]),
      toolResult("t1", "c1"),
      user("u2", "second question"),
      custom("k1", "app", { token: SECRET3 }),
      compaction("cp1", `summary with ${SECRET2}`, ["u1", "a1", "t1"]),
    ]);
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("an unknown entry id is NOT_FOUND naming it, nothing written (also with good ids beside it)", async () => {
    await expectRefused(
      fixture,
      () => session.redact(["u1", "ghost"], { by: "ops", why: "pasted key" }),
      "NOT_FOUND",
      '"ghost"',
      '"sess"',
    );
  });

  it("a SessionInfo entry is INVALID_ARGUMENT naming it, nothing written", async () => {
    const root = (await session.entries(0, 1)).entries[0]?.id as string;
    await expectRefused(
      fixture,
      () => session.redact(["u1", root]),
      "INVALID_ARGUMENT",
      `"${root}"`,
      "SessionInfo",
    );
  });

  it("a Leaf entry is INVALID_ARGUMENT naming it, nothing written", async () => {
    const leaf = (await session.rewind("cp1", { entryId: "mv1" })).entries[0]?.id as string;
    expect(leaf).toBe("mv1");
    await expectRefused(
      fixture,
      () => session.redact(["mv1"]),
      "INVALID_ARGUMENT",
      '"mv1"',
      "Leaf",
    );
  });

  it("no ids or a malformed id are INVALID_ARGUMENT, nothing written", async () => {
    await expectRefused(fixture, () => session.redact([]), "INVALID_ARGUMENT", "no entry ids");
    await expectRefused(fixture, () => session.redact(["a/b"]), "INVALID_ARGUMENT", "a/b");
  });

  it("a by over 256 or a why over 1,024 characters is INVALID_ARGUMENT with its length, nothing written", async () => {
    await expectRefused(
      fixture,
      () => session.redact(["u1"], { by: "b".repeat(257) }),
      "INVALID_ARGUMENT",
      "by is 257 characters long (at most 256)",
    );
    await expectRefused(
      fixture,
      () => session.redact(["u1"], { why: "w".repeat(1025) }),
      "INVALID_ARGUMENT",
      "why is 1025 characters long (at most 1024)",
    );
  });

  it("a by of 256 and a why of 1,024 characters are taken; without them the marker's are empty", async () => {
    const longest = await session.redact(["u1"], { by: "b".repeat(256), why: "w".repeat(1024) });
    const w = longest.entries[0]?.withheld;
    expect([w?.by.length, w?.why.length]).toEqual([256, 1024]);
    const bare = (await session.redact(["u2"])).entries[0]?.withheld;
    expect(bare).toMatchObject({ by: "", why: "", reason: WithheldReason.REDACTED });
    expect(Number(bare?.at?.seconds) * 1000).toBe(CLOCK.getTime());
  });

  it("an unknown session is NOT_FOUND", async () => {
    const other = await store.create({ sessionId: "gone" });
    const s = await store.open(undefined, other.session.id);
    await store.delete(undefined, other.session.id);
    await expectRefused(fixture, () => s.redact(["u1"]), "NOT_FOUND", '"gone"');
  });

  it("keeps id, parent, seq, timestamp and kind, empties the content, marks who/when/why; durable", async () => {
    const before = (await session.entries(0, 100)).entries;
    const r = await session.redact(["a1", "u1", "cp1", "k1", "u1"], {
      by: "alice",
      why: "pasted a key",
    });
    expect(r.entries.map((e) => e.id)).toEqual(["u1", "a1", "k1", "cp1"]);
    const after = (await session.entries(0, 100)).entries;
    expect(after.map((e) => [e.id, e.parentId, e.seq, e.kind.case, e.timestamp])).toEqual(
      before.map((e) => [e.id, e.parentId, e.seq, e.kind.case, e.timestamp]),
    );
    const byId = new Map(after.map((e) => [e.id, e]));
    for (const id of ["u1", "a1", "k1", "cp1"]) {
      const w = byId.get(id)?.withheld;
      expect(w?.reason).toBe(WithheldReason.REDACTED);
      expect(w?.by).toBe("alice");
      expect(w?.why).toBe("pasted a key");
      expect(Number(w?.at?.seconds) * 1000).toBe(CLOCK.getTime());
    }
    expect(byId.get("u2")?.withheld).toBeUndefined();
    // The tool call keeps its id and name (the TOOL result still answers it).
    const a1 = byId.get("a1");
    expect(a1?.kind.case === "message" && a1.kind.value.content.map((p) => p.part.case)).toEqual([
      "toolCall",
    ]);
    const cp1 = byId.get("cp1");
    expect(cp1?.kind.case === "compaction" && cp1.kind.value.replacesEntryIds).toEqual([
      "u1",
      "a1",
      "t1",
    ]);
    const all = JSON.stringify(after.map((e) => toJsonString(EntrySchema, e)));
    for (const marker of [SECRET, SECRET2, SECRET3]) expect(all).not.toContain(marker);
    if (fixture.reopen !== undefined) {
      const stored = JSON.stringify(await storedSessions(await fixture.reopen()));
      for (const marker of [SECRET, SECRET2, SECRET3]) expect(stored).not.toContain(marker);
      expect(stored).toContain("pasted a key");
    }
  });

  it("CONTEXT and HISTORY show a withheld message as its marker, same role, tool pairing kept", async () => {
    await session.redact(["u1", "a1", "cp1"], { by: "alice", why: "secret" });
    const history = await session.state({ view: View.HISTORY });
    const texts = history.messages.map((m) => [m.entryId, textOf(m)]);
    expect(texts.slice(0, 2)).toEqual([
      ["u1", "[redacted]"],
      ["a1", "[redacted]"],
    ]);
    const a1 = history.messages[1]?.message;
    expect(a1?.content.map((p) => p.part.case)).toEqual(["text", "toolCall"]);
    const context = await session.state();
    expect(context.messages.map((m) => textOf(m))).toEqual([
      "Previous conversation summary:\n[redacted]",
      "second question",
    ]);
  });

  it("a retried redaction answers the same marker and writes nothing", async () => {
    const first = await session.redact(["u1"], { by: "alice", why: "secret" });
    const stored = await storedSessions(fixture.engine);
    const later = new SessionStore(fixture.engine, {
      now: () => new Date(CLOCK.getTime() + 60_000),
    });
    const again = await (await later.open(undefined, "sess")).redact(["u1"], {
      by: "bob",
      why: "other",
    });
    expect(again.entries.map((e) => toJsonString(EntrySchema, e))).toEqual(
      first.entries.map((e) => toJsonString(EntrySchema, e)),
    );
    expect(await storedSessions(fixture.engine)).toEqual(stored);
  });

  it("search no longer finds the redacted content", async () => {
    const found = async (q: string) =>
      (await store.search({ query: q })).hits.map((h) => h.entryId);
    expect(await found("SECRETMARKER")).toEqual(["u1", "a1"]);
    await session.redact(["u1", "a1"], { by: "alice", why: "secret" });
    expect(await found("SECRETMARKER")).toEqual([]);
    expect(await found("second question")).toEqual(["u2"]);
  });

  it("appending after a redaction works, and a retry of a redacted entry's append is deduplicated", async () => {
    await session.redact(["u2"], { why: "secret" });
    const r = await session.append([user("u3", "after")]);
    expect(r.headSeq).toBe(8);
    const retry = await session.append([user("u2", "second question", { parentId: "t1" })]);
    expect(retry.deduplicated).toBe(true);
    expect(retry.headSeq).toBe(8);
  });

  it("a fork and an import of a redacted session keep the marker and no content", async () => {
    await session.redact(["u1", "a1"], { by: "alice", why: "secret" });
    await store.fork(undefined, "sess", { sessionId: "forked" });
    const exported = (await session.entries(0, 100)).entries;
    await store.import(undefined, exported, { sessionId: "imported" });
    for (const id of ["forked", "imported"]) {
      const entries = (await (await store.open(undefined, id)).entries(0, 100)).entries;
      expect(entries.find((e) => e.id === "u1")?.withheld?.by).toBe("alice");
      expect(entries.map((e) => toJsonString(EntrySchema, e)).join()).not.toContain("SECRETMARKER");
    }
  });

  it("an Append that sets withheld itself is INVALID_ARGUMENT", async () => {
    const e = user("u9", "x");
    e.withheld = { $typeName: "sessiond.v1.Withheld", reason: 1, by: "me", why: "" };
    await expectRefused(fixture, () => session.append([e]), "INVALID_ARGUMENT", "withheld");
  });
});
