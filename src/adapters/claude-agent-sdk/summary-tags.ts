import { MAX_TAG_VALUE_BYTES, MAX_TAGS, MAX_TAGS_BYTES, type Tags } from "../../core/tags.js";

/**
 * Where a main session keeps the SDK's folded summary (`SessionSummaryEntry.data`,
 * opaque JSON): in tags, because tags are what ListSessions returns, so a
 * listing of N sessions costs pages of ListSessions and no entry reads. The
 * JSON is cut into values of at most 256 bytes under `claude.summary.0`,
 * `claude.summary.1`, … A summary may take half the session's tag budget
 * (2 KiB, so that tags set with `sessiond tag` still fit); a larger one is
 * not stored, and the session is listed by reading it.
 */

/** Prefix of the summary's tag keys (`claude.summary.<n>`). */
export const SUMMARY_TAG = "claude.summary";

/** The largest summary stored: keys and values in UTF-8 bytes. */
const SUMMARY_BUDGET_BYTES = MAX_TAGS_BYTES / 2;

function chunkKey(index: number): string {
  return `${SUMMARY_TAG}.${index}`;
}

/** True for a key of the summary's tags. */
export function isSummaryKey(key: string): boolean {
  return key.startsWith(`${SUMMARY_TAG}.`);
}

/** `text` in pieces of at most MAX_TAG_VALUE_BYTES UTF-8 bytes, cut between code points. */
function pieces(text: string): string[] {
  const out: string[] = [];
  let piece = "";
  let bytes = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char);
    if (bytes + size > MAX_TAG_VALUE_BYTES) {
      out.push(piece);
      piece = "";
      bytes = 0;
    }
    piece += char;
    bytes += size;
  }
  if (piece !== "") out.push(piece);
  return out;
}

/** The summary the tags hold (undefined: none, or not readable). */
export function summaryOfTags(tags: Tags): Record<string, unknown> | undefined {
  let json = "";
  for (let i = 0; tags[chunkKey(i)] !== undefined; i++) json += tags[chunkKey(i)];
  if (json === "") return undefined;
  try {
    const data: unknown = JSON.parse(json);
    return typeof data === "object" && data !== null && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The summary's tags, or undefined when they would not fit beside `others` (the session's other tags). */
function summaryTags(
  data: Record<string, unknown>,
  others: Tags,
): Record<string, string> | undefined {
  const values = pieces(JSON.stringify(data));
  const tags: Record<string, string> = {};
  let bytes = 0;
  values.forEach((value, i) => {
    tags[chunkKey(i)] = value;
    bytes += Buffer.byteLength(chunkKey(i)) + Buffer.byteLength(value);
  });
  let otherBytes = 0;
  for (const [key, value] of Object.entries(others)) {
    otherBytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  const fits =
    bytes <= SUMMARY_BUDGET_BYTES &&
    bytes + otherBytes <= MAX_TAGS_BYTES &&
    values.length + Object.keys(others).length <= MAX_TAGS;
  return fits ? tags : undefined;
}

/**
 * The tag changes (a SessionInfo's `tags`: a value sets, "" removes) that
 * make a session whose tags are `current` hold `data`: none when it holds
 * it already. `data` undefined, or too large to store, removes the summary
 * the session holds, so that no stale one is listed.
 */
export function summaryTagChanges(
  current: Tags,
  data: Record<string, unknown> | undefined,
): Record<string, string> {
  const others: Record<string, string> = {};
  for (const [key, value] of Object.entries(current)) if (!isSummaryKey(key)) others[key] = value;
  const wanted = (data === undefined ? undefined : summaryTags(data, others)) ?? {};
  const changes: Record<string, string> = {};
  for (const [key, value] of Object.entries(wanted)) {
    if (current[key] !== value) changes[key] = value;
  }
  for (const key of Object.keys(current)) {
    if (isSummaryKey(key) && wanted[key] === undefined) changes[key] = "";
  }
  return changes;
}
