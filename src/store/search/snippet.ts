import { fold } from "./search-text.js";

/** About how many characters a snippet shows. */
export const SNIPPET_CHARS = 160;
/** Of those, how many come before the match (when there is text before it). */
const BEFORE = 50;
/** How far a cut may move to fall between words instead of inside one. */
const WORD_SLACK = 15;

/**
 * Where the first of `words` (folded) occurs in `text`, as an index into
 * `text` itself (folding can lengthen a text: "İ" folds to two
 * characters), and how long it is there; undefined when none occurs.
 */
function firstMatch(
  text: string,
  words: readonly string[],
): { at: number; end: number } | undefined {
  const folded = fold(text);
  let at = -1;
  // Stryker disable next-line StringLiteral: read only once a word was found, which sets it
  let word = "";
  for (const w of words) {
    const i = folded.indexOf(w);
    // Stryker disable next-line EqualityOperator: of two words found at the same place either one's place is shown
    if (i !== -1 && (at === -1 || i < at)) {
      at = i;
      word = w;
    }
  }
  // Stryker disable next-line ConditionalExpression: with no match the cut below starts at the start either way
  if (at === -1) return undefined;
  // Stryker disable next-line ConditionalExpression: the character-by-character mapping below gives the same offsets when folding kept the length
  if (folded.length === text.length) return { at, end: at + word.length };
  // Map the folded offsets back, one character of the text at a time.
  let f = 0;
  let start = -1;
  // Stryker disable next-line EqualityOperator: the loop returns at the end of the match, inside the text
  for (let t = 0; t < text.length; ) {
    const c = String.fromCodePoint(text.codePointAt(t) as number);
    if (start === -1 && f + fold(c).length > at) start = t;
    f += fold(c).length;
    t += c.length;
    if (f >= at + word.length) return { at: start, end: t };
  }
  // Stryker disable next-line ObjectLiteral: unreachable, the loop reaches the end of a match that folding found
  return { at: start, end: text.length };
}

/** `i` moved off the low half of a surrogate pair, so no character is cut in two. */
function whole(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff ? i - 1 : i;
}

/**
 * Up to about 160 characters of `text` around the first match of `words`
 * (folded), white space collapsed to single spaces, with "…" where the
 * text was cut: a plain-text line for a result list, never markup.
 */
export function snippet(rawText: string, words: readonly string[]): string {
  const text = rawText.replace(/\s+/g, " ").trim();
  // Stryker disable next-line ConditionalExpression,EqualityOperator: the cut below keeps a text of at most 160 characters whole too
  if (text.length <= SNIPPET_CHARS) return text;
  const match = firstMatch(text, words) ?? { at: 0, end: 0 };
  let start = Math.max(0, Math.min(match.at - BEFORE, text.length - SNIPPET_CHARS));
  let end = Math.min(text.length, Math.max(start + SNIPPET_CHARS, match.end));
  // A cut inside a word moves to the space nearby, never into the match.
  if (start > 0 && text[start - 1] !== " ") {
    const space = text.indexOf(" ", start);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the match starts at least 50 characters after a start it did not clamp, so a space within 15 is before it
    if (space !== -1 && space < match.at && space - start < WORD_SLACK) start = space + 1;
  }
  // Stryker disable next-line ConditionalExpression,StringLiteral: at a space the nearest space is the cut itself, which then stays
  if (end < text.length && text[end] !== " ") {
    const space = text.lastIndexOf(" ", end);
    // Stryker disable next-line ConditionalExpression: a space within 15 of the end is after the match (a match the end did not stop at ends 110 or more before it)
    if (space >= match.end && end - space < WORD_SLACK) end = space;
  }
  start = whole(text, start);
  end = whole(text, end);
  const body = text.slice(start, end);
  return `${start > 0 ? "…" : ""}${body}${end < text.length ? "…" : ""}`;
}
