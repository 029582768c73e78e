/**
 * The characters that open or close a directional run: embeddings and
 * overrides (U+202A-U+202E) and isolates (U+2066-U+2069). U+202E in a title
 * reverses everything after it up to the end of its paragraph, the viewer's
 * own text included, and can dress "exe.pdf" up as "fdp.exe". The marks
 * (U+200E, U+200F, U+061C) reverse nothing and are left alone: right-to-left
 * writing uses them.
 */
const RUN_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

/** `text` with each run control replaced by a visible "[U+202E]", so it reorders nothing. */
export function showBidiControls(text: string): string {
  return text.replace(
    RUN_CONTROLS,
    (c) => `[U+${(c.codePointAt(0) as number).toString(16).toUpperCase()}]`,
  );
}
