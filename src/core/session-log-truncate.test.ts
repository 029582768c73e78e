import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  assistant,
  expectError,
  info,
  label,
  leaf,
  user,
  withSeq,
} from "../../test/support/fixtures.js";
import { SessionLog } from "./session-log.js";

/** A log of `entries` given in seq order, each parented on the one before. */
function chain(...entries: Entry[]): SessionLog {
  const log = new SessionLog("s1");
  entries.forEach((e, i) => {
    e.parentId = i === 0 ? undefined : entries[i - 1]?.id;
    log.apply(withSeq(e, i + 1));
  });
  return log;
}

/** What a log indexes, for comparing a truncated log with one that never had the entries. */
function state(log: SessionLog, labels: string[]) {
  return {
    head: log.headSeq,
    leaf: log.leafId,
    messages: log.messageCount,
    title: log.title,
    labels: labels.map((l) => log.labelTarget(l)),
  };
}

/** A SessionInfo entry changing the session's tags. */
function tagged(id: string, tags: Record<string, string>): Entry {
  return create(EntrySchema, { id, kind: { case: "sessionInfo", value: { tags } } });
}

describe("SessionLog.truncate drops entries as if never applied", () => {
  it("a dropped SessionInfo's tag changes are undone, the older ones kept", () => {
    const log = chain(
      info("root"),
      tagged("t2", { user: "42" }),
      tagged("t3", { team: "a" }),
      user("u4", "x"),
      user("u5", "y"),
    );
    expect(log.tags).toEqual({ user: "42", team: "a" });
    log.truncate(2);
    expect(log.tags).toEqual({ user: "42" });
    const again = tagged("t3b", { plan: "pro" });
    again.parentId = "t2";
    log.apply(withSeq(again, 3));
    expect(log.tags).toEqual({ user: "42", plan: "pro" });
  });

  it("an entry stored after the log was truncated below it is let go of quietly", () => {
    const log = chain(info("root"), user("u2", "x"), user("u3", "y"));
    log.truncate(2);
    const source = { decode: () => user("u3", "y") } as never;
    expect(() => log.stored(3, source, 0, 10)).not.toThrow();
    expect(log.headSeq).toBe(2);
    expect(log.has("u3")).toBe(false);
  });

  it("a dropped Label gives its text back to the newest older Label with it", () => {
    const log = chain(info("root"), label("l2", "cp"), label("l3", "cp"), label("l4", "cp"));
    log.truncate(3);
    expect(log.labelTarget("cp")).toBe("l3");
  });

  it("a dropped Label with no older one leaves its text unknown", () => {
    const log = chain(info("root"), label("o2", "other"), label("l3", "cp"));
    log.truncate(2);
    expect(log.labelTarget("cp")).toBeUndefined();
    expect(log.labelTarget("other")).toBe("o2");
  });

  it("a SessionInfo titled like a dropped label does not become its target", () => {
    const log = chain(info("root"), label("l2", "cp"), info("i3", "cp"), label("l4", "cp"));
    log.truncate(3);
    expect(log.labelTarget("cp")).toBe("l2");
  });

  it("a dropped title gives way to the newest older title, skipping untitled SessionInfos", () => {
    const log = chain(info("root", "first"), info("i2", "second"), info("i3"), info("i4", "third"));
    log.truncate(3);
    expect(log.title).toBe("second");
  });

  it("the root's title comes back when every later title is dropped", () => {
    const log = chain(info("root", "first"), user("u2", "x"), info("i3", "renamed"));
    log.truncate(2);
    expect(log.title).toBe("first");
  });

  it("dropping the only title leaves none", () => {
    const log = chain(info("root"), info("i2", "titled"), label("l3", "cp"));
    log.truncate(1);
    expect(log.title).toBeUndefined();
  });

  it("a Label as newest remaining slot does not lend its text as title", () => {
    const log = chain(info("root", "first"), label("l2", "cp"), info("i3", "renamed"));
    log.truncate(2);
    expect(log.title).toBe("first");
  });

  it("the leaf returns to the newest remaining entry, or a Leaf entry's target", () => {
    const log = chain(info("root"), user("u2", "x"), assistant("a3", "y"));
    log.apply(withSeq(leaf("mv4", "u2", "a3"), 4));
    log.apply(withSeq(user("u5", "z", "u2"), 5));
    log.truncate(4);
    expect(log.leafId).toBe("u2");
    log.truncate(2);
    expect(log.leafId).toBe("u2");
    expect(log.has("a3")).toBe(false);
  });

  it("the state after truncating equals that of a log that never had the entries", () => {
    const head = [info("root", "first"), label("l2", "cp"), user("u3", "x"), info("i4", "t2")];
    const tail = [label("l5", "cp"), user("u6", "y"), info("i7", "t3"), label("l8", "new")];
    const log = chain(...head, ...tail);
    log.truncate(4);
    const never = chain(...head);
    expect(state(log, ["cp", "new"])).toEqual(state(never, ["cp", "new"]));
  });

  it("keeping at or past the head changes nothing", () => {
    const log = chain(info("root", "first"), label("l2", "cp"), user("u3", "x"));
    const before = state(log, ["cp"]);
    log.truncate(3);
    log.truncate(99);
    expect(state(log, ["cp"])).toEqual(before);
  });

  it("a negative head empties the log", () => {
    const log = chain(info("root", "first"), user("u2", "x"));
    log.truncate(-1);
    expect(state(log, [])).toEqual({
      head: 0,
      leaf: "",
      messages: 0,
      title: undefined,
      labels: [],
    });
  });
});

describe("SessionLog.applyAll rolls a refused batch back", () => {
  it("restores the title and the labels the batch took over", () => {
    const log = chain(info("root", "first"), label("l2", "cp"), user("u3", "x"));
    const batch = [
      withSeq(info("i4", "renamed", "u3"), 4),
      withSeq(label("l5", "cp", "i4"), 5),
      withSeq(label("l6", "fresh", "l5"), 6),
      withSeq(user("u7", "bad", "ghost"), 7),
    ];
    expectError(() => log.applyAll(batch), "DATA_LOSS", '"u7"');
    expect(state(log, ["cp", "fresh"])).toEqual({
      head: 3,
      leaf: "u3",
      messages: 1,
      title: "first",
      labels: ["l2", undefined],
    });
    expect(log.has("i4") || log.has("l5") || log.has("l6")).toBe(false);
  });
});

describe("SessionLog.last", () => {
  it("an empty log has no last entry", () => {
    expect(new SessionLog("s1").last).toBeUndefined();
  });
});

describe("SessionLog.replaceAll", () => {
  it("a replacement moves the version on (what is derived from the log is made again); none leaves it", () => {
    const log = chain(info("root"), user("u2", "x"));
    const before = log.version;
    log.replaceAll([]);
    expect(log.version).toBe(before);
    const same = log.get("u2") as Entry;
    log.replaceAll([same]);
    expect(log.version).toBeGreaterThan(before);
    const after = log.version;
    log.replaceAll([same, log.get("root") as Entry]);
    expect(log.version).toBeGreaterThan(after);
  });

  it("a replacement for a seq the log does not hold is DATA_LOSS naming it, and nothing is replaced", () => {
    const log = chain(info("root"), user("u2", "x"));
    const kept = log.get("u2");
    const ghost = withSeq(user("u9", "y"), 9);
    expectError(() => log.replaceAll([ghost]), "DATA_LOSS", `seq 9: no entry to replace by "u9"`);
    expect(log.get("u2")).toBe(kept);
  });
});
