import { invalidArgument } from "./errors.js";
import { quote } from "./ids.js";

/**
 * Session tags: string keys and values to find sessions by (ListSessions
 * filter.tags). The root SessionInfo carries the first set; each later
 * SessionInfo carries changes (a key set to a value, or removed with an
 * empty value), applied in seq order like the title. Limits keep a tag set
 * small enough to live in every listing record and in one index row.
 */

export type Tags = Readonly<Record<string, string>>;

/** Tag keys: what people use as tag names (user, repo, ticket, team/area), path-safe. */
export const TAG_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$/;
/** Longest value, UTF-8 bytes. */
export const MAX_TAG_VALUE_BYTES = 256;
/** Most tags on a session (and in one change). */
export const MAX_TAGS = 32;
/** Largest tag set, keys and values in UTF-8 bytes. */
export const MAX_TAGS_BYTES = 4096;

/**
 * Checks a tag map as given by a client: on a root (`changes` false) every
 * value must be non-empty; in changes an empty value removes the key.
 * `who` names the field in errors.
 */
export function checkTags(tags: Tags, who: string, changes: boolean): void {
  const keys = Object.keys(tags);
  if (keys.length > MAX_TAGS) {
    throw invalidArgument(`${who}: ${keys.length} tags, at most ${MAX_TAGS} are allowed`);
  }
  for (const key of keys) {
    if (!TAG_KEY_PATTERN.test(key)) {
      throw invalidArgument(
        `${who}: invalid tag key ${quote(key)}: must match [A-Za-z0-9][A-Za-z0-9._/-]{0,63}`,
      );
    }
    const value = tags[key] as string;
    if (value === "" && !changes) {
      throw invalidArgument(`${who}: tag ${quote(key)} has an empty value`);
    }
    const bytes = Buffer.byteLength(value);
    if (bytes > MAX_TAG_VALUE_BYTES) {
      throw invalidArgument(
        `${who}: the value of tag ${quote(key)} has ${bytes} bytes, at most ${MAX_TAG_VALUE_BYTES} are allowed`,
      );
    }
  }
  if (!changes) checkTagSet(tags, who);
}

/** Checks the size of a whole tag set (a root's, or one after changes). */
export function checkTagSet(tags: Tags, who: string): void {
  const keys = Object.keys(tags);
  if (keys.length > MAX_TAGS) {
    throw invalidArgument(
      `${who}: the session would have ${keys.length} tags, at most ${MAX_TAGS}`,
    );
  }
  let bytes = 0;
  for (const key of keys) bytes += Buffer.byteLength(key) + Buffer.byteLength(tags[key] as string);
  if (bytes > MAX_TAGS_BYTES) {
    throw invalidArgument(
      `${who}: the session's tags would take ${bytes} bytes, at most ${MAX_TAGS_BYTES}`,
    );
  }
}

/** `current` with `changes` applied: a key set to its value, or removed by an empty one. */
export function applyTagChanges(current: Tags, changes: Tags): Tags {
  const keys = Object.keys(changes);
  if (keys.length === 0) return current;
  const next: Record<string, string> = { ...current };
  for (const key of keys) {
    const value = changes[key] as string;
    if (value === "") delete next[key];
    else next[key] = value;
  }
  return next;
}

/** The tags of a log whose SessionInfo tag maps are `maps`, in seq order (the root's first). */
export function foldTags(maps: Iterable<Tags>): Tags {
  let tags: Tags = {};
  for (const m of maps) tags = applyTagChanges(tags, m);
  return tags;
}

/** True when `tags` has every pair of `wanted`. */
export function hasTags(tags: Tags, wanted: Tags): boolean {
  return tagTest(wanted)(tags);
}

/**
 * The test "has every pair of `wanted`", its pairs listed once: a listing
 * tests the tags of every session of a workspace against the same filter.
 */
export function tagTest(wanted: Tags): (tags: Tags) => boolean {
  const pairs = Object.entries(wanted);
  return (tags) => {
    for (let i = 0; i < pairs.length; i++) {
      const [key, value] = pairs[i] as [string, string];
      if (tags[key] !== value) return false;
    }
    return true;
  };
}
