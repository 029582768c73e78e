import { create, toJsonString } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import {
  assistant,
  branchSummary,
  buildLog,
  compaction,
  custom,
  info,
  label,
  leaf,
  modelChange,
  thinkingLevel,
  ts,
  user,
} from "../../test/support/fixtures.js";
import { isSessiondError } from "./errors.js";
import { foldPath } from "./fold.js";
import { planWithhold, withheldMarker, withhold } from "./withheld.js";

const MARK = withheldMarker(WithheldReason.REDACTED, "alice", ts(1_700_000_000, 0), "secret");
const ERASED = withheldMarker(WithheldReason.ERASED, "", ts(1_700_000_000, 0), "");

/** The entry as stored JSON: what a withheld entry must no longer contain. */
const json = (e: Entry) => toJsonString(EntrySchema, e);

describe("withhold: what each kind keeps", () => {
  it("a Message keeps role, tool call ids and names, model, provider, usage, stop reason; loses text, thinking, images, arguments and metadata", () => {
    const e = create(EntrySchema, {
      id: "a1",
      parentId: "u1",
      seq: 3n,
      timestamp: ts(5),
      kind: {
        case: "message",
        value: {
          role: Role.ASSISTANT,
          content: [
            { part: { case: "text", value: "SECRET text" } },
            { part: { case: "thinking", value: { thinking: "SECRET thought", signature: "sig" } } },
            {
              part: { case: "image", value: { mimeType: "image/png", data: new Uint8Array([1]) } },
            },
            {
              part: {
                case: "toolCall",
                value: {
                  id: "c1",
                  name: "shell",
                  arguments: { kind: { case: "stringValue", value: "SECRET arg" } },
                },
              },
            },
          ],
          model: "m",
          provider: "p",
          usage: { inputTokens: 10n, outputTokens: 20n },
          stopReason: "tool_use",
          metadata: { note: "SECRET meta" },
        },
      },
    });
    const w = withhold(e, MARK);
    expect(json(w)).not.toContain("SECRET");
    expect([w.id, w.parentId, w.seq, w.timestamp]).toEqual([e.id, e.parentId, e.seq, e.timestamp]);
    expect(w.withheld).toEqual(MARK);
    const m = w.kind.case === "message" ? w.kind.value : undefined;
    expect(m?.role).toBe(Role.ASSISTANT);
    expect(m?.content).toEqual([
      {
        $typeName: "sessiond.v1.ContentPart",
        part: {
          case: "toolCall",
          value: { $typeName: "sessiond.v1.ToolCall", id: "c1", name: "shell" },
        },
      },
    ]);
    expect([m?.model, m?.provider, m?.stopReason, m?.usage?.outputTokens]).toEqual([
      "m",
      "p",
      "tool_use",
      20n,
    ]);
    expect(m?.metadata).toBeUndefined();
  });

  it("a TOOL message keeps tool_call_id, tool_name and is_error", () => {
    const e = create(EntrySchema, {
      id: "t1",
      seq: 4n,
      kind: {
        case: "message",
        value: {
          role: Role.TOOL,
          toolCallId: "c1",
          toolName: "shell",
          isError: true,
          content: [{ part: { case: "text", value: "SECRET output" } }],
        },
      },
    });
    const m = withhold(e, MARK).kind.value as {
      toolCallId?: string;
      toolName?: string;
      isError: boolean;
      content: unknown[];
    };
    expect([m.toolCallId, m.toolName, m.isError, m.content]).toEqual(["c1", "shell", true, []]);
  });

  it("a Compaction keeps replaces_entry_ids and tokens_before, loses the summary", () => {
    const e = compaction("cp", "SECRET summary", ["u1", "a1"]);
    if (e.kind.case === "compaction") e.kind.value.tokensBefore = 99n;
    const w = withhold(e, MARK);
    expect(json(w)).not.toContain("SECRET");
    expect(w.kind.value).toMatchObject({
      summary: "",
      replacesEntryIds: ["u1", "a1"],
      tokensBefore: 99n,
    });
  });

  it("a BranchSummary keeps from_id, loses the summary", () => {
    const w = withhold(branchSummary("b", "SECRET", "x1"), MARK);
    expect(w.kind.value).toMatchObject({ summary: "", fromId: "x1" });
  });

  it("a Custom keeps its namespace, loses its data", () => {
    const w = withhold(custom("k", "app", { token: "SECRET" }), MARK);
    expect(json(w)).not.toContain("SECRET");
    expect(w.kind.value).toMatchObject({ namespace: "app" });
    expect(w.kind.case === "custom" && w.kind.value.data).toBeUndefined();
  });

  it("a Label, ModelChange and ThinkingLevelChange keep their fields (structure) and are marked", () => {
    expect(withhold(label("l", "before-refactor"), MARK).kind.value).toMatchObject({
      label: "before-refactor",
    });
    expect(withhold(modelChange("mc", "m", "p"), MARK).kind.value).toMatchObject({
      model: "m",
      provider: "p",
    });
    expect(withhold(thinkingLevel("tl", "high"), MARK).kind.value).toMatchObject({
      thinkingLevel: "high",
    });
    expect(withhold(label("l", "x"), MARK).withheld).toEqual(MARK);
  });

  it("SessionInfo and Leaf entries are refused with INVALID_ARGUMENT naming the id", () => {
    for (const [e, what] of [
      [info("root1"), "SessionInfo"],
      [leaf("lf1", "u1"), "Leaf"],
    ] as const) {
      let err: unknown;
      try {
        withhold(e, MARK);
      } catch (caught) {
        err = caught;
      }
      expect(isSessiondError(err, "INVALID_ARGUMENT")).toBe(true);
      expect((err as Error).message).toContain(`"${e.id}"`);
      expect((err as Error).message).toContain(what);
    }
  });

  it("an entry already withheld is returned as it is (a second marker changes nothing)", () => {
    const once = withhold(user("u1", "SECRET"), MARK);
    expect(withhold(once, ERASED)).toBe(once);
  });
});

