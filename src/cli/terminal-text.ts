/**
 * Text from sessions (messages, titles, labels, tool output, server errors
 * that quote them) is written by agents and tools, not by the person
 * reading it: printed raw, an ESC sequence could recolour, retitle or
 * clear their terminal, and a NUL or CR could hide what comes before it.
 * Every human-readable line the CLI prints passes through here; `--json`
 * and `export` print the exact text instead.
 *
 * What is escaped, as visible backslash sequences (`\x1b`, `\r`, `\u202e`):
 * - C0 controls, DEL and C1 controls (U+0080–U+009F, which some terminals
 *   obey as 8-bit CSI / OSC);
 * - U+2028 / U+2029, which some viewers treat as line breaks;
 * - the bidi embedding, override and isolate controls (U+202A–U+202E,
 *   U+2066–U+2069, the "Trojan Source" set), which make a line display in
 *   another order than it reads. Implicit marks (LRM, RLM, ALM) stay: real
 *   right-to-left text uses them and they cannot reorder a line.
 * Backslashes themselves are not doubled: this output is for reading, so
 * `C:\path` stays readable, and exactness is what `--json` is for.
 */

const NAMED: Readonly<Record<string, string>> = { "\t": "\\t", "\n": "\\n", "\r": "\\r" };

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** Text for one line of output: every unsafe character, tab and newline included, made visible. */
export function terminalLine(text: string): string {
  return text.replace(UNSAFE, visible);
}

/**
 * Multi-line text (a message body) as lines to print: split at newlines
 * (CRLF too), tabs kept for indentation, everything else unsafe made visible.
 */
export function terminalLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(UNSAFE, (ch) => (ch === "\t" ? ch : visible(ch))));
}
