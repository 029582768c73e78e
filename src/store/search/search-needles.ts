/**
 * The needles of a text search (EntryScan.needles): for each query word,
 * the longest run of characters that a matching entry's canonical proto
 * JSON is sure to hold byte for byte, so an engine can rule an entry out
 * on its stored bytes without decoding it.
 *
 * A run qualifies when each of its characters is printable ASCII that JSON
 * never escapes (not `"` or `\`) and that no other character folds to:
 * "k" (the Kelvin sign) and "s" (long s) are left out, since the stored
 * bytes of those characters hold no ASCII. A dotted capital I folds to
 * "i" plus a combining dot, so an "i" followed by another character of the
 * run cannot come from it, but one that ends the run could: trailing "i"s
 * are dropped. Such characters of the folded text then come from the same
 * ASCII characters of the text, in either case, and text parts, thinking
 * and tool-call arguments are all stored as they are.
 */
const SAFE = /[\x20-\x21\x23-\x5b\x5d-\x7e]/;
const UNSAFE_LETTERS = "ks";

function isSafe(c: string): boolean {
  return SAFE.test(c) && !UNSAFE_LETTERS.includes(c);
}

/** The longest qualifying run of a folded word; "" when it has none. */
export function needleOf(word: string): string {
  let best = "";
  let run = "";
  for (const c of `${word}\0`) {
    if (isSafe(c)) {
      run += c;
      continue;
    }
    const kept = run.replace(/i+$/, "");
    if (kept.length > best.length) best = kept;
    run = "";
  }
  return best;
}

/** The needles of the folded query words (words without one add none). */
export function needlesOf(words: readonly string[]): string[] {
  return [...new Set(words.map(needleOf).filter((n) => n !== ""))];
}
