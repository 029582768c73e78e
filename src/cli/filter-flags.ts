import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { SessionFilterSchema } from "../../gen/sessiond/v1/store_service_pb.js";
import { CliError } from "./command.js";

/**
 * The flags that narrow a listing or a search (`ls`, `search`), turned into
 * a SessionFilter, and `--tag` for `new`. Times are RFC 3339
 * (2026-11-30T08:00:00Z, or a date: 2026-11-30 is its midnight UTC) or an
 * age relative to now (90m, 12h, 7d, 2w).
 */

export const FILTER_OPTIONS = {
  title: { type: "string" },
  tag: { type: "string", multiple: true },
  "created-after": { type: "string" },
  "created-before": { type: "string" },
  "updated-after": { type: "string" },
  "updated-before": { type: "string" },
  "agent-type": { type: "string" },
} as const;

export const FILTER_FLAGS_HELP = `  --title TEXT            the title contains TEXT (case-insensitive)
  --tag KEY=VALUE         has this tag (repeat: all of them)
  --created-after TIME    created at or after TIME (RFC 3339, a date, or an age: 90m, 12h, 7d, 2w)
  --created-before TIME   created before TIME
  --updated-after TIME    newest entry at or after TIME
  --updated-before TIME   newest entry before TIME
  --agent-type TYPE       subagents of this agent type (with --parent)`;

export interface FilterFlagValues {
  title?: string | undefined;
  tag?: string[] | undefined;
  "created-after"?: string | undefined;
  "created-before"?: string | undefined;
  "updated-after"?: string | undefined;
  "updated-before"?: string | undefined;
  "agent-type"?: string | undefined;
}

/** KEY=VALUE flags as a map; the server checks keys and values. */
export function tagFlags(
  values: readonly string[] | undefined,
  flag = "--tag",
): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const v of values ?? []) {
    const eq = v.indexOf("=");
    if (eq <= 0) throw new CliError(`${flag} wants KEY=VALUE, got ${JSON.stringify(v)}`, 2);
    tags[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return tags;
}

const AGE = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** An age (90s, 90m, 12h, 7d, 2w) in ms, or undefined when `value` is no age. */
function ageMs(value: string): number | undefined {
  const age = AGE.exec(value);
  return age === null ? undefined : Number(age[1]) * UNIT_MS[age[2] as keyof typeof UNIT_MS];
}

/** An age flag (90m, 12h, 7d, 2w) in ms. */
export function ageFlag(value: string, flag: string): number {
  const ms = ageMs(value);
  if (ms === undefined || ms === 0) {
    throw new CliError(
      `${flag} wants an age such as 90m, 12h, 30d or 2w, got ${JSON.stringify(value)}`,
      2,
    );
  }
  return ms;
}

/** A time flag in ms since the epoch: an age before `now`, or an RFC 3339 time or date (a date is its midnight UTC, as Date.parse reads it). */
export function timeFlag(value: string, flag: string, now: number): number {
  const age = ageMs(value);
  if (age !== undefined) return now - age;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) {
    throw new CliError(
      `${flag} wants an RFC 3339 time, a date or an age (90m, 12h, 7d, 2w), got ${JSON.stringify(value)}`,
      2,
    );
  }
  return ms;
}

/** The SessionFilter of the flags (every field unset when no flag is given). */
export function filterOf(
  v: FilterFlagValues,
  now: number,
): MessageInitShape<typeof SessionFilterSchema> {
  const at = (flag: keyof FilterFlagValues) => {
    const value = v[flag];
    return typeof value === "string"
      ? timestampFromMs(timeFlag(value, `--${flag}`, now))
      : undefined;
  };
  return {
    titleContains: v.title ?? "",
    tags: tagFlags(v.tag),
    createdAfter: at("created-after"),
    createdBefore: at("created-before"),
    updatedAfter: at("updated-after"),
    updatedBefore: at("updated-before"),
    agentType: v["agent-type"],
  };
}
