import { create, toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { SessionStateSchema, StateMessageSchema, View } from "../../gen/sessiond/v1/session_pb.js";
import { openStore } from "../index.js";
import {
  assistantMessage,
  customEntry,
  type EntryInit,
  imagePart,
  labelEntry,
  modelChange,
  textPart,
  thinkingPart,
  toolCallPart,
  toolResult,
  userMessage,
} from "./entry-builders.js";
import { roleName, textOf, toolCallsOf, transcript } from "./message-text.js";

/** The canonical proto JSON of what a builder makes: the wire shape, compared whole. */
const json = (init: EntryInit) => toJson(EntrySchema, create(EntrySchema, init));

describe("entry builders", () => {
  it("a user message from a string is one text part; id, parent and metadata are kept", () => {
    expect(json(userMessage("hi"))).toEqual({
      message: { role: "ROLE_USER", content: [{ text: "hi" }] },
    });
    expect(json(userMessage("hi", { id: "u1", parentId: "p0", metadata: { k: "v" } }))).toEqual({
      id: "u1",
      parentId: "p0",
      message: { role: "ROLE_USER", content: [{ text: "hi" }], metadata: { k: "v" } },
    });
  });

  it("content given as parts is used as it is, in order", () => {
    const png = new Uint8Array([137, 80, 78, 71]);
    expect(json(userMessage([textPart("look"), imagePart(png, "image/png")]))).toEqual({
      message: {
        role: "ROLE_USER",
        content: [{ text: "look" }, { image: { mimeType: "image/png", data: "iVBORw==" } }],
      },
    });
  });

  it("an assistant message puts thinking first, then the content, then the tool calls", () => {
    const entry = assistantMessage("let me check", {
      id: "a1",
      thinking: "the user wants the weather",
      toolCalls: [
        { id: "k1", name: "weather", args: { city: "Oslo", days: 2 } },
        { id: "k2", name: "clock" },
      ],
      model: "m-1",
      provider: "p",
      usage: { inputTokens: 10n, outputTokens: 3n },
      stopReason: "toolUse",
      metadata: { run: 7 },
    });
    expect(json(entry)).toEqual({
      id: "a1",
      message: {
        role: "ROLE_ASSISTANT",
        content: [
          { thinking: { thinking: "the user wants the weather" } },
          { text: "let me check" },
          { toolCall: { id: "k1", name: "weather", arguments: { city: "Oslo", days: 2 } } },
          { toolCall: { id: "k2", name: "clock", arguments: {} } },
        ],
        model: "m-1",
        provider: "p",
        usage: { inputTokens: "10", outputTokens: "3" },
        stopReason: "toolUse",
        metadata: { run: 7 },
      },
    });
  });

  it("an assistant message without options is just its content", () => {
    expect(json(assistantMessage("703"))).toEqual({
      message: { role: "ROLE_ASSISTANT", content: [{ text: "703" }] },
    });
  });

  it("empty text is no part: an assistant turn of tool calls only", () => {
    expect(json(assistantMessage("", { toolCalls: [{ id: "k", name: "ls", args: "." }] }))).toEqual(
      {
        message: {
          role: "ROLE_ASSISTANT",
          content: [{ toolCall: { id: "k", name: "ls", arguments: "." } }],
        },
      },
    );
    expect(json(userMessage(""))).toEqual({ message: { role: "ROLE_USER" } });
  });

  it("a tool result answers its call by id, with the tool's name and the error flag", () => {
    expect(json(toolResult("k1", "12°C", { toolName: "weather", parentId: "a1" }))).toEqual({
      parentId: "a1",
      message: {
        role: "ROLE_TOOL",
        content: [{ text: "12°C" }],
        toolCallId: "k1",
        toolName: "weather",
      },
    });
    expect(json(toolResult("k2", "no clock", { isError: true, metadata: { ms: 3 } }))).toEqual({
      message: {
        role: "ROLE_TOOL",
        content: [{ text: "no clock" }],
        toolCallId: "k2",
        isError: true,
        metadata: { ms: 3 },
      },
    });
  });

  it("parts: thinking keeps its signature; a tool call's arguments may be any JSON value", () => {
    expect(json(userMessage([thinkingPart("hm", "sig")]))).toEqual({
      message: { role: "ROLE_USER", content: [{ thinking: { thinking: "hm", signature: "sig" } }] },
    });
    expect(json(userMessage([toolCallPart("k", "t", [1, "two", null])]))).toEqual({
      message: {
        role: "ROLE_USER",
        content: [{ toolCall: { id: "k", name: "t", arguments: [1, "two", null] } }],
      },
    });
  });

  it("model change, label and custom entries", () => {
    expect(json(modelChange("m-2", { provider: "q", id: "mc" }))).toEqual({
      id: "mc",
      modelChange: { model: "m-2", provider: "q" },
    });
    expect(json(modelChange("m-3"))).toEqual({ modelChange: { model: "m-3" } });
    expect(json(labelEntry("done", { parentId: "a1" }))).toEqual({
      parentId: "a1",
      label: { label: "done" },
    });
    expect(json(customEntry("app", { n: 1 }, { id: "c1" }))).toEqual({
      id: "c1",
      custom: { namespace: "app", data: { n: 1 } },
    });
  });
});

describe("reading text back", () => {
  const entry = create(
    EntrySchema,
    assistantMessage(
      [textPart("one"), imagePart(new Uint8Array([1]), "image/png"), textPart("two")],
      {
        thinking: "hidden",
        toolCalls: [{ id: "k1", name: "f", args: { x: 1 } }],
      },
    ),
  );
  const message = entry.kind.case === "message" ? entry.kind.value : undefined;

  it("textOf joins only the text parts, from a message, an entry or a state message", () => {
    expect(textOf(message)).toBe("one\ntwo");
    expect(textOf(entry, " ")).toBe("one two");
    expect(
      textOf(create(SessionStateSchema, { messages: [{ entryId: "e", message }] }).messages[0]),
    ).toBe("one\ntwo");
    expect(textOf(create(EntrySchema, labelEntry("x")))).toBe("");
    expect(textOf(undefined)).toBe("");
  });

  it("toolCallsOf gives the calls with plain JSON arguments (null when none were sent)", () => {
    expect(toolCallsOf(entry)).toEqual([{ id: "k1", name: "f", args: { x: 1 } }]);
    const bare = create(EntrySchema, {
      kind: {
        case: "message",
        value: {
          role: Role.ASSISTANT,
          content: [{ part: { case: "toolCall", value: { id: "k", name: "g" } } }],
        },
      },
    });
    expect(toolCallsOf(bare)).toEqual([{ id: "k", name: "g", args: null }]);
    expect(toolCallsOf(create(EntrySchema, userMessage("no calls")))).toEqual([]);
  });

  it("roleName names every role", () => {
    expect(
      [Role.USER, Role.ASSISTANT, Role.TOOL, Role.UNSPECIFIED, 99 as Role].map(roleName),
    ).toEqual(["user", "assistant", "tool", "unspecified", "unspecified"]);
  });

  it("entries built here round-trip through a store: the transcript of the state is what was built", async () => {
    const store = openStore({ memory: true });
    try {
      const { session: meta } = await store.create({ title: "builders" });
      const s = await store.open("default", meta.id);
      await s.append([
        userMessage("weather in Oslo?", { id: "u1" }),
        assistantMessage("checking", {
          id: "a1",
          toolCalls: [{ id: "k1", name: "weather", args: { city: "Oslo" } }],
        }),
        toolResult("k1", "12°C", { id: "t1", toolName: "weather" }),
        assistantMessage("It is 12°C.", { id: "a2" }),
      ]);
      const state = await s.state({ view: View.CONTEXT });
      expect(transcript(state)).toEqual([
        { entryId: "u1", role: "user", text: "weather in Oslo?", toolCalls: [] },
        {
          entryId: "a1",
          role: "assistant",
          text: "checking",
          toolCalls: [{ id: "k1", name: "weather", args: { city: "Oslo" } }],
        },
        { entryId: "t1", role: "tool", text: "12°C", toolCalls: [], toolCallId: "k1" },
        { entryId: "a2", role: "assistant", text: "It is 12°C.", toolCalls: [] },
      ]);
      // Without ids or parents: ids are assigned, each entry hangs under the one before.
      await s.append([userMessage("again"), assistantMessage("and again")]);
      const tail = transcript(await s.state({ view: View.CONTEXT })).slice(-2);
      expect(tail.map((l) => l.text)).toEqual(["again", "and again"]);
      for (const l of tail) expect(l.entryId).toMatch(/^[0-9a-f]{16}$/);
      const tree = await s.tree();
      const byId = new Map(tree.nodes.map((n) => [n.id, n]));
      expect(byId.get(tail[0]?.entryId ?? "")?.parentId).toBe("a2");
      expect(byId.get(tail[1]?.entryId ?? "")?.parentId).toBe(tail[0]?.entryId);
      expect(transcript({ messages: [create(StateMessageSchema, { entryId: "x" })] })).toEqual([
        { entryId: "x", role: "unspecified", text: "", toolCalls: [] },
      ]);
    } finally {
      await store.close();
    }
  });
});
