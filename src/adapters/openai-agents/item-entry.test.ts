import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { AgentInputItem } from "@openai/agents-core";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { entryItems, itemEntry } from "./item-entry.js";

/** An item as the session gets it back from the server: its entry through the wire. */
function roundTrip(item: AgentInputItem): AgentInputItem[] {
  const entry = create(EntrySchema, itemEntry(item));
  return entryItems(fromBinary(EntrySchema, toBinary(EntrySchema, entry)));
}

/**
 * Text of ASCII and now and then a lone UTF-16 surrogate (a JS string may
 * hold one; UTF-8, and so a protobuf string, cannot).
 */
const unit = fc.oneof(
  { weight: 9, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom("\uD800", "\uDBFF", "\uDC00", "\uDFFF") },
);
/**
 * JSON as the SDK persists it (no -0, no undefined), without "__proto__"
 * keys: protobuf-es reads a Struct by assigning keys, which drops one (no
 * SDK writes such a key).
 */
const key = fc.string({ unit }).filter((k) => k !== "__proto__");
const json = fc
  .jsonValue({ stringUnit: unit })
  .filter((v) => !JSON.stringify(v).includes('"__proto__":'))
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const text = fc.string({ unit });
const extras = fc.dictionary(
  fc.constantFrom("id", "providerData", "status", "content", "name", "output", "role", "x"),
  json,
  { maxKeys: 2 },
);
const inputText = text.map((t) => ({ type: "input_text", text: t }));
const outputText = text.map((t) => ({ type: "output_text", text: t }));
const shaped = fc.oneof(
  fc.record({
    type: fc.constantFrom("message", undefined),
    role: fc.constant("user"),
    content: fc.oneof(text, fc.array(inputText, { maxLength: 3 })),
  }),
  fc.record({
    type: fc.constant("message"),
    role: fc.constant("assistant"),
    status: fc.constantFrom("completed", "incomplete"),
    content: fc.array(outputText, { maxLength: 3 }),
  }),
  fc.record({
    type: fc.constant("function_call"),
    callId: fc.string({ maxLength: 8 }),
    name: text,
    arguments: fc.oneof(
      json.map((v) => JSON.stringify(v)),
      text,
    ),
    status: fc.constant("completed"),
  }),
  fc.record({
    type: fc.constant("function_call_result"),
    callId: fc.string({ maxLength: 8 }),
    name: text,
    status: fc.constant("completed"),
    output: fc.oneof(
      text,
      text.map((t) => ({ type: "text", text: t })),
    ),
  }),
  fc.record({ type: fc.constant("reasoning"), content: fc.array(inputText, { maxLength: 2 }) }),
  fc.dictionary(key, json),
);
const items = fc
  .tuple(shaped, extras)
  .map(([item, extra]) => JSON.parse(JSON.stringify({ ...item, ...extra })) as AgentInputItem);

describe("items as entries", () => {
  test("every JSON item reads back deep-equal from its entry after the wire", () => {
    fc.assert(
      fc.property(items, (item) => {
        expect(roundTrip(item)).toEqual([item]);
      }),
      { numRuns: 500 },
    );
  });

  test('a call or result whose name is no string reads back whole, its typed name ""', () => {
    const named = (type: string) =>
      ({
        type,
        callId: "c1",
        name: { toString: false },
        status: "completed",
      }) as unknown as AgentInputItem;
    const call = create(EntrySchema, itemEntry(named("function_call")));
    const part = call.kind.case === "message" ? call.kind.value.content[0]?.part : undefined;
    expect(part?.case === "toolCall" && part.value.name).toBe("");
    const result = create(EntrySchema, itemEntry(named("function_call_result")));
    expect(result.kind.case === "message" && result.kind.value.toolName).toBe("");
    for (const type of ["function_call", "function_call_result"]) {
      expect(roundTrip(named(type))).toEqual([named(type)]);
    }
  });

  test("an item the typed entry holds whole needs no residual", () => {
    const call = {
      type: "function_call",
      callId: "c1",
      name: "add",
      arguments: '{"a":1}',
      status: "completed",
    } as AgentInputItem;
    const entry = create(EntrySchema, itemEntry(call));
    expect(entry.kind.case === "message" && entry.kind.value.metadata).toBeUndefined();
    expect(entry.kind.case === "message" && entry.kind.value.role).toBe(Role.ASSISTANT);
  });

  test("a lone surrogate in a text is kept by the residual as JSON text; the typed text holds U+FFFD", () => {
    const said = { type: "message", role: "user", content: "a\uD800b" } as AgentInputItem;
    const entry = create(EntrySchema, itemEntry(said));
    const message = entry.kind.case === "message" ? entry.kind.value : undefined;
    expect(message?.content[0]?.part).toEqual({ case: "text", value: "a\uFFFDb" });
    expect(message?.metadata).toEqual({
      "openai-agents": { set_json: '{"content":"a\\ud800b"}' },
    });
    expect(roundTrip(said)).toEqual([said]);
  });

  test("a lone surrogate escaped in call arguments (JSON text) is kept by the residual", () => {
    const call = {
      type: "function_call",
      callId: "c1",
      name: "find",
      arguments: JSON.stringify({ q: "\uDC00" }),
      status: "completed",
    } as AgentInputItem;
    expect(roundTrip(call)).toEqual([call]);
  });

  test("an item no message type holds, with a lone surrogate, is kept whole as item_json", () => {
    const hosted = { type: "hosted_tool_call", name: "web\uD800", status: "completed" };
    const entry = create(EntrySchema, itemEntry(hosted as AgentInputItem));
    expect(entry.kind.case === "custom" && entry.kind.value.data).toEqual({
      item_json: JSON.stringify(hosted),
    });
    expect(roundTrip(hosted as AgentInputItem)).toEqual([hosted]);
  });

  test("an ordinary text needs no residual: nothing is stored twice", () => {
    const said = { type: "message", role: "user", content: "a\uD83D\uDE00b" } as AgentInputItem;
    const entry = create(EntrySchema, itemEntry(said));
    expect(entry.kind.case === "message" && entry.kind.value.metadata).toBeUndefined();
    expect(roundTrip(said)).toEqual([said]);
  });

  test("a provider id and data are the whole residual", () => {
    const said = {
      type: "message",
      role: "assistant",
      status: "completed",
      id: "msg_1",
      providerData: { cached: true },
      content: [{ type: "output_text", text: "hi" }],
    } as AgentInputItem;
    const entry = create(EntrySchema, itemEntry(said));
    expect(entry.kind.case === "message" && entry.kind.value.metadata).toEqual({
      "openai-agents": { set: { id: "msg_1", providerData: { cached: true } } },
    });
  });
});

