import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { expectError, label } from "../../../test/support/fixtures.js";
import { containsAll, entryText, fold, MAX_QUERY_CHARS, queryWords } from "./search-text.js";

/** Simple case folding of one character, as the upper case's lower case when that is one character. */
function simpleFold(c: string): string {
  const f = c.toUpperCase().toLowerCase();
  // The dotless i folds to itself (Turkic rules are not the default); anything expanding keeps its lower case.
  return [...f].length === 1 && c !== "\u0131" ? f : c.toLowerCase();
}

describe("fold", () => {
  it("folds every character of the code space like simple case folding", () => {
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (fold(c) !== simpleFold(c)) wrong.push(cp.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it("knows no context: a final sigma folds like any sigma", () => {
    expect(fold("ΟΔΟΣ")).toBe("οδοσ");
    expect(fold("οδος")).toBe("οδοσ");
  });

  it("lower-cases ASCII and leaves other characters of no case alone", () => {
    expect(fold("Hello, World! 42 😀")).toBe("hello, world! 42 😀");
  });
});

describe("queryWords", () => {
  it("splits at any white space, folds and drops repeats", () => {
    expect(queryWords("  Deploy\tCLUSTER\n deploy  ſtate ")).toEqual([
      "deploy",
      "cluster",
      "state",
    ]);
  });

  it("an empty query or one of white space only fails with INVALID_ARGUMENT", () => {
    expectError(() => queryWords(""), "INVALID_ARGUMENT", "query is empty");
    expectError(() => queryWords(" \u3000\n"), "INVALID_ARGUMENT", "query is empty");
  });

  it("counts characters, not UTF-16 units: 256 emoji pass, 257 characters fail naming the count", () => {
    expect(MAX_QUERY_CHARS).toBe(256);
    expect(queryWords("😀".repeat(256))).toHaveLength(1);
    expectError(() => queryWords("a".repeat(257)), "INVALID_ARGUMENT", "257 characters", "256");
  });
});

describe("entryText", () => {
  it("joins text parts, thinking and tool-call arguments in order, one per line", () => {
    const entry = create(EntrySchema, {
      kind: {
        case: "message",
        value: {
          role: Role.ASSISTANT,
          content: [
            { part: { case: "text", value: "first" } },
            {
              part: { case: "image", value: { mimeType: "image/png", data: new Uint8Array([1]) } },
            },
            { part: { case: "thinking", value: { thinking: "hmm" } } },
            {
              part: {
                case: "toolCall",
                value: {
                  id: "c1",
                  name: "bash",
                  arguments: fromJson(ValueSchema, { cmd: "ls -l", n: 2 }),
                },
              },
            },
            { part: { case: "toolCall", value: { id: "c2", name: "noargs" } } },
          ],
        },
      },
    });
    expect(entryText(entry)).toBe('first\nhmm\n{"cmd":"ls -l","n":2}');
  });

  it("is empty for entries that are not messages", () => {
    expect(entryText(label("l1", "some text"))).toBe("");
  });
});

describe("containsAll", () => {
  it("holds when every word occurs, anywhere and in any order", () => {
    expect(containsAll("alpha beta", ["beta", "alp"])).toBe(true);
    expect(containsAll("alpha beta", ["beta", "gamma"])).toBe(false);
  });
});
