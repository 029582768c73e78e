import { describe, expect, it } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { appendEach, CLOCK, idsOf, info, newLog, user } from "../../test/support/fixtures.js";
import { toTimestamp } from "./entry.js";
import { type ForkOptions, planFork } from "./fork-plan.js";

const AT: ForkOptions = { sessionId: "s2", createdAt: toTimestamp(CLOCK) };

function titleOf(entry: Entry | undefined): string | undefined {
  return entry?.kind.case === "sessionInfo" ? entry.kind.value.title : "(not a SessionInfo)";
}

function sessionIdOf(entry: Entry | undefined): string | undefined {
  return entry?.kind.case === "sessionInfo" ? entry.kind.value.sessionId : "(not a SessionInfo)";
}

describe("planFork", () => {
  it("copies the path to the target after a new root: ids kept, seqs renumbered, re-parented", () => {
    const log = appendEach(
      newLog("s1", "root"),
      user("u1", "q"),
      user("u2", "a"),
      user("x", "b", "u1"),
    );
    const [root, ...copies] = planFork(log, "u2", { ...AT, newId: () => "r2" });
    expect(root?.id).toBe("r2");
    expect(root?.parentId).toBeUndefined();
    expect(sessionIdOf(root)).toBe("s2");
    expect(root?.kind.case === "sessionInfo" && root.kind.value.forkedFrom).toMatchObject({
      sessionId: "s1",
      entryId: "u2",
    });
    expect(idsOf(copies)).toEqual(["u1", "u2"]);
    expect(copies.map((e) => [Number(e.seq), e.parentId])).toEqual([
      [2, "r2"],
      [3, "u1"],
    ]);
  });

  it("without a title takes the root's title when nothing on the path changes it", () => {
    const log = appendEach(newLog("s1", "root", "T0"), user("u1", "q"));
    expect(titleOf(planFork(log, "u1", AT)[0])).toBe("T0");
  });

  it("without a title takes the newest title on the path; a SessionInfo without one keeps it", () => {
    const log = appendEach(
      newLog("s1", "root", "T0"),
      info("i1", "T1"),
      info("i2"),
      user("u3", "q"),
    );
    expect(titleOf(planFork(log, "u3", AT)[0])).toBe("T1");
  });

  it("with a title uses it over the path's", () => {
    const log = appendEach(newLog("s1", "root", "T0"), user("u1", "q"));
    expect(titleOf(planFork(log, "u1", { ...AT, title: "Fork" })[0])).toBe("Fork");
  });

  it("a SessionInfo copied from the path names the new session", () => {
    const log = appendEach(newLog("s1", "root"), info("i1", "T1"), user("u2", "q"));
    const copies = planFork(log, "u2", AT).slice(1);
    expect(copies[0]?.id).toBe("i1");
    expect(sessionIdOf(copies[0])).toBe("s2");
  });

  it("draws the new root's id again while it repeats an id on the path", () => {
    const log = appendEach(newLog("s1", "root"), user("u1", "q"), user("u2", "a"));
    const drawn = ["u2", "root", "r9"];
    const [root, ...copies] = planFork(log, "u2", { ...AT, newId: () => drawn.shift() ?? "" });
    expect(root?.id).toBe("r9");
    expect(copies[0]?.parentId).toBe("r9");
  });
});