describe("the fold of withheld entries", () => {
  it("shows a redacted message as [redacted] and an erased one as [erased], same role and tool calls", () => {
    const path = [
      info("root"),
      withhold(user("u1", "SECRET"), MARK),
      withhold(assistant("a1", "SECRET", ["c1"]), ERASED),
    ];
    const state = foldPath(path);
    expect(
      state.messages.map((m) => [m.message?.role, m.message?.content.map((p) => p.part.value)]),
    ).toEqual([
      [Role.USER, ["[redacted]"]],
      [Role.ASSISTANT, ["[erased]", { $typeName: "sessiond.v1.ToolCall", id: "c1", name: "calc" }]],
    ]);
  });
});

describe("planWithhold", () => {
  const log = buildLog(user("u1", "SECRET"), assistant("a1", "SECRET"), user("u2"));

  it("answers every id asked for in seq order, duplicates once, changed = those not withheld yet", () => {
    const plan = planWithhold((id) => log.get(id), "s1", ["u2", "u1", "u2"], MARK);
    expect(plan.entries.map((e) => e.id)).toEqual(["u1", "u2"]);
    expect(plan.changed.map((e) => e.id)).toEqual(["u1", "u2"]);
    log.replaceAll(plan.changed);
    const again = planWithhold((id) => log.get(id), "s1", ["u1", "a1"], ERASED);
    expect(again.changed.map((e) => e.id)).toEqual(["a1"]);
    expect(again.entries[0]?.withheld).toEqual(MARK);
  });

  it("refuses the whole request at an unknown id (NOT_FOUND naming it) or a bad kind", () => {
    expect(() => planWithhold((id) => log.get(id), "s1", ["u1", "nope"], MARK)).toThrow(/"nope"/);
    expect(() => planWithhold((id) => log.get(id), "s1", ["root"], MARK)).toThrow(/SessionInfo/);
    expect(() => planWithhold((id) => log.get(id), "s1", [], MARK)).toThrow(/no entry ids/);
  });

  it("SessionLog.replaceAll refuses a replacement that changes an entry's structure, all or none", () => {
    const l = buildLog(user("u1"), user("u2"));
    const good = withhold(l.get("u1") as never, MARK);
    const bad = { ...withhold(l.get("u2") as never, MARK), parentId: "root" };
    expect(() => l.replaceAll([good, bad])).toThrow(/parent/);
    expect(l.get("u1")?.withheld).toBeUndefined();
  });
});
