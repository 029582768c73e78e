import { readFileSync } from "node:fs";
import { join } from "node:path";
import { equals } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { planImport } from "../../core/import-plan.js";
import { resolveTarget } from "../../core/move-plan.js";
import { SessionLog } from "../../core/session-log.js";
import { mapPiSession } from "./pi-session.js";

const FIXTURES = join(import.meta.dirname, "../../../test/fixtures/importers/pi");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
const byId = (entries: Entry[], id: string) => entries.find((e) => e.id === id) as Entry;

describe("a pi session file as a sessiond log", () => {
  const mapped = mapPiSession(fixture("v3-branches.jsonl"));

  it("keeps pi's entry ids, parents and timestamps, the header as the SessionInfo root", () => {
    const [root] = mapped.entries;
    expect(mapped.sessionId).toBe("0193a5c2-7d1e-7000-8000-000000000001");
    expect(root?.id).toBe(mapped.sessionId);
    expect(root?.kind.value).toMatchObject({ cwd: "/home/ana/parser" });
    const a1 = byId(mapped.entries, "a1");
    expect(a1.parentId).toBe("tl1");
    expect(timestampDate(a1.timestamp as never).toISOString()).toBe("2026-01-10T09:00:04.000Z");
    expect(byId(mapped.entries, "m1").parentId).toBe(root?.id);
  });

  it("the leaf is the file's last entry, as pi resumes it", () => {
    const log = SessionLog.from(mapped.sessionId, planImport(mapped.sessionId, mapped.entries));
    expect(log.leafId).toBe("a6");
  });

  it("maps model and thinking changes, the session name, labels and compactions to their kinds", () => {
    expect(byId(mapped.entries, "mc1").kind).toMatchObject({
      case: "modelChange",
      value: { model: "claude-sonnet-4-5", provider: "anthropic" },
    });
    expect(byId(mapped.entries, "tl1").kind.case).toBe("thinkingLevelChange");
    expect(byId(mapped.entries, "si1").kind.value).toMatchObject({ title: "Parser fix" });
    expect(byId(mapped.entries, "lb1").kind).toMatchObject({
      case: "label",
      value: { label: "tested" },
    });
    expect(byId(mapped.entries, "c1").kind).toMatchObject({
      case: "compaction",
      value: { replacesEntryIds: ["m1", "a1", "t1", "a2"], tokensBefore: 12000n },
    });
    expect(byId(mapped.entries, "bs1").kind).toMatchObject({
      case: "branchSummary",
      value: { fromId: "m6" },
    });
  });

  it("a bash run pi keeps out of the context is a Custom entry, without a note", () => {
    expect(byId(mapped.entries, "bh").kind).toMatchObject({
      case: "custom",
      value: { namespace: "pi.message" },
    });
    expect(mapped.notes.filter((n) => n.entryId === "bh")).toEqual([]);
  });

  it("notes the torn line, the lost parent, the label on another entry and the compaction details", () => {
    expect(mapped.notes.map((n) => [n.line, n.entryId])).toEqual([
      [24, undefined],
      [14, "c1"],
      [25, "or1"],
      [29, "lb2"],
    ]);
  });

  it("rewind to a label pi put on another entry than its parent lands on the labelled entry", () => {
    const log = SessionLog.from(mapped.sessionId, planImport(mapped.sessionId, mapped.entries));
    expect(resolveTarget(log, "start").parentId).toBe("m1");
    expect(byId(mapped.entries, "lb2").kind.case).toBe("custom");
    expect(log.leafId).toBe("a6");
  });

  it("mapping the same file twice gives the same log: a repeated import is idempotent", () => {
    const again = mapPiSession(fixture("v3-branches.jsonl"));
    expect(again.entries.length).toBe(mapped.entries.length);
    const same = again.entries.every((e, i) => equals(EntrySchema, e, mapped.entries[i] as Entry));
    expect(same).toBe(true);
  });

  it("a v1 file gets ids from its lines, so a repeated import matches", () => {
    const v1 = mapPiSession(fixture("v1-linear.jsonl"));
    expect(v1.entries.map((e) => e.id).slice(1)).toEqual([
      "v1-L2",
      "v1-L3",
      "v1-L4",
      "v1-L5",
      "v1-L6",
      "v1-L7",
    ]);
    expect(byId(v1.entries, "v1-L6").kind.value).toMatchObject({
      replacesEntryIds: ["v1-L2", "v1-L3"],
    });
  });
});