describe("screenshots as image parts", () => {
  const png = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff));
  const dataUrl = `data:image/png;base64,${png.toString("base64")}`;
  const item = {
    type: "message",
    role: "user",
    content: [
      { type: "input_text", text: "what is on the screen?" },
      { type: "input_image", image: dataUrl },
    ],
  } as unknown as AgentInputItem;

  test("an array tool output of a text and an image is a TOOL message of a text part and an image part", () => {
    const png = Buffer.from([137, 80, 78, 71, 1, 2, 3]);
    const item = {
      type: "function_call_result",
      name: "screenshot",
      callId: "call_1",
      status: "completed",
      output: [
        { type: "input_text", text: "the page" },
        { type: "input_image", image: `data:image/png;base64,${png.toString("base64")}` },
      ],
    } as AgentInputItem;
    const entry = create(EntrySchema, itemEntry(item));
    const message = entry.kind.case === "message" ? entry.kind.value : undefined;
    expect(message?.role).toBe(Role.TOOL);
    expect(message?.content.map((p) => p.part.case)).toEqual(["text", "image"]);
    expect(message?.content[0]?.part.value).toBe("the page");
    const image = message?.content[1]?.part;
    expect(image?.case === "image" && image.value.mimeType).toBe("image/png");
    expect(image?.case === "image" && Buffer.from(image.value.data).equals(png)).toBe(true);
    expect(message?.metadata).toBeUndefined();
    expect(roundTrip(item)).toEqual([item]);
  });

  test("a data-URL image is an image part of its bytes, with no residual, and reads back the same", () => {
    const entry = create(EntrySchema, itemEntry(item));
    const m = entry.kind.case === "message" ? entry.kind.value : undefined;
    expect(m?.role).toBe(Role.USER);
    expect(m?.content.map((p) => p.part.case)).toEqual(["text", "image"]);
    const image = m?.content[1]?.part;
    expect(image?.case === "image" && image.value.mimeType).toBe("image/png");
    expect(image?.case === "image" && Buffer.compare(image.value.data, png)).toBe(0);
    expect(m?.metadata).toBeUndefined(); // the bytes are not kept twice
    expect(roundTrip(item)).toEqual([item]);
  });

  test("an image with more than a canonical data URL keeps the old path: texts typed, the rest in the residual", () => {
    const detailed = {
      ...item,
      content: [{ type: "input_image", image: dataUrl, detail: "high" }],
    } as unknown as AgentInputItem;
    const entry = create(EntrySchema, itemEntry(detailed));
    const m = entry.kind.case === "message" ? entry.kind.value : undefined;
    expect(m?.content.some((p) => p.part.case === "image")).toBe(false);
    expect(roundTrip(detailed)).toEqual([detailed]);
    const padded = {
      ...item,
      content: [{ type: "input_image", image: "data:image/png;base64,AB==" }], // not canonical
    } as unknown as AgentInputItem;
    expect(roundTrip(padded)).toEqual([padded]);
  });
});
