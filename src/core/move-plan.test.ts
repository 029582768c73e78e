import { describe, expect, it } from "vitest";
import {
  appendBatch,
  assistant,
  buildLog,
  expectError,
  label,
  rewindTo,
  user,
} from "../../test/support/fixtures.js";
import { planReset, planRewind } from "./move-plan.js";

describe("a retried move is recognised by its target", () => {
  it("a rewind's entryId reused with a target other than the stored Label's text fails with ALREADY_EXISTS", () => {
    const log = buildLog(user("u1", "hi"), label("l1", "cp"), assistant("a2", "x"));
    rewindTo(log, { target: "cp", entryId: "mv1" });
    const head = log.headSeq;
    expectError(
      () => planRewind(log, { target: "other", entryId: "mv1" }),
      "ALREADY_EXISTS",
      '"mv1"',
    );
    expectError(() => planRewind(log, { target: "u1", entryId: "mv1" }), "ALREADY_EXISTS", '"mv1"');
    expect(log.headSeq).toBe(head);
  });

  it("a rewind's entryId reused with the stored Label's entry id is the same move", () => {
    const log = buildLog(user("u1", "hi"), label("l1", "cp"), assistant("a2", "x"));
    rewindTo(log, { target: "cp", entryId: "mv1" });
    const retry = planRewind(log, { target: "l1", entryId: "mv1" });
    expect(retry.deduplicated).toBe(true);
    expect(retry.write).toEqual([]);
  });

  it("a reset retried after the leaf moved on is the same move", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    const first = planReset(log, { entryId: "rs1" });
    for (const e of first.write) log.apply(e);
    appendBatch(log, [user("u3", "again")]);
    const retry = planReset(log, { entryId: "rs1" });
    expect(retry.deduplicated).toBe(true);
    expect(retry.entries).toEqual(first.write);
  });

  it("a reset's entryId reused by a rewind elsewhere fails with ALREADY_EXISTS", () => {
    const log = buildLog(user("u1", "hi"), assistant("a2", "x"));
    for (const e of planReset(log, { entryId: "rs1" }).write) log.apply(e);
    expectError(() => planRewind(log, { target: "u1", entryId: "rs1" }), "ALREADY_EXISTS", '"rs1"');
  });
});