describe("fields of pi's summaries that sessiond has no place for", () => {
  const header = { type: "session", version: 3, id: "s1", timestamp: "2026-01-10T09:00:00.000Z" };
  const at = "2026-01-10T09:00:01.000Z";
  const user = { type: "message", id: "u1", parentId: null, timestamp: at };
  const text = (...records: object[]) =>
    [header, { ...user, message: { role: "user", content: "hi", timestamp: 1 } }, ...records]
      .map((r) => JSON.stringify(r))
      .join("\n");

  it("a compaction's fromHook is noted, not dropped silently", () => {
    const compaction = { type: "compaction", id: "c1", parentId: "u1", timestamp: at };
    const mapped = mapPiSession(
      text({
        ...compaction,
        summary: "s",
        firstKeptEntryId: "u1",
        tokensBefore: 1,
        fromHook: true,
      }),
    );
    expect(mapped.notes).toContainEqual(
      expect.objectContaining({ entryId: "c1", reason: expect.stringContaining("fromHook") }),
    );
  });

  it("a branch summary's fromHook is noted, not dropped silently", () => {
    const summary = { type: "branch_summary", id: "b1", parentId: "u1", timestamp: at };
    const mapped = mapPiSession(text({ ...summary, summary: "s", fromId: "u1", fromHook: true }));
    expect(mapped.notes).toContainEqual(
      expect.objectContaining({ entryId: "b1", reason: expect.stringContaining("fromHook") }),
    );
  });
});

describe("a damaged pi file: every line that cannot be mapped as it was is noted, none dropped silently", () => {
  const mapped = mapPiSession(fixture("damaged.jsonl"));
  const reasons = (id: string) => mapped.notes.filter((n) => n.entryId === id).map((n) => n.reason);

  it("a tool result without its call is kept as a Custom entry, with the rule it breaks", () => {
    expect(byId(mapped.entries, "d2").kind.case).toBe("custom");
    expect(reasons("d2")).toEqual([
      expect.stringMatching(/no ASSISTANT tool call "call_9".*kept as a Custom entry/),
    ]);
  });

  it("a second entry with a used id is skipped and noted", () => {
    expect(mapped.notes).toContainEqual(
      expect.objectContaining({
        line: 4,
        entryId: "d1",
        reason: expect.stringContaining("used twice"),
      }),
    );
  });

  it("a label over 128 characters, an unknown entry type and a missing timestamp are noted", () => {
    expect(byId(mapped.entries, "d3").kind.case).toBe("custom");
    expect(reasons("d3")[0]).toContain("label must have 1 to 128 characters");
    expect(reasons("d4")[0]).toContain('"rocket_launch" is not one pi defines');
    expect(reasons("d6")).toEqual(["no valid timestamp: the parent's is used"]);
    expect(byId(mapped.entries, "d6").timestamp).toEqual(byId(mapped.entries, "d5").timestamp);
  });

  it("a line that is not JSON is noted by its number", () => {
    expect(mapped.notes).toContainEqual({ line: 9, reason: expect.stringContaining("not JSON") });
  });

  it("the mapped log passes every rule of an import", () => {
    expect(() => planImport(mapped.sessionId, mapped.entries)).not.toThrow();
  });

  it("a compaction keeping entries an earlier one replaced is noted: pi shows them again, sessiond cannot", () => {
    const line = (o: object) => JSON.stringify({ timestamp: "2026-01-01T00:00:00Z", ...o });
    const msg = (id: string, parentId: string | null, role: string) =>
      line({ type: "message", id, parentId, message: { role, content: id } });
    const text = [
      line({ type: "session", version: 3, id: "s1" }),
      msg("m1", null, "user"),
      msg("a1", "m1", "user"),
      line({
        type: "compaction",
        id: "c1",
        parentId: "a1",
        summary: "one",
        firstKeptEntryId: "a1",
      }),
      line({
        type: "compaction",
        id: "c2",
        parentId: "c1",
        summary: "two",
        firstKeptEntryId: "m1",
      }),
    ].join("\n");
    const back = mapPiSession(text);
    expect(byId(back.entries, "c2").kind.value).toMatchObject({ replacesEntryIds: ["c1"] });
    expect(back.notes).toEqual([
      expect.objectContaining({
        line: 5,
        entryId: "c2",
        reason: expect.stringContaining('keeps "m1" from "m1" on'),
      }),
    ]);
  });

  it("a child written before its parent still hangs under it, and the file's last line is the leaf", () => {
    const line = (o: object) => JSON.stringify({ timestamp: "2026-01-01T00:00:00Z", ...o });
    const msg = (id: string, parentId: string | null) =>
      line({ type: "message", id, parentId, message: { role: "user", content: id } });
    const text = [
      line({ type: "session", version: 3, id: "s1" }),
      msg("m1", null),
      msg("m3", "m2"),
      msg("m2", "m1"),
      msg("m4", "m2"),
    ].join("\n");
    const back = mapPiSession(text);
    expect(back.notes).toEqual([]);
    expect(back.entries.map((e) => [e.id, e.parentId])).toEqual([
      ["s1", undefined],
      ["m1", "s1"],
      ["m2", "m1"],
      ["m3", "m2"],
      ["m4", "m2"],
    ]);
  });

  it("a file without a session header is refused as a whole", () => {
    expect(() => mapPiSession('{"type":"message","id":"x"}\n')).toThrow(/not a pi session file/);
  });
});
