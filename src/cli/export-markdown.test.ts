import { describe, expect, it } from "vitest";
import { closedProse, fenced } from "./export-markdown.js";

/**
 * The Markdown export's blocks keep the transcript's structure whatever
 * the text holds: a fence longer than any backtick run inside, and prose
 * whose code fence is left open closed at its end (else it would swallow
 * every heading after it).
 */
describe("the markdown export's fences", () => {
  it("fences text with a fence longer than its longest backtick run", () => {
    expect(fenced("a ``` b", "text")).toBe("````text\na ``` b\n````");
    expect(fenced("``````", "")).toBe("```````\n``````\n```````");
    expect(fenced("plain\n")).toBe("```\nplain\n```");
  });

  it("closes a fence that prose leaves open, and leaves closed ones as they are", () => {
    expect(closedProse("see:\n```ts\nconst a = 1;")).toBe("see:\n```ts\nconst a = 1;\n```");
    expect(closedProse("~~~~\nx\n~~~")).toBe("~~~~\nx\n~~~\n~~~~");
    const closed = "a\n```\ncode\n```\nb";
    expect(closedProse(closed)).toBe(closed);
    // Inline code with three backticks on a line is not a fence.
    expect(closedProse("```inline ` code```")).toBe("```inline ` code```");
  });
});
