import { describe, expect, it } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import {
  assistant,
  buildLog,
  CLOCK,
  compaction,
  expectError,
  idsOf,
  toolResult,
  user,
} from "../../test/support/fixtures.js";
import { planAppend } from "./append-plan.js";
import type { SessionLog } from "./session-log.js";

/**
 * A call id made again later on the same path (providers that number their
 * calls per turn): a result answers the nearest call with its id above it,
 * for the tool-result rule and for the compaction rule alike.
 */

/** root ─ u1 ─ a2(k1) ─ t3(k1) ─ a4(k1) ─ t5(k1) */
function reusedCallLog(): SessionLog {
  return buildLog(
    user("u1", "q"),
    assistant("a2", "calling", ["k1"]),
    toolResult("t3", "k1"),
    assistant("a4", "calling again", ["k1"]),
    toolResult("t5", "k1"),
  );
}

function plan(log: SessionLog, entries: Entry[]) {
  return planAppend(log, { entries }, { now: () => CLOCK });
}

describe("planAppend: a call id made again later on the path", () => {
  it("a compaction may replace the second call and its result", () => {
    const log = reusedCallLog();
    expect(idsOf(plan(log, [compaction("c6", "sum", ["a4", "t5"])]).write)).toEqual(["c6"]);
  });

  it("a compaction may replace the first call and its result, keeping the second pair", () => {
    const log = reusedCallLog();
    const p = plan(log, [compaction("c6", "sum", ["u1", "a2", "t3"])]);
    expect(idsOf(p.write)).toEqual(["c6"]);
  });

  it("a compaction replacing the second call without its result is refused, naming that pair", () => {
    const log = reusedCallLog();
    const err = expectError(() => plan(log, [compaction("c6", "sum", ["a4"])]), "INVALID_ARGUMENT");
    expect(err.message).toBe(
      'entries[0] (id "c6"): compaction separates tool call "k1" ("a4") from its result "t5"',
    );
  });

  it("a compaction replacing the first result without its call is refused, naming that pair", () => {
    const log = reusedCallLog();
    const err = expectError(
      () => plan(log, [compaction("c6", "sum", ["t3", "a4", "t5"])]),
      "INVALID_ARGUMENT",
    );
    expect(err.message).toBe(
      'entries[0] (id "c6"): compaction separates tool call "k1" ("a2") from its result "t3"',
    );
  });

  it("a third answer to the reused call is refused as already answered by the second", () => {
    const log = reusedCallLog();
    const err = expectError(() => plan(log, [toolResult("t6", "k1")]), "INVALID_ARGUMENT");
    expect(err.message).toBe('entries[0] (id "t6"): tool call "k1" is already answered by "t5"');
  });
});

describe("planAppend: tool results walk their whole path", () => {
  it("a result may answer a call several entries above it", () => {
    const log = buildLog(
      user("u1", "q"),
      assistant("a2", "calling", ["k1"]),
      user("u3", "meanwhile"),
      user("u4", "still waiting"),
    );
    expect(idsOf(plan(log, [toolResult("t5", "k1")]).write)).toEqual(["t5"]);
  });

  it("a result whose call is nowhere up to the root is refused with the rule's wording", () => {
    const log = buildLog(user("u1", "q"), user("u2", "r"));
    const err = expectError(() => plan(log, [toolResult("t3", "k1")]), "INVALID_ARGUMENT");
    expect(err.message).toBe(
      'entries[0] (id "t3"): no ASSISTANT tool call "k1" on its path to answer',
    );
  });

  it("a compaction may replace entries without tool calls while a call and its result stay", () => {
    const log = buildLog(
      user("u1", "q"),
      user("u2", "more"),
      assistant("a3", "calling", ["k1"]),
      toolResult("t4", "k1"),
    );
    expect(idsOf(plan(log, [compaction("c5", "sum", ["u1", "u2"])]).write)).toEqual(["c5"]);
  });
});
