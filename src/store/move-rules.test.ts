import { afterEach, beforeEach, describe, it } from "vitest";
import { assistant, compaction, user } from "../../test/support/fixtures.js";
import { expectRefused } from "../../test/support/refusals.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import type { Session } from "./session.js";
import { SessionStore } from "./session-store.js";

/**
 * One test per validation rule of Rewind and Reset (src/core/move-plan.ts,
 * and the Append rules they share: expectations, idempotency, id pattern):
 * each refused move gets its code, names the offending target or id, and
 * stores nothing (no Leaf entry, the leaf where it was).
 */

const CLOCK = new Date("2026-03-04T05:06:07.000Z");

describe.each(STORE_ENGINE_FACTORIES)("Rewind and Reset rules on $name", (factory) => {
  let fixture: EngineFixture;
  let session: Session;
  let leafEntryId: string;

  //   root ─ u1 ─ a1 ─ u2 ─ a2 ─ c1 ─ u3    (c1 replaces u1 and a1: the compaction floor is a2)
  // then a rewind to u3 (the current leaf), which stores a Leaf entry.
  beforeEach(async () => {
    fixture = await factory.open();
    const store = new SessionStore(fixture.engine, { now: () => CLOCK });
    await store.create({ sessionId: "sess" });
    session = await store.open(undefined, "sess");
    await session.append([
      user("u1", "q1"),
      assistant("a1", "a1"),
      user("u2", "q2"),
      assistant("a2", "a2"),
      compaction("c1", "summary of u1 and a1", ["u1", "a1"]),
      user("u3", "q3"),
    ]);
    leafEntryId = (await session.rewind("u3", { entryId: "move-1" })).entries[0]?.id as string;
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it("Rewind refuses an empty target: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.rewind(""),
      "INVALID_ARGUMENT",
      "target is required",
    );
  });

  it("Rewind refuses a target that is neither an entry id nor a label: NOT_FOUND, nothing stored", async () => {
    await expectRefused(fixture, () => session.rewind("ghost"), "NOT_FOUND", '"ghost"', '"sess"');
  });

  it("Rewind refuses a Leaf entry as target: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.rewind(leafEntryId),
      "INVALID_ARGUMENT",
      `"${leafEntryId}"`,
      "Leaf entry",
    );
  });

  it("Rewind refuses a target before the compaction floor without allow_before_compaction: FAILED_PRECONDITION, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.rewind("u2"),
      "FAILED_PRECONDITION",
      '"u2"',
      'floor "a2"',
      "allow_before_compaction",
    );
  });

  it("Rewind refuses a stale expected_seq: ABORTED, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.rewind("a2", { expectedSeq: 7 }),
      "ABORTED",
      "expected head seq 7",
    );
  });

  it("Rewind refuses an expected_leaf_id that is not the leaf: ABORTED, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.rewind("a2", { expectedLeafId: "a2" }),
      "ABORTED",
      'expected leaf "a2"',
      '"u3"',
    );
  });

  it("Rewind refuses an entry id outside [A-Za-z0-9_-]{1,64}: INVALID_ARGUMENT, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.rewind("a2", { entryId: "../x" }),
      "INVALID_ARGUMENT",
      '"../x"',
    );
  });

  it("Rewind refuses an entry id that a non-Leaf entry holds, before resolving its target: ALREADY_EXISTS, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.rewind("ghost", { entryId: "u1" }),
      "ALREADY_EXISTS",
      '"u1"',
    );
  });

  it("Rewind refuses the entry id of an earlier move to another target, before the compaction floor check: ALREADY_EXISTS, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.rewind("u2", { entryId: "move-1" }),
      "ALREADY_EXISTS",
      '"move-1"',
    );
  });

  it("Reset refuses a stale expected_seq: ABORTED, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.reset({ expectedSeq: 7 }),
      "ABORTED",
      "expected head seq 7",
    );
  });

  it("Reset refuses an expected_leaf_id that is not the leaf: ABORTED, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.reset({ expectedLeafId: "a2" }),
      "ABORTED",
      'expected leaf "a2"',
    );
  });

  it("Reset refuses an entry id that a non-Leaf entry holds: ALREADY_EXISTS, nothing stored", async () => {
    await expectRefused(fixture, () => session.reset({ entryId: "u1" }), "ALREADY_EXISTS", '"u1"');
  });

  it("Reset refuses the entry id of an earlier move to another target: ALREADY_EXISTS, nothing stored", async () => {
    await expectRefused(
      fixture,
      () => session.reset({ entryId: "move-1" }),
      "ALREADY_EXISTS",
      '"move-1"',
    );
  });
});
