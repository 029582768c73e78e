import { describe, expect, it } from "vitest";
import { info, user } from "../../test/support/fixtures.js";
import { SessionLog } from "../core/session-log.js";
import { recordOf } from "./session-record.js";

describe("recordOf: one record per log and version", () => {
  it("the same object while the log is unchanged; a new one after any change", () => {
    const log = SessionLog.from("s1", [info("root", "first", { seq: 1 })]);
    const a = recordOf("ws", log);
    expect(recordOf("ws", log)).toBe(a);
    expect(a.title).toBe("first");
    log.apply(user("u1", "hi", { parentId: "root", seq: 2 }));
    const b = recordOf("ws", log);
    expect(b).not.toBe(a);
    expect(b.headSeq).toBe(2);
    expect(recordOf("ws", log)).toBe(b);
  });

  it("a log truncated and grown back to the same head is a new version (other entries)", () => {
    const log = SessionLog.from("s1", [
      info("root", "first", { seq: 1 }),
      info("t1", "old", { parentId: "root", seq: 2 }),
    ]);
    const before = recordOf("ws", log);
    expect(before.title).toBe("old");
    log.truncate(1);
    log.apply(info("t1", "new", { parentId: "root", seq: 2 }));
    expect(log.headSeq).toBe(before.headSeq);
    const after = recordOf("ws", log);
    expect(after).not.toBe(before);
    expect(after.title).toBe("new");
  });

  it("another workspace gets its own record", () => {
    const log = SessionLog.from("s1", [info("root", undefined, { seq: 1 })]);
    expect(recordOf("a", log).workspace).toBe("a");
    expect(recordOf("b", log).workspace).toBe("b");
  });
});

describe("SessionLog.version", () => {
  it("changes with every entry added and with every truncate", () => {
    const log = new SessionLog("s1");
    const v0 = log.version;
    log.apply(info("root", undefined, { seq: 1 }));
    const v1 = log.version;
    expect(v1).not.toBe(v0);
    log.apply(user("u1", "hi", { parentId: "root", seq: 2 }));
    const v2 = log.version;
    expect(v2).not.toBe(v1);
    log.truncate(1);
    expect(log.version).not.toBe(v2);
    expect(log.version).not.toBe(v1);
  });
});
