import { WORKSPACE_PATTERN } from "../core/ids.js";
import type { RetentionPolicy } from "../core/retention.js";
import type { RetentionConfig } from "../server/index.js";
import { CliError, intFlag } from "./command.js";
import { ageFlag } from "./filter-flags.js";

/**
 * The retention flags of `serve`: a policy for every workspace
 * (--retention-max-age, --retention-keep), overrides per workspace
 * (--retention WS:max-age=30d,keep=100; "none" for a workspace that is
 * never swept), and the sweep interval. No flag: no sweeping.
 */

export const RETENTION_OPTIONS = {
  "retention-max-age": { type: "string" },
  "retention-keep": { type: "string" },
  retention: { type: "string", multiple: true },
  "retention-interval": { type: "string" },
} as const;

export const RETENTION_FLAGS_HELP = `  --retention-max-age AGE     remove top-level sessions (with their subagents) not updated for AGE (30d, 12h, 2w)
  --retention-keep N          keep only the N most recently updated top-level sessions of each workspace
  --retention WS:RULES        per workspace: max-age=AGE,keep=N, or none (repeatable)
  --retention-interval AGE    time between retention sweeps (default 1h)`;

const DEFAULT_INTERVAL_MS = 3_600_000;

export interface RetentionFlagValues {
  "retention-max-age"?: string | undefined;
  "retention-keep"?: string | undefined;
  retention?: string[] | undefined;
  "retention-interval"?: string | undefined;
}

function keep(value: string, flag: string): number {
  const n = intFlag(flag, value, 0);
  if (n < 1) throw new CliError(`--${flag} wants a count of at least 1, got ${value}`, 2);
  return n;
}

/** The policy of one --retention value's rules. */
function rules(text: string, flag: string): RetentionPolicy {
  if (text === "none") return {};
  let policy: RetentionPolicy = {};
  for (const rule of text.split(",")) {
    const [name, value] = rule.split("=", 2);
    if (name === "max-age" && value !== undefined)
      policy = { ...policy, maxAgeMs: ageFlag(value, flag) };
    else if (name === "keep" && value !== undefined)
      policy = { ...policy, keepNewest: keep(value, "retention") };
    else {
      throw new CliError(
        `${flag} wants WS:max-age=AGE,keep=N or WS:none, got the rule ${JSON.stringify(rule)}`,
        2,
      );
    }
  }
  return policy;
}

/** The retention config of the flags, or undefined when none is given. */
export function retentionOf(v: RetentionFlagValues): RetentionConfig | undefined {
  const all: RetentionPolicy = {
    maxAgeMs:
      v["retention-max-age"] === undefined
        ? undefined
        : ageFlag(v["retention-max-age"], "--retention-max-age"),
    keepNewest:
      v["retention-keep"] === undefined ? undefined : keep(v["retention-keep"], "retention-keep"),
  };
  const workspaces: Record<string, RetentionPolicy> = {};
  for (const value of v.retention ?? []) {
    const colon = value.indexOf(":");
    const ws = value.slice(0, colon);
    if (colon <= 0 || !WORKSPACE_PATTERN.test(ws)) {
      throw new CliError(
        `--retention wants WS:RULES with a workspace name, got ${JSON.stringify(value)}`,
        2,
      );
    }
    workspaces[ws] = rules(value.slice(colon + 1), "--retention");
  }
  const any =
    all.maxAgeMs !== undefined ||
    all.keepNewest !== undefined ||
    Object.keys(workspaces).length > 0;
  if (!any) return undefined;
  const intervalMs =
    v["retention-interval"] === undefined
      ? DEFAULT_INTERVAL_MS
      : ageFlag(v["retention-interval"], "--retention-interval");
  return { all, workspaces, intervalMs };
}
