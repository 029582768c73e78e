import { type Timestamp, timestampMs } from "@bufbuild/protobuf/wkt";
import type { SessionFilter } from "../../gen/sessiond/v1/store_service_pb.js";
import { invalidArgument } from "../core/errors.js";
import { checkTags, type Tags, tagTest } from "../core/tags.js";
import type { RootRecord, SessionRecord } from "../storage/engine.js";
import { updatedMsOf } from "./meta.js";
import { fold } from "./search/search-text.js";

/**
 * The session filter of ListSessions and SearchEntries, checked once and
 * applied to listing records. Two stages, so that most sessions are
 * dropped before their records are read: `rootMatches` needs only the root
 * (creation time, agent type), `matches` the record for the rest (title,
 * tags, update time). A corrupt session meets no title, tag or agent-type
 * condition (what it says of itself cannot be trusted), but is kept by
 * time ranges on what is known of it.
 */
export interface CheckedFilter {
  /** Case-folded (search-text.ts `fold`, as search folds); "" for no condition. */
  readonly titleContains: string;
  readonly tags: Tags;
  /** Whether a session's tags hold `tags` (core/tags.ts tagTest); undefined when `tags` is empty. */
  readonly holdsTags: ((tags: Tags) => boolean) | undefined;
  readonly createdAfterMs: number | undefined;
  readonly createdBeforeMs: number | undefined;
  readonly updatedAfterMs: number | undefined;
  readonly updatedBeforeMs: number | undefined;
  readonly agentType: string | undefined;
  /** A canonical text of the conditions: a page token is tied to it. */
  readonly key: string;
}

/** Longest title_contains, characters. */
export const MAX_TITLE_FILTER_CHARS = 256;

/**
 * The filter's conditions, checked (INVALID_ARGUMENT naming the field), or
 * undefined when it sets none.
 */
export function checkFilter(filter: SessionFilter | undefined): CheckedFilter | undefined {
  if (filter === undefined) return undefined;
  const title = filter.titleContains;
  if (title.length > MAX_TITLE_FILTER_CHARS) {
    throw invalidArgument(
      `filter.title_contains has ${title.length} characters, at most ${MAX_TITLE_FILTER_CHARS} are allowed`,
    );
  }
  checkTags(filter.tags, "filter.tags", false);
  const tagPairs = Object.keys(filter.tags)
    .sort()
    .map((k) => [k, filter.tags[k]]);
  const checked: Omit<CheckedFilter, "key"> = {
    titleContains: fold(title),
    tags: filter.tags,
    holdsTags: tagPairs.length === 0 ? undefined : tagTest(filter.tags),
    createdAfterMs: ms(filter.createdAfter, "filter.created_after"),
    createdBeforeMs: ms(filter.createdBefore, "filter.created_before"),
    updatedAfterMs: ms(filter.updatedAfter, "filter.updated_after"),
    updatedBeforeMs: ms(filter.updatedBefore, "filter.updated_before"),
    agentType: filter.agentType,
  };
  const none =
    checked.titleContains === "" &&
    tagPairs.length === 0 &&
    checked.createdAfterMs === undefined &&
    checked.createdBeforeMs === undefined &&
    checked.updatedAfterMs === undefined &&
    checked.updatedBeforeMs === undefined &&
    checked.agentType === undefined;
  if (none) return undefined;
  return {
    ...checked,
    key: JSON.stringify([
      checked.titleContains,
      tagPairs,
      checked.createdAfterMs ?? null,
      checked.createdBeforeMs ?? null,
      checked.updatedAfterMs ?? null,
      checked.updatedBeforeMs ?? null,
      checked.agentType ?? null,
    ]),
  };
}

/** A timestamp of the filter in ms; a malformed one is INVALID_ARGUMENT. */
function ms(ts: Timestamp | undefined, field: string): number | undefined {
  if (ts === undefined) return undefined;
  if (ts.nanos < 0 || ts.nanos > 999_999_999) {
    throw invalidArgument(`${field}: nanos ${ts.nanos} is out of range 0..999999999`);
  }
  const value = timestampMs(ts);
  if (!Number.isSafeInteger(Math.floor(value))) {
    throw invalidArgument(`${field}: seconds ${ts.seconds} is out of range`);
  }
  return value;
}

function within(at: number, after: number | undefined, before: number | undefined): boolean {
  return (after === undefined || at >= after) && (before === undefined || at < before);
}

/** The conditions a root alone decides: creation time and agent type. */
export function rootMatches(f: CheckedFilter, root: RootRecord): boolean {
  if (!within(root.createdAtMs, f.createdAfterMs, f.createdBeforeMs)) return false;
  if (f.agentType === undefined) return true;
  const k = root.root?.kind;
  // Stryker disable next-line ConditionalExpression,OptionalChaining: a root whose health is ok is a SessionInfo (the log's first entry), so the kind test only narrows the type
  return root.health === "ok" && k?.case === "sessionInfo" && k.value.agentType === f.agentType;
}

/**
 * The conditions the listing record decides (title, tags, update time), for
 * a session whose root `rootMatches` already took.
 */
export function matches(f: CheckedFilter, record: SessionRecord): boolean {
  // The update time only when a bound asks for it: it needs the root entry,
  // which an engine may decode on demand (JSONL: ~10 µs a session).
  if (
    // Stryker disable next-line ConditionalExpression: cost only: within() is true for unset bounds, so always checking gives the same answers
    (f.updatedAfterMs !== undefined || f.updatedBeforeMs !== undefined) &&
    !within(updatedMsOf(record), f.updatedAfterMs, f.updatedBeforeMs)
  ) {
    return false;
  }
  const trusted = record.health === "ok";
  if (f.titleContains !== "") {
    const title = record.title;
    if (!trusted || title === undefined || !fold(title).includes(f.titleContains)) {
      return false;
    }
  }
  return f.holdsTags === undefined || (trusted && f.holdsTags(record.tags));
}
