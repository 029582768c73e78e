import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  type ContentPartSchema,
  type Entry,
  EntrySchema,
  type Message,
  MessageSchema,
  Role,
} from "../../gen/sessiond/v1/entry_pb.js";
import { EntryKind } from "../../gen/sessiond/v1/session_pb.js";
import {
  assistant,
  branchSummary,
  compaction,
  custom,
  info,
  kindless,
  label,
  leaf,
  modelChange,
  thinkingLevel,
  toolResult,
  user,
} from "../../test/support/fixtures.js";
import {
  entryKind,
  entryPreview,
  messagePreviewText,
  messageText,
  roleOf,
  toolCallIds,
  toolResultCallId,
} from "./entry.js";

type PartInit = MessageInitShape<typeof ContentPartSchema>["part"];

function message(role: Role, parts: PartInit[]): Message {
  return create(MessageSchema, { role, content: parts.map((part) => ({ part })) });
}

function messageEntry(id: string, msg: Message): Entry {
  return create(EntrySchema, { id, kind: { case: "message", value: msg } });
}

describe("entryKind", () => {
  it("maps each oneof case to its EntryKind", () => {
    expect(entryKind(info("r"))).toBe(EntryKind.SESSION_INFO);
    expect(entryKind(user("u", "hi"))).toBe(EntryKind.MESSAGE);
    expect(entryKind(label("l", "x"))).toBe(EntryKind.LABEL);
    expect(entryKind(leaf("f", "u"))).toBe(EntryKind.LEAF);
  });

  it("is UNSPECIFIED for an entry without a kind", () => {
    expect(entryKind(kindless("k"))).toBe(EntryKind.UNSPECIFIED);
  });
});

describe("messageText", () => {
  it("joins the parts of a message with newlines", () => {
    const msg = message(Role.USER, [
      { case: "text", value: "first" },
      { case: "text", value: "second" },
    ]);
    expect(messageText(msg)).toBe("first\nsecond");
  });

  it("shows thinking as its text, a tool call by name and an image by MIME type", () => {
    const msg = message(Role.ASSISTANT, [
      { case: "thinking", value: { thinking: "pondering" } },
      { case: "toolCall", value: { id: "k1", name: "calc" } },
      { case: "image", value: { mimeType: "image/png" } },
    ]);
    expect(messageText(msg)).toBe("pondering\n[tool call calc]\n[image image/png]");
  });

  it("skips a part with nothing set", () => {
    const msg = message(Role.USER, [{ case: undefined }, { case: "text", value: "only" }]);
    expect(messageText(msg)).toBe("only");
  });
});

describe("messagePreviewText", () => {
  it("puts a reply's text before its tool calls and its thinking last", () => {
    const msg = message(Role.ASSISTANT, [
      { case: "thinking", value: { thinking: "secret plan" } },
      { case: "toolCall", value: { id: "k1", name: "calc" } },
      { case: "text", value: "Here is the fix" },
    ]);
    expect(messagePreviewText(msg)).toBe("Here is the fix\n[tool call calc]\nsecret plan");
  });

  it("keeps the parts' order in messageText, which shows a message whole", () => {
    const msg = message(Role.ASSISTANT, [
      { case: "thinking", value: { thinking: "secret plan" } },
      { case: "text", value: "Here is the fix" },
    ]);
    expect(messageText(msg)).toBe("secret plan\nHere is the fix");
  });
});

