import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ContentPart,
  ContentPartSchema,
  type Entry,
  type Message,
  Role,
} from "../../gen/sessiond/v1/entry_pb.js";
import {
  assistant,
  branchSummary,
  compaction,
  custom,
  kindless,
  label,
  leaf,
  modelChange,
  thinkingLevel,
  toolResult,
  user,
} from "../../test/support/fixtures.js";
import { expectRefused } from "../../test/support/refusals.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import type { Session } from "./session.js";
import { SessionStore, type StoreOptions } from "./session-store.js";

/**
 * One test per validation rule of Append (src/core/append-plan.ts and the
 * per-request limit of Session.append): each refused request gets its code,
 * names the offending entry, and stores nothing.
 */

const CLOCK = new Date("2026-03-04T05:06:07.000Z");

/** The Message of a message entry, to break one field of an otherwise valid one. */
function messageOf(e: Entry): Message {
  if (e.kind.case !== "message") throw new Error(`${e.id} is not a message`);
  return e.kind.value;
}

function toolCallPart(id: string): ContentPart {
  return create(ContentPartSchema, { part: { case: "toolCall", value: { id, name: "calc" } } });
}

describe.each(STORE_ENGINE_FACTORIES)("Append rules on $name", (factory) => {
  let fixture: EngineFixture;
  let session: Session;
  let rootId: string;
  let leafEntryId: string;

  async function openSession(options: StoreOptions = {}): Promise<Session> {
    const store = new SessionStore(fixture.engine, { now: () => CLOCK, ...options });
    return store.open(undefined, "sess");
  }

  /** Appends through `session` and expects the refusal, with nothing stored. */
  function refused(
    entries: Entry | Entry[],
    code: Parameters<typeof expectRefused>[2],
    ...m: string[]
  ) {
    return expectRefused(fixture, () => session.append(entries), code, ...m);
  }

  //   root ─ u1 ─ a1(call-1) ─ t1 ─ a2        (current path; a Leaf entry moved the leaf to a2)
  //           └─ b1                            (another branch)
  beforeEach(async () => {
    fixture = await factory.open();
    const store = new SessionStore(fixture.engine, { now: () => CLOCK });
    rootId = (await store.create({ sessionId: "sess" })).session.leafId;
    session = await openSession();
    await session.append([
      user("u1", "q"),
      assistant("a1", "calling", ["call-1"]),
      toolResult("t1", "call-1"),
      assistant("a2", "done"),
    ]);
    await session.append(user("b1", "side branch", "u1"));
    leafEntryId = (await session.rewind("a2")).entries[0]?.id as string;
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("Append refuses an empty request: INVALID_ARGUMENT, nothing stored", async () => {
    await refused([], "INVALID_ARGUMENT", "at least one entry");
  });

  it("Append refuses an entry id outside [A-Za-z0-9_-]{1,64}: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(user("../x", "q"), "INVALID_ARGUMENT", "entries[0]", '"../x"');
  });

  it("Append refuses an entry without a kind: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(kindless("k1"), "INVALID_ARGUMENT", '"k1"', "kind is not set");
  });

  it("Append refuses a Leaf entry (only Rewind and Reset write them): INVALID_ARGUMENT, nothing stored", async () => {
    await refused(leaf("lf", "u1"), "INVALID_ARGUMENT", '"lf"', "Rewind and Reset only");
  });

  it("Append refuses a message without a role: INVALID_ARGUMENT, nothing stored", async () => {
    const m = user("m1", "q");
    messageOf(m).role = Role.UNSPECIFIED;
    await refused(m, "INVALID_ARGUMENT", '"m1"', "role is not set");
  });

  it("Append refuses a message with a role the protocol does not define: INVALID_ARGUMENT, nothing stored", async () => {
    const m = user("m1", "q");
    messageOf(m).role = 99 as Role;
    await refused(m, "INVALID_ARGUMENT", '"m1"', "role is not set");
  });

  it("Append refuses a message with an empty content part: INVALID_ARGUMENT, nothing stored", async () => {
    const m = user("m1", "q");
    messageOf(m).content.push(create(ContentPartSchema, {}));
    await refused(m, "INVALID_ARGUMENT", '"m1"', "empty content part");
  });

  it("Append refuses a tool call on a USER message (only ASSISTANT messages call tools): INVALID_ARGUMENT, nothing stored", async () => {
    const m = user("m1", "q");
    messageOf(m).content.push(toolCallPart("call-u"));
    await refused(m, "INVALID_ARGUMENT", '"m1"', "only ASSISTANT messages may carry tool calls");
  });

  it("Append refuses a tool call on a TOOL message (only ASSISTANT messages call tools): INVALID_ARGUMENT, nothing stored", async () => {
    const m = toolResult("m1", "call-1", "a1");
    messageOf(m).content.push(toolCallPart("call-t"));
    await refused(m, "INVALID_ARGUMENT", '"m1"', "only ASSISTANT messages may carry tool calls");
  });

  it("Append refuses a tool call without id: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      assistant("m1", "calling", [""]),
      "INVALID_ARGUMENT",
      '"m1"',
      "tool call has no id",
    );
  });

  it("Append refuses a TOOL message without tool_call_id: INVALID_ARGUMENT, nothing stored", async () => {
    await session.append(assistant("a3", "calling", ["call-3"]));
    const m = toolResult("m1", "call-3");
    messageOf(m).toolCallId = undefined;
    await refused(m, "INVALID_ARGUMENT", '"m1"', "needs tool_call_id");
  });

  it("Append refuses a TOOL message whose call is on no ASSISTANT message of its path: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      toolResult("m1", "call-1", "b1"),
      "INVALID_ARGUMENT",
      '"m1"',
      '"call-1"',
      "on its path",
    );
  });

  it("Append refuses a second TOOL message for an answered call: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      toolResult("m1", "call-1"),
      "INVALID_ARGUMENT",
      '"m1"',
      '"call-1"',
      'answered by "t1"',
    );
  });

  it("Append refuses a TOOL message whose call a compaction replaced on its path: INVALID_ARGUMENT, nothing stored", async () => {
    await session.append([
      assistant("a3", "calling", ["call-3"]),
      compaction("c3", "summary", ["a3"]),
    ]);
    await refused(toolResult("m1", "call-3"), "INVALID_ARGUMENT", '"m1"', '"call-3"', '"c3"');
  });

  it("Append refuses a model change without model: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(modelChange("m1", "", "acme"), "INVALID_ARGUMENT", '"m1"', "without model");
  });

  it("Append refuses a thinking level change without level: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(thinkingLevel("m1", ""), "INVALID_ARGUMENT", '"m1"', "without level");
  });

  it("Append refuses a compaction that replaces nothing: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      compaction("c1", "summary", []),
      "INVALID_ARGUMENT",
      '"c1"',
      "replaces no entries",
    );
  });

  it("Append refuses a compaction of an entry off its path: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      compaction("c1", "summary", ["b1"]),
      "INVALID_ARGUMENT",
      '"c1"',
      '"b1"',
      "not on its path",
    );
  });

  it("Append refuses a compaction of the root: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      compaction("c1", "summary", [rootId]),
      "INVALID_ARGUMENT",
      '"c1"',
      `"${rootId}"`,
      "root",
    );
  });

  it("Append refuses a compaction that replaces a tool call but not its result: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      compaction("c1", "summary", ["a1"]),
      "INVALID_ARGUMENT",
      '"c1"',
      '"call-1"',
      "separates",
    );
  });

  it("Append refuses a compaction that replaces a tool result but not its call: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      compaction("c1", "summary", ["t1"]),
      "INVALID_ARGUMENT",
      '"c1"',
      '"call-1"',
      "separates",
    );
  });

  it("Append refuses a branch summary without from_id: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      branchSummary("s1", "summary", ""),
      "INVALID_ARGUMENT",
      '"s1"',
      "without from_id",
    );
  });

  it("Append refuses a branch summary of an unknown entry: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(branchSummary("s1", "summary", "ghost"), "INVALID_ARGUMENT", '"s1"', '"ghost"');
  });

  it("Append refuses an empty label: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(label("l1", ""), "INVALID_ARGUMENT", '"l1"', "1 to 128 characters");
  });

  it("Append refuses a label of 129 characters: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(label("l1", "x".repeat(129)), "INVALID_ARGUMENT", '"l1"', "1 to 128 characters");
  });

  it("Append accepts a label of 128 characters, the longest allowed", async () => {
    const r = await session.append(label("l1", "x".repeat(128)));
    expect(r.leafId).toBe("l1");
  });

  it("Append refuses a custom entry without namespace: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(custom("x1", "", { a: 1 }), "INVALID_ARGUMENT", '"x1"', "without namespace");
  });

  it("Append refuses an entry with no JSON form (a NaN in custom data): INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      custom("x1", "ns", { a: Number.NaN }),
      "INVALID_ARGUMENT",
      '"x1"',
      "cannot be stored",
    );
  });

  it("Append refuses an unknown parent: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(user("m1", "q", "ghost"), "INVALID_ARGUMENT", '"m1"', 'parent "ghost" not found');
  });

  it("Append refuses a Leaf entry as parent: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      user("m1", "q", leafEntryId),
      "INVALID_ARGUMENT",
      '"m1"',
      `"${leafEntryId}"`,
      "Leaf",
    );
  });

  it("Append refuses a batch that uses one id twice: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      [user("d1", "q"), user("d1", "q")],
      "INVALID_ARGUMENT",
      "entries[1]",
      '"d1"',
      "duplicate",
    );
  });

  it("Append refuses a whole batch when a later entry is bad: INVALID_ARGUMENT, nothing stored", async () => {
    await refused(
      [user("ok", "q"), user("bad", "q", "ghost")],
      "INVALID_ARGUMENT",
      "entries[1]",
      '"bad"',
    );
  });

  it("Append refuses an id already in the session with other content: ALREADY_EXISTS, nothing stored", async () => {
    await refused(user("u1", "another question"), "ALREADY_EXISTS", '"u1"', "other content");
  });

  it("Append refuses a batch of which only some entries exist already: ALREADY_EXISTS, nothing stored", async () => {
    await refused([user("u1", "q"), user("n1", "new")], "ALREADY_EXISTS", '"u1"', "identical");
  });

  it("Append refuses a stale expected_seq: ABORTED, nothing stored", async () => {
    const err = expectRefused(
      fixture,
      () => session.append(user("m1", "q"), { expectedSeq: 3 }),
      "ABORTED",
    );
    expect((await err).message).toContain("expected head seq 3");
  });

  it("Append refuses an expected_leaf_id that is not the leaf: ABORTED, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.append(user("m1", "q"), { expectedLeafId: "u1" }),
      "ABORTED",
      'expected leaf "u1"',
      '"a2"',
    );
  });

  it("Append refuses an expected_seq that is not a non-negative integer: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.append(user("m1", "q"), { expectedSeq: -1 }),
      "INVALID_ARGUMENT",
      "expected_seq -1",
    );
  });

  it("Append refuses more entries than maxEntriesPerAppend: RESOURCE_EXHAUSTED, nothing stored", async () => {
    session = await openSession({ limits: { maxEntriesPerAppend: 2 } });
    await refused(
      [user("m1", "q"), assistant("m2", "a"), user("m3", "q")],
      "RESOURCE_EXHAUSTED",
      "3 entries",
      "limit of 2",
    );
  });

  it("Append refuses an entry over maxEntryBytes: RESOURCE_EXHAUSTED, nothing stored", async () => {
    session = await openSession({ limits: { maxEntryBytes: 1000 } });
    await refused(
      [user("m1", "small"), user("m2", "x".repeat(1000))],
      "RESOURCE_EXHAUSTED",
      'entries[1] (id "m2")',
      "limit of 1000",
    );
  });
});
