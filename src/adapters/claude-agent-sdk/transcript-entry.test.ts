import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { EntrySchema, type Message, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { carrierOf, lineOf } from "./transcript-entry.js";

/** A line's carrier as the store gets it back from the server: through the wire. */
function carried(line: SessionStoreEntry) {
  const entry = create(EntrySchema, carrierOf(line));
  return fromBinary(EntrySchema, toBinary(EntrySchema, entry));
}

/**
 * JSON as the SDK persists it (no -0, no undefined), without "__proto__"
 * keys: protobuf-es reads a Struct by assigning keys, which drops one (no
 * SDK writes such a key).
 */
const key = fc.string().filter((k) => k !== "__proto__");
const json = fc
  .jsonValue()
  .filter((v) => !JSON.stringify(v).includes('"__proto__":'))
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const block = fc.oneof(
  fc.record({ type: fc.constant("text"), text: fc.string() }),
  fc.record({ type: fc.constant("thinking"), thinking: fc.string(), signature: fc.string() }),
  fc.record({
    type: fc.constant("tool_use"),
    id: fc.string(),
    name: fc.oneof(fc.string(), json),
    input: json,
  }),
  fc.record({ type: fc.constant("tool_result"), tool_use_id: fc.string(), content: json }),
);
const line = fc
  .tuple(
    fc.constantFrom("user", "assistant", "system", "custom-title", "ai-title", "summary", "x"),
    fc.record(
      {
        message: fc.record({
          role: fc.string(),
          content: fc.oneof(fc.string(), fc.array(block, { maxLength: 3 })),
          usage: json,
          model: json,
        }),
        customTitle: json,
        aiTitle: json,
        subtype: fc.constantFrom("compact_boundary", "info"),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(key, json, { maxKeys: 3 }),
  )
  .map(
    ([type, known, rest]) =>
      JSON.parse(JSON.stringify({ ...rest, ...known, type })) as SessionStoreEntry,
  );

describe("transcript lines as entries", () => {
  test("every JSON line is carried whole, whatever typed entry carries it", () => {
    fc.assert(
      fc.property(line, (l) => {
        expect(lineOf(carried(l))).toEqual(l);
      }),
      { numRuns: 500 },
    );
  });

  test('a tool use whose name is no string is carried whole, its call named ""', () => {
    const l = {
      type: "assistant",
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: "t1", name: { toString: false }, input: {} }],
      },
    } as unknown as SessionStoreEntry;
    const entry = carried(l);
    const parts = entry.kind.case === "message" ? entry.kind.value.content : [];
    expect(parts.map((p) => p.part.case === "toolCall" && p.part.value.name)).toEqual([""]);
    expect(lineOf(entry)).toEqual(l);
  });

  test("an assistant tool use is an ASSISTANT message with the tool call, model and usage", () => {
    const entry = carried({
      type: "assistant",
      uuid: "u1",
      message: {
        role: "assistant",
        model: "claude-x",
        content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }],
        usage: { input_tokens: 5, output_tokens: 2 },
      },
    });
    expect(entry.kind.case).toBe("message");
    const m = entry.kind.value as Message;
    expect(m.role).toBe(Role.ASSISTANT);
    expect(m.model).toBe("claude-x");
    expect(m.usage?.inputTokens).toBe(5n);
    expect(m.content[0]?.part.case).toBe("toolCall");
  });

  test("a line with several tool results is a USER message (a TOOL message answers one call)", () => {
    const results = [1, 2].map((i) => ({
      type: "tool_result",
      tool_use_id: `t${i}`,
      content: "ok",
    }));
    const entry = carried({ type: "user", message: { role: "user", content: results } });
    expect(entry.kind.case === "message" && entry.kind.value.role).toBe(Role.USER);
    expect(entry.kind.case === "message" && entry.kind.value.toolCallId).toBeUndefined();
  });
});

describe("screenshots in lines", () => {
  const png = Buffer.from(Array.from({ length: 500 }, (_, i) => (i * 13) & 0xff)).toString(
    "base64",
  );
  const image = { type: "image", source: { type: "base64", media_type: "image/png", data: png } };
  const line = {
    type: "user",
    uuid: "u-1",
    message: {
      role: "user",
      content: [{ type: "text", text: "the screen:" }, image],
    },
  } as unknown as SessionStoreEntry;
  const toolLine = {
    type: "user",
    uuid: "u-2",
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_9", content: [image] }],
    },
  } as unknown as SessionStoreEntry;

  test("a base64 image is an image part; the carried line holds its part's index, not the data", () => {
    for (const l of [line, toolLine]) {
      const e = carried(l);
      const m = e.kind.case === "message" ? e.kind.value : undefined;
      const parts = m?.content ?? [];
      const img = parts.find((p) => p.part.case === "image")?.part;
      expect(img?.case === "image" && Buffer.from(img.value.data).toString("base64")).toBe(png);
      expect(img?.case === "image" && img.value.mimeType).toBe("image/png");
      expect(JSON.stringify(m?.metadata)).not.toContain(png);
      expect(lineOf(e)).toEqual(l);
    }
  });

  test("an image that is not canonical base64, or has more than type / media_type / data, stays in the line", () => {
    const odd = structuredClone(line) as unknown as {
      message: { content: { source?: Record<string, unknown> }[] };
    };
    const source = odd.message.content[1]?.source as Record<string, unknown>;
    source.data = "AB==";
    const e = carried(odd as unknown as SessionStoreEntry);
    const m = e.kind.case === "message" ? e.kind.value : undefined;
    expect(m?.content.some((p) => p.part.case === "image")).toBe(false);
    expect(lineOf(e)).toEqual(odd);
  });
});
