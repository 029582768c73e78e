import { create, toJsonString } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  appendBatch,
  buildLog,
  CLOCK,
  expectError,
  info,
  leaf,
  newLog,
  user,
} from "../../test/support/fixtures.js";
import { planAppend, storedJson } from "./append-plan.js";
import type { SessionLog } from "./session-log.js";

function plan(log: SessionLog, entries: Entry[]) {
  return planAppend(log, { entries }, { now: () => CLOCK });
}

/** `entry` with its timestamp set to `iso`. */
function at(entry: Entry, iso: string): Entry {
  return create(EntrySchema, { ...entry, timestamp: timestampFromDate(new Date(iso)) });
}

describe("planAppend: timestamps", () => {
  it("a timestamp the client set is kept, not replaced by the clock", () => {
    const log = buildLog(user("u1", "hi"));
    const p = plan(log, [at(user("u2", "x"), "2020-01-02T03:04:05Z")]);
    expect(p.write[0]?.timestamp).toEqual(timestampFromDate(new Date("2020-01-02T03:04:05Z")));
  });

  it("a retry carrying another timestamp than the stored entry fails with ALREADY_EXISTS", () => {
    const log = buildLog(user("u1", "hi"));
    appendBatch(log, [at(user("u2", "x"), "2020-01-02T03:04:05Z")]);
    expectError(
      () => plan(log, [at(user("u2", "x"), "2021-01-02T03:04:05Z")]),
      "ALREADY_EXISTS",
      '"u2"',
    );
  });

  it("a retry without a timestamp matches the stamped entry and is deduplicated", () => {
    const log = buildLog(user("u1", "hi"));
    appendBatch(log, [at(user("u2", "x"), "2020-01-02T03:04:05Z")]);
    expect(plan(log, [user("u2", "x")]).deduplicated).toBe(true);
  });
});

describe("planAppend: a SessionInfo entry from a client", () => {
  it("is stored with its session's id, whatever id it carried", () => {
    const log = newLog("s1");
    const renamed = info("i2", "renamed");
    if (renamed.kind.case === "sessionInfo") renamed.kind.value.sessionId = "someone-else";
    const p = plan(log, [renamed, info("i3", "again")]);
    expect(p.write.map((e) => e.kind.case === "sessionInfo" && e.kind.value.sessionId)).toEqual([
      "s1",
      "s1",
    ]);
  });

  it("retried without a session id, is deduplicated against the stored one", () => {
    const log = newLog("s1");
    appendBatch(log, [info("i2", "renamed")]);
    expect(plan(log, [info("i2", "renamed")]).deduplicated).toBe(true);
  });
});

describe("planAppend: batches with Leaf entries allowed (Rewind, Reset, Import)", () => {
  it("the entry after a Leaf entry attaches to the Leaf's target, the new leaf", () => {
    const log = buildLog(user("u1", "hi"), user("u2", "there"));
    const p = planAppend(log, { entries: [leaf("mv3", "u1"), user("u4", "again")] }, {}, true);
    expect(p.write.map((e) => [e.id, e.parentId])).toEqual([
      ["mv3", "u2"],
      ["u4", "u1"],
    ]);
  });
});

describe("planAppend: duplicate ids in a batch", () => {
  it("name the first position that used the id, wherever it is", () => {
    const log = buildLog(user("u1", "hi"));
    const err = expectError(
      () => plan(log, [user("a0", "x"), user("d1", "y"), user("d1", "z")]),
      "INVALID_ARGUMENT",
    );
    expect(err.message).toBe(
      'entries[2] (id "d1"): duplicate entry id, already used by entries[1]',
    );
  });
});

describe("storedJson: the size limit", () => {
  /** A message of 60 two-byte characters: its JSON has fewer characters than UTF-8 bytes. */
  const accented = create(EntrySchema, { ...user("u1", "é".repeat(60)), seq: 2n });
  const text = toJsonString(EntrySchema, accented);
  const bytes = Buffer.byteLength(text, "utf8");

  it("counts UTF-8 bytes, not characters", () => {
    expect(bytes).toBe(text.length + 60);
    const err = expectError(
      () => storedJson(accented, bytes - 1, "entries[0]"),
      "RESOURCE_EXHAUSTED",
    );
    expect(err.message).toBe(
      `entries[0] is ${bytes} bytes as stored, over the limit of ${bytes - 1} (the server's --max-entry-bytes; maxEntryBytes in openStore's limits)`,
    );
  });

  it("accepts an entry of exactly the limit and returns its canonical JSON", () => {
    expect(storedJson(accented, bytes, "entries[0]")).toBe(text);
  });

  it("a plan refuses an entry over maxEntryBytes, naming it", () => {
    const log = buildLog(user("u0", "hi"));
    expectError(
      () =>
        planAppend(
          log,
          { entries: [user("u1", "é".repeat(60))] },
          { now: () => CLOCK, maxEntryBytes: 100 },
        ),
      "RESOURCE_EXHAUSTED",
      'entries[0] (id "u1")',
    );
  });
});