describe("entryPreview", () => {
  it("of an assistant reply that thought first: its reply", () => {
    const msg = message(Role.ASSISTANT, [
      { case: "thinking", value: { thinking: "secret plan" } },
      { case: "text", value: "Here is the fix" },
    ]);
    expect(entryPreview(messageEntry("a", msg))).toBe("Here is the fix secret plan");
  });

  it.each([
    ["a message: its text", user("u", "hello there"), "hello there"],
    ["a SessionInfo: its title", info("r", "My session"), "My session"],
    ["a SessionInfo without title: empty", info("r"), ""],
    [
      "a ModelChange with provider: provider/model",
      modelChange("m", "gpt-x", "openai"),
      "openai/gpt-x",
    ],
    ["a ModelChange without provider: the model", modelChange("m", "gpt-x"), "gpt-x"],
    ["a ThinkingLevelChange: the level", thinkingLevel("t", "high"), "high"],
    ["a Compaction: its summary", compaction("c", "so far", ["u"]), "so far"],
    ["a BranchSummary: its summary", branchSummary("b", "tried X", "u"), "tried X"],
    ["a Label: its text", label("l", "checkpoint"), "checkpoint"],
    ["a Leaf: an arrow to its target", leaf("f", "u7"), "→ u7"],
    ["a Custom: its namespace", custom("n", "ui", { theme: "dark" }), "ui"],
    ["an entry without a kind: empty", kindless("k"), ""],
  ])("of %s", (_, entry, preview) => {
    expect(entryPreview(entry)).toBe(preview);
  });

  it("collapses runs of whitespace and newlines into one space and trims the ends", () => {
    expect(entryPreview(user("u", "  one \n\n\t two  "))).toBe("one two");
  });

  it("keeps a lone carriage return and makes a CRLF one space", () => {
    expect(entryPreview(user("u", "cr\rlast\r\nline"))).toBe("cr\rlast line");
  });

  it("keeps a line of exactly max characters whole", () => {
    expect(entryPreview(user("u", "abcde"), 5)).toBe("abcde");
  });

  it("cuts a longer line to max characters, the last one an ellipsis", () => {
    expect(entryPreview(user("u", "abcdefgh"), 5)).toBe("abcd…");
    expect(entryPreview(user("u", "x".repeat(100)))).toBe(`${"x".repeat(79)}…`);
  });
});

describe("roleOf", () => {
  it("is the role of a message entry", () => {
    expect(roleOf(user("u", "hi"))).toBe(Role.USER);
    expect(roleOf(toolResult("t", "k1"))).toBe(Role.TOOL);
  });

  it("is UNSPECIFIED for any other entry", () => {
    expect(roleOf(label("l", "x"))).toBe(Role.UNSPECIFIED);
    expect(roleOf(kindless("k"))).toBe(Role.UNSPECIFIED);
  });
});

describe("toolCallIds", () => {
  it("are the ids of an ASSISTANT message's tool calls, in order, text parts skipped", () => {
    expect(toolCallIds(assistant("a", "let me see", ["k1", "k2"]))).toEqual(["k1", "k2"]);
  });

  it("are empty for an ASSISTANT message without tool calls", () => {
    expect(toolCallIds(assistant("a", "done"))).toEqual([]);
  });

  it("are empty for a tool call part in a message that is not the ASSISTANT's", () => {
    const msg = message(Role.USER, [{ case: "toolCall", value: { id: "k1", name: "calc" } }]);
    expect(toolCallIds(messageEntry("u", msg))).toEqual([]);
  });

  it("are empty for entries that are not messages, kindless ones included", () => {
    expect(toolCallIds(label("l", "x"))).toEqual([]);
    expect(toolCallIds(kindless("k"))).toEqual([]);
  });
});

describe("toolResultCallId", () => {
  it("is the call a TOOL message answers", () => {
    expect(toolResultCallId(toolResult("t", "k1"))).toBe("k1");
  });

  it("is undefined for a message of another role, even one carrying a tool_call_id", () => {
    const msg = message(Role.USER, [{ case: "text", value: "hi" }]);
    msg.toolCallId = "k1";
    expect(toolResultCallId(messageEntry("u", msg))).toBeUndefined();
    expect(toolResultCallId(user("u", "hi"))).toBeUndefined();
  });

  it("is undefined for entries that are not messages, kindless ones included", () => {
    expect(toolResultCallId(label("l", "x"))).toBeUndefined();
    expect(toolResultCallId(kindless("k"))).toBeUndefined();
  });
});
