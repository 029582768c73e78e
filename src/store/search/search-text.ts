import { toJsonString } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { invalidArgument } from "../../core/errors.js";

/**
 * What a text search reads of an entry and how it compares: the text of
 * a message entry, Unicode case folding, and the query's words.
 */

/** Longest query, in characters (code points), as the proto says. */
export const MAX_QUERY_CHARS = 256;

/**
 * Characters whose simple case folding (Unicode CaseFolding.txt, status C
 * and S) differs from `toLowerCase`: lower-casing alone would leave "ς"
 * apart from "σ", or "ſ" apart from "s". Every other character folds to
 * its lower case (search-text.test.ts checks the whole code space).
 */
const FOLD_EXCEPTIONS: Readonly<Record<string, string>> = {
  "\u00b5": "\u03bc",
  "\u017f": "s",
  "\u0345": "\u03b9",
  "\u03c2": "\u03c3",
  "\u03d0": "\u03b2",
  "\u03d1": "\u03b8",
  "\u03d5": "\u03c6",
  "\u03d6": "\u03c0",
  "\u03f0": "\u03ba",
  "\u03f1": "\u03c1",
  "\u03f5": "\u03b5",
  "\u1c80": "\u0432",
  "\u1c81": "\u0434",
  "\u1c82": "\u043e",
  "\u1c83": "\u0441",
  "\u1c84": "\u0442",
  "\u1c85": "\u0442",
  "\u1c86": "\u044a",
  "\u1c87": "\u0463",
  "\u1c88": "\ua64b",
  "\u1e9b": "\u1e61",
  "\u1fbe": "\u03b9",
};
const FOLD_EXCEPTION = new RegExp(`[${Object.keys(FOLD_EXCEPTIONS).join("")}]`, "gu");

/**
 * Case folding, character by character (no context: unlike `toLowerCase`
 * alone, a final sigma folds like any other), so that a word is found in
 * a text exactly when its folded form is in the folded text.
 */
export function fold(text: string): string {
  const lower = text.toLowerCase();
  return lower.replace(FOLD_EXCEPTION, (c) => FOLD_EXCEPTIONS[c] as string);
}

/**
 * The query's words, folded: what every matching entry contains.
 * INVALID_ARGUMENT for an empty query (no word) or one over 256 characters.
 */
export function queryWords(query: string): string[] {
  const chars = [...query].length;
  if (chars > MAX_QUERY_CHARS) {
    throw invalidArgument(`query is ${chars} characters long; at most ${MAX_QUERY_CHARS}`);
  }
  const words = fold(query)
    .split(/\s/)
    .filter((w) => w !== "");
  if (words.length === 0) throw invalidArgument("query is empty: give at least one word");
  return [...new Set(words)];
}

/**
 * The searchable text of an entry: for a message, its text parts, thinking
 * and tool-call arguments (as their JSON text), in order, one per line;
 * "" for any other kind. A tool result's output is its text parts.
 */
export function entryText(entry: Entry): string {
  if (entry.kind.case !== "message") return "";
  const texts: string[] = [];
  for (const { part } of entry.kind.value.content) {
    switch (part.case) {
      case "text":
        texts.push(part.value);
        break;
      case "thinking":
        texts.push(part.value.thinking);
        break;
      case "toolCall":
        if (part.value.arguments !== undefined) {
          texts.push(toJsonString(ValueSchema, part.value.arguments));
        }
        break;
    }
  }
  return texts.join("\n");
}

/** Whether folded `text` contains every one of the (folded) `words`. */
export function containsAll(foldedText: string, words: readonly string[]): boolean {
  return words.every((w) => foldedText.includes(w));
}
